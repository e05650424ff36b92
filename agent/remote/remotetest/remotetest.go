// Package remotetest is a stand-in for the Nodius server's assistant, written to the
// real protocol (docs/protocol.md, recorded in the
// transcripts of agent/remote/testdata): a WebSocket that accepts nothing before
// {"type":"authenticate","token"} (authResult; a bad token closes 4001, silence
// 4002), strict ai:chat / ai:resume / ai:interrupt schemas answered with the
// server's own ai:error texts, the frames ai:token, ai:tool_start, ai:tool_result,
// ai:usage, ai:tool_limit, ai:complete (proposals and the tool limit as JSON in
// fullText), ai:error, and ai:apply_action before the continued stream of an
// approval. Like the real server, ai:interrupt aborts every running session of
// every connection, and a disconnect aborts that connection's sessions. HTTP: POST
// /api/ai/threads (strict {graphKey?, contextType?}, hasPendingAction), GET
// /api/ai/thread/:id/messages, DELETE /api/ai/thread/:id, and POST
// /api/graph/create as requestWorkFlow.ts answers it (the web client calls it to
// carry out an approved create_graph of home mode, graph key "home"). It answers
// from scripts the tests write. POST /api/sync answers where the socket of a graph
// is (this stand-in, or a peer it routes the graph to: RouteTo). With Editing set
// it also speaks the editing protocol on the same sockets.
package remotetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// Request is a client request the server accepted, as received.
type Request struct {
	Via         string // "ws" or "http"
	Type        string // ai:chat, ai:resume, ai:interrupt, threads, messages, delete
	ID          int64
	GraphKey    string
	ContextType string
	Message     string
	ThreadID    string
	Approved    bool
	Feedback    string
	Raw         string // the frame or body as received
	// Authorization is the header of an HTTP request (recorded for
	// /api/graph/create, to check which token reached this server).
	Authorization string
}

// Created is a graph (or HTML class) POST /api/graph/create made.
type Created struct {
	Key       string // the graph's key (an HTML class's linked graph)
	HTMLKey   string // the HTML class's key ("" for a graph)
	Name      string // the graph's name (an HTML class's graph is "NAME-graph")
	Workspace string
}

// Script answers one ai:chat or ai:resume. It runs in its own goroutine; the
// Session's senders report false once the run was aborted or its client left.
type Script func(s *Session)

// Thread is one of the server's threads.
type Thread struct {
	ID       string
	GraphKey string
	// ContextType is the ai:chat's that made it ("graph" when it named none).
	ContextType string
	UserID      string
	History     []map[string]any
	Pending     *Pending
	Created     time.Time
	Updated     time.Time
}

// Pending is what a thread waits on: a proposal (Kind "hitl", the default) or the
// tool-round limit (Kind "tool_limit").
type Pending struct {
	Kind     string
	ToolCall map[string]any  // {id, name, args}
	Action   json.RawMessage // proposedAction
	// Apply is the ai:apply_action's action sent on approval (nil: none, as for
	// configure_node_type, which the server writes itself).
	Apply json.RawMessage
}

// Server is the stand-in. Its exported fields are set before it serves (in New's
// configure functions); the scripts may change at any time through SetChat and
// SetResume.
type Server struct {
	URL   string // http://127.0.0.1:PORT
	WSURL string // ws://127.0.0.1:PORT/ws: pass it as --ws-url / NODIUS_AI_WS_URL

	// Token, when set, is the only JWT accepted; empty, any non-empty token is.
	Token string
	// AuthTimeout is how long a socket may stay silent before authenticating
	// (default 15 s, as the real server).
	AuthTimeout time.Duration
	// UserID is the authenticated user's id; the authResult names it as the user's
	// one workspace, as the real server does for a user without workspaces.
	UserID string
	// CreateStatus, when set, is the status POST /api/graph/create answers (after
	// the auth check) with {"error": CreateError}: a refusal such as the real 403
	// "Access denied to workspace 'W'" or a 500. Once serving, use SetCreateRefusal.
	CreateStatus int
	CreateError  string
	// Editing, when set, speaks the editing protocol on the same sockets (frames
	// that are not ai:*) and serves the graph endpoints, as the real server does: an
	// approved ai:apply_action can then be applied and watched by a second client.
	// Its users' tokens must be accepted here too.
	Editing *servertest.Server

	srv *httptest.Server

	mu          sync.Mutex
	chat        Script
	resume      Script
	hang        time.Duration
	threads     map[string]*Thread
	order       []string
	received    []Request
	violations  []string
	interrupts  []Request
	sessions    map[*Session]bool
	authFails   int
	disconnects int
	conns       int
	created     []Created
	syncs       []string           // the instance ids /api/sync was asked about
	peers       map[string]*Server // instances another stand-in manages (RouteTo)
}

// New starts a stand-in on loopback; it stops when the test ends.
func New(t testing.TB, configure ...func(*Server)) *Server {
	s := NewHandler()
	for _, c := range configure {
		c(s)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	s.WSURL = "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws"
	t.Cleanup(s.srv.Close)
	return s
}

// NewHandler returns a stand-in not yet listening: serve it with net/http (the
// fakenodius command does).
func NewHandler() *Server {
	return &Server{threads: map[string]*Thread{}, sessions: map[*Session]bool{}, UserID: "d0ceef773d53", peers: map[string]*Server{}}
}

// SetChat sets the script that answers ai:chat (nil: a one-token answer).
func (s *Server) SetChat(f Script) {
	s.mu.Lock()
	s.chat = f
	s.mu.Unlock()
}

// SetResume sets the script that answers ai:resume (nil: "done").
func (s *Server) SetResume(f Script) {
	s.mu.Lock()
	s.resume = f
	s.mu.Unlock()
}

// SetHang makes the server stop reading a connection for d after each request:
// it seems hung, pings get no pong (0: never).
func (s *Server) SetHang(d time.Duration) {
	s.mu.Lock()
	s.hang = d
	s.mu.Unlock()
}

// ServeHTTP serves the WebSocket (at /ws, and at / as the real server's plain HTTP
// mode does on its own port) and the HTTP endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.serveWS(w, r)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/ai/threads":
		s.serveThreads(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/ai/thread/") && strings.HasSuffix(r.URL.Path, "/messages"):
		s.serveMessages(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/ai/thread/"), "/messages"))
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/ai/thread/"):
		s.serveDelete(w, r, strings.TrimPrefix(r.URL.Path, "/api/ai/thread/"))
	case r.Method == http.MethodPost && r.URL.Path == "/api/graph/create":
		s.serveCreate(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/api/auth/me":
		s.serveMe(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/api/sync":
		s.serveSync(w, r)
	default:
		if s.Editing != nil {
			s.Editing.Handler().ServeHTTP(w, r)
			return
		}
		httpError(w, http.StatusNotFound, "Not found")
	}
}

// serveSync answers POST /api/sync as the real server does: where the socket of
// an instance is. An instance another stand-in manages (RouteTo) is answered with
// that peer's {host, port}, without secure or path, as a cluster peer is; any
// other with this stand-in's own address (the one the request came to), and a
// graph or a node type is then claimed by its editing stand-in, if any
// (registrations on it are refused until it is).
func (s *Server) serveSync(w http.ResponseWriter, r *http.Request) {
	if !s.httpAuth(w, r) {
		return
	}
	var body struct {
		InstanceID string `json:"instanceId"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.InstanceID == "" {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.syncs = append(s.syncs, body.InstanceID)
	peer := s.peers[body.InstanceID]
	s.mu.Unlock()
	if peer != nil {
		u, _ := url.Parse(peer.URL)
		port, _ := strconv.Atoi(u.Port())
		writeJSON(w, map[string]any{"host": u.Hostname(), "port": port})
		return
	}
	if key, ok := strings.CutPrefix(body.InstanceID, "graph-"); ok && s.Editing != nil {
		s.Editing.Claim(key)
	}
	if key, ok := strings.CutPrefix(body.InstanceID, "nodeConfig-"); ok && s.Editing != nil {
		s.Editing.ClaimNodeConfig(key)
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "no host")
		return
	}
	p, _ := strconv.Atoi(port)
	writeJSON(w, map[string]any{"host": host, "port": p, "secure": false})
}

// Syncs lists the instance ids POST /api/sync was asked about, in order.
func (s *Server) Syncs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.syncs...)
}

// RouteTo makes peer the manager of the graph, as in a cluster: /api/sync here
// answers peer's address, and this stand-in's editing side (if any) refuses
// registrations on the graph while the peer's accepts them.
func (s *Server) RouteTo(graphKey string, peer *Server) {
	s.mu.Lock()
	s.peers["graph-"+graphKey] = peer
	s.mu.Unlock()
	if s.Editing != nil {
		s.Editing.Unclaim(graphKey)
	}
	if peer.Editing != nil {
		peer.Editing.Claim(graphKey)
	}
}

// threadID is a new 64-hex thread id, as the real server makes them.
func threadID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewThread adds a thread (a web client's), waiting on pending when not nil. A
// proposal's tool call (ToolCall with a name) ends the history, as the assistant's
// message that made it does on the real server.
func (s *Server) NewThread(graphKey string, pending *Pending, history ...map[string]any) *Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pending != nil && pending.ToolCall["name"] != nil {
		args, _ := json.Marshal(pending.ToolCall["args"])
		history = append(history, map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": pending.ToolCall["id"], "type": "function", "function": map[string]any{"name": pending.ToolCall["name"], "arguments": string(args)}}}})
	}
	return s.newThreadLocked("", graphKey, pending, history)
}

func (s *Server) newThreadLocked(id, graphKey string, pending *Pending, history []map[string]any) *Thread {
	if id == "" {
		id = threadID()
	}
	now := time.Now()
	th := &Thread{ID: id, GraphKey: graphKey, ContextType: "graph", UserID: s.UserID, History: history, Pending: pending, Created: now, Updated: now}
	s.threads[th.ID] = th
	s.order = append(s.order, th.ID)
	return th
}

// Thread returns a copy of a server thread (nil when absent).
func (s *Server) Thread(id string) *Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.threads[id]
	if !ok {
		return nil
	}
	c := *th
	c.History = append([]map[string]any(nil), th.History...)
	return &c
}

// Received lists the accepted requests, in order.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.received...)
}

// Violations lists the frames and bodies refused by validation.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Interrupts lists the ai:interrupt frames received.
func (s *Server) Interrupts() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.interrupts...)
}

// AuthFailures counts the sockets refused for their token.
func (s *Server) AuthFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authFails
}

// Disconnects counts the WebSocket connections that ended.
func (s *Server) Disconnects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disconnects
}

// Conns counts the WebSocket connections opened.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func (s *Server) violation(format string, args ...any) {
	s.mu.Lock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.received = append(s.received, r)
	s.mu.Unlock()
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// httpAuth checks the bearer token as the real RequestAuth does.
func (s *Server) httpAuth(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get("Authorization")
	msg := ""
	switch {
	case h == "":
		msg = "Missing Authorization header"
	case !strings.HasPrefix(h, "Bearer ") || !s.tokenOK(strings.TrimPrefix(h, "Bearer ")):
		msg = "Invalid token"
	}
	if msg != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "Unauthorized", "message": msg, "loginUrl": "/login"})
		return false
	}
	return true
}

func (s *Server) tokenOK(tok string) bool {
	if tok == "" {
		return false
	}
	return s.Token == "" || tok == s.Token
}

// decodeStrict reads one JSON object into v, refusing unknown fields (zod .strict()).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

var contextTypes = map[string]bool{"graph": true, "nodeConfig": true, "htmlClass": true, "home": true}

func (s *Server) serveThreads(w http.ResponseWriter, r *http.Request) {
	if !s.httpAuth(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	var in struct {
		GraphKey    *string `json:"graphKey"`
		ContextType *string `json:"contextType"`
	}
	if err := decodeStrict(body, &in); err != nil || in.ContextType != nil && !contextTypes[*in.ContextType] {
		s.violation("POST /api/ai/threads: invalid body %s", body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": "Invalid request body", "details": []any{}})
		return
	}
	s.record(Request{Via: "http", Type: "threads", GraphKey: str(in.GraphKey), Raw: string(body)})
	s.mu.Lock()
	list := []map[string]any{}
	for i := len(s.order) - 1; i >= 0; i-- {
		th := s.threads[s.order[i]]
		if th == nil || in.GraphKey != nil && th.GraphKey != *in.GraphKey {
			continue
		}
		msgs, title := 0, "New conversation"
		for _, m := range th.History {
			if m["role"] == "user" || m["role"] == "assistant" {
				msgs++
			}
		}
		list = append(list, map[string]any{
			"threadId": th.ID, "graphKey": th.GraphKey, "contextType": th.ContextType, "title": title,
			"totalTokens": 0, "totalCost": 0, "provider": "", "model": "", "messageCount": msgs, "toolCallCount": 0,
			"createdTime": th.Created.UnixMilli(), "lastUpdatedTime": th.Updated.UnixMilli(), "hasPendingAction": th.Pending != nil,
		})
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"threads": list})
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, id string) {
	if !s.httpAuth(w, r) {
		return
	}
	s.record(Request{Via: "http", Type: "messages", ThreadID: id})
	s.mu.Lock()
	th, ok := s.threads[id]
	var hist []map[string]any
	if ok {
		hist = append([]map[string]any{{"role": "system", "content": "Tu es un assistant IA pour l'edition de workflows Nodius."}}, th.History...)
	}
	s.mu.Unlock()
	if !ok {
		httpError(w, http.StatusNotFound, "Thread not found")
		return
	}
	writeJSON(w, map[string]any{"threadId": id, "conversationHistory": hist})
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, id string) {
	if !s.httpAuth(w, r) {
		return
	}
	s.record(Request{Via: "http", Type: "delete", ThreadID: id})
	s.mu.Lock()
	_, ok := s.threads[id]
	delete(s.threads, id)
	s.mu.Unlock()
	if !ok {
		httpError(w, http.StatusNotFound, "Thread not found")
		return
	}
	writeJSON(w, map[string]any{"deleted": true})
}

// serveMe answers GET /api/auth/me as AuthManager.meHandler does: the token's user
// ({success, user:{userId, username, roles, workspaces}}), or 401 {success:false,
// error}.
func (s *Server) serveMe(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get("Authorization")
	s.record(Request{Via: "http", Type: "me", Authorization: h})
	tok := strings.TrimPrefix(h, "Bearer ")
	if !s.tokenOK(tok) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg := "Invalid token"
		if tok == "" {
			msg = "Token required"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"success": false, "error": msg})
		return
	}
	writeJSON(w, map[string]any{"success": true, "user": map[string]any{
		"userId": s.UserID, "username": "alice", "roles": []string{"editor"}, "workspaces": []string{s.UserID}}})
}

// SetCreateRefusal makes POST /api/graph/create answer status with {"error": msg}
// after the auth check (0: create again).
func (s *Server) SetCreateRefusal(status int, msg string) {
	s.mu.Lock()
	s.CreateStatus, s.CreateError = status, msg
	s.mu.Unlock()
}

// Created lists the graphs POST /api/graph/create made, in order.
func (s *Server) Created() []Created {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Created(nil), s.created...)
}

// serveCreate answers POST /api/graph/create as requestWorkFlow.ts does: the
// workspace is body.graph.workspace ?? body.htmlClass.workspace (400 "Missing
// workspace"), one of the user's (403 "Access denied to workspace 'W'"); a graph
// gets a Starter and a Return node, an HTML class a linked graph "NAME-graph"; the
// answer is the graph document (its _key) in both cases; neither is a 500 with an
// empty body.
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request) {
	if !s.httpAuth(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.record(Request{Via: "http", Type: "create", Raw: string(body), Authorization: r.Header.Get("Authorization")})
	var in struct {
		Graph *struct {
			Name      string `json:"name"`
			Workspace string `json:"workspace"`
		} `json:"graph"`
		HTMLClass *struct {
			Name      string `json:"name"`
			Workspace string `json:"workspace"`
		} `json:"htmlClass"`
	}
	if json.Unmarshal(body, &in) != nil {
		w.WriteHeader(http.StatusBadRequest) // the JSON body parser's refusal
		return
	}
	ws := ""
	switch {
	case in.Graph != nil && in.Graph.Workspace != "":
		ws = in.Graph.Workspace
	case in.HTMLClass != nil:
		ws = in.HTMLClass.Workspace
	}
	if ws == "" {
		httpError(w, http.StatusBadRequest, "Missing workspace")
		return
	}
	if ws != s.UserID {
		httpError(w, http.StatusForbidden, fmt.Sprintf("Access denied to workspace '%s'", ws))
		return
	}
	s.mu.Lock()
	status, msg := s.CreateStatus, s.CreateError
	s.mu.Unlock()
	if status != 0 {
		httpError(w, status, msg)
		return
	}
	c := Created{Key: threadID()[:12], Workspace: ws}
	switch {
	case in.HTMLClass != nil:
		c.HTMLKey, c.Name = threadID()[:12], in.HTMLClass.Name+"-graph"
	case in.Graph != nil:
		c.Name = in.Graph.Name
	default:
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.created = append(s.created, c)
	s.mu.Unlock()
	now := time.Now().UnixMilli()
	doc := map[string]any{"_key": c.Key, "name": c.Name, "category": "default", "version": 0, "permission": 0,
		"workspace": ws, "createdTime": now, "lastUpdatedTime": now, "sheetsList": map[string]string{"0": "main"}}
	if c.HTMLKey != "" {
		doc["htmlKeyLinked"] = c.HTMLKey
	}
	writeJSON(w, doc)
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// The real zod schemas (wsAIController.ts).
type chatWire struct {
	Type        *string  `json:"type"`
	ID          *float64 `json:"_id"`
	GraphKey    *string  `json:"graphKey"`
	Message     *string  `json:"message"`
	ThreadID    *string  `json:"threadId"`
	ContextType *string  `json:"contextType"`
}

type resumeWire struct {
	Type     *string  `json:"type"`
	ID       *float64 `json:"_id"`
	ThreadID *string  `json:"threadId"`
	Approved *bool    `json:"approved"`
	Feedback *string  `json:"feedback"`
}

type interruptWire struct {
	Type     *string  `json:"type"`
	ID       *float64 `json:"_id"`
	ThreadID *string  `json:"threadId"`
}

// parseAI validates one ai:* frame; the error is the server's ai:error text.
func parseAI(typ string, data []byte) (Request, error) {
	r := Request{Via: "ws", Type: typ, Raw: string(data)}
	switch typ {
	case "ai:chat":
		var m chatWire
		if decodeStrict(data, &m) != nil || m.ID == nil || m.GraphKey == nil || *m.GraphKey == "" || m.Message == nil || *m.Message == "" ||
			m.ContextType != nil && !contextTypes[*m.ContextType] {
			return r, errors.New("Invalid ai:chat message")
		}
		r.ID, r.GraphKey, r.Message, r.ThreadID, r.ContextType = int64(*m.ID), *m.GraphKey, *m.Message, str(m.ThreadID), str(m.ContextType)
	case "ai:resume":
		var m resumeWire
		if decodeStrict(data, &m) != nil || m.ID == nil || m.ThreadID == nil || *m.ThreadID == "" || m.Approved == nil {
			return r, errors.New("Invalid ai:resume message")
		}
		r.ID, r.ThreadID, r.Approved, r.Feedback = int64(*m.ID), *m.ThreadID, *m.Approved, str(m.Feedback)
	case "ai:interrupt":
		var m interruptWire
		if decodeStrict(data, &m) != nil || m.ID == nil || m.ThreadID == nil || *m.ThreadID == "" {
			return r, errors.New("") // the real server does not answer an invalid interrupt
		}
		r.ID, r.ThreadID = int64(*m.ID), *m.ThreadID
	default:
		return r, errors.New("Unknown AI message type: " + typ)
	}
	return r, nil
}

// wsConn is one client connection: writes are serialised.
type wsConn struct {
	s   *Server
	c   *websocket.Conn
	ctx context.Context
	wmu sync.Mutex
}

func (wc *wsConn) send(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return wc.sendRaw(b)
}

func (wc *wsConn) sendRaw(b []byte) bool {
	wc.wmu.Lock()
	defer wc.wmu.Unlock()
	ctx, cancel := context.WithTimeout(wc.ctx, 5*time.Second)
	defer cancel()
	return wc.c.Write(ctx, websocket.MessageText, b) == nil
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	wc := &wsConn{s: s, c: c, ctx: ctx}
	s.mu.Lock()
	s.conns++
	s.mu.Unlock()
	defer func() {
		// Disconnect cleanup: the sessions of this socket, and no other, stop.
		s.mu.Lock()
		for ss := range s.sessions {
			if ss.conn == wc {
				ss.stop()
			}
		}
		s.disconnects++
		s.mu.Unlock()
		cancel()
		c.CloseNow()
	}()
	authTimeout := s.AuthTimeout
	if authTimeout <= 0 {
		authTimeout = 15 * time.Second
	}
	authed := false
	var editor *servertest.Editor
	defer func() {
		if editor != nil {
			editor.Leave()
		}
	}()
	deadline := time.AfterFunc(authTimeout, func() {
		if !authed {
			wc.send(map[string]any{"type": "authResult", "success": false, "error": "Authentication timeout"})
			c.Close(4002, "Authentication timeout")
		}
	})
	defer deadline.Stop()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var head struct {
			Type  string `json:"type"`
			Token string `json:"token"`
			ID    any    `json:"_id"`
		}
		if json.Unmarshal(data, &head) != nil {
			wc.send(map[string]any{"error": "Invalid JSON"})
			continue
		}
		if head.Type == "authenticate" {
			if !s.tokenOK(head.Token) {
				s.mu.Lock()
				s.authFails++
				s.mu.Unlock()
				wc.send(map[string]any{"type": "authResult", "success": false, "error": "Invalid token"})
				c.Close(4001, "Authentication failed")
				return
			}
			authed = true
			if s.Editing != nil {
				editor, _ = s.Editing.Attach(c, head.Token)
			}
			wc.send(map[string]any{"type": "authResult", "success": true, "userId": s.UserID, "username": "alice", "workspaces": []string{s.UserID}})
			continue
		}
		if !authed {
			wc.send(map[string]any{"type": "authResult", "success": false, "error": "Not authenticated. Send authenticate message first."})
			continue
		}
		if !strings.HasPrefix(head.Type, "ai:") {
			if editor != nil && !editor.Handle(data) {
				return // an edit without registering: the server closes the socket
			}
			continue // without Editing, the editing protocol is not spoken here
		}
		req, err := parseAI(head.Type, data)
		if err != nil {
			s.violation("%s: %s", head.Type, data)
			if err.Error() != "" {
				id := head.ID
				if id == nil {
					id = 0
				}
				wc.send(map[string]any{"type": "ai:error", "_id": id, "error": err.Error()})
			}
			continue
		}
		if req.Type == "ai:interrupt" {
			// The real server aborts every active session, whoever runs it (05c).
			s.mu.Lock()
			s.interrupts = append(s.interrupts, req)
			for ss := range s.sessions {
				ss.stop()
			}
			s.mu.Unlock()
			continue
		}
		s.record(req)
		rctx, stop := context.WithCancel(ctx)
		ss := &Session{Req: req, ctx: rctx, stop: stop, conn: wc, s: s}
		s.mu.Lock()
		s.sessions[ss] = true
		s.mu.Unlock()
		go func() {
			defer func() {
				s.mu.Lock()
				delete(s.sessions, ss)
				s.mu.Unlock()
				stop()
			}()
			s.run(ss)
		}()
		s.mu.Lock()
		hang := s.hang
		s.mu.Unlock()
		if hang > 0 {
			select {
			case <-time.After(hang):
			case <-ctx.Done():
			}
		}
	}
}

// run resolves the thread and plays the script.
func (s *Server) run(ss *Session) {
	req := ss.Req
	s.mu.Lock()
	chat, resume := s.chat, s.resume
	var pending *Pending
	if req.Type == "ai:chat" {
		th := s.threads[req.ThreadID]
		switch {
		case th == nil:
			// A client-chosen id that does not exist becomes the new thread's id (02).
			th = s.newThreadLocked(req.ThreadID, req.GraphKey, nil, nil)
			if req.ContextType != "" {
				th.ContextType = req.ContextType
			}
		case th.GraphKey != req.GraphKey:
			s.mu.Unlock()
			ss.Error("Thread does not belong to this graph/workspace")
			return
		}
		th.History = append(th.History, map[string]any{"role": "user", "content": req.Message})
		ss.Thread = th
	} else {
		ss.Thread = s.threads[req.ThreadID]
		if ss.Thread != nil {
			pending = ss.Thread.Pending
			ss.Thread.Pending = nil
		}
	}
	s.mu.Unlock()
	if req.Type == "ai:resume" {
		if ss.Thread == nil {
			ss.Error("Thread not found")
			return
		}
		if pending == nil {
			ss.Error("No pending action to approve/reject")
			return
		}
		ss.Decided = pending
		if req.Approved && pending.Kind != "tool_limit" && len(pending.Apply) > 0 {
			// Sent before the continued answer: the approving client applies it.
			ss.send(map[string]any{"type": "ai:apply_action", "action": pending.Apply})
		}
		if resume != nil {
			resume(ss)
		} else {
			ss.Token("done")
			ss.Complete("done")
		}
		return
	}
	if chat != nil {
		chat(ss)
	} else {
		ss.Token("ok")
		ss.Complete("ok")
	}
}

// Session is one run being answered.
type Session struct {
	Req     Request
	Thread  *Thread
	Decided *Pending // on resume: what is being decided

	s    *Server
	ctx  context.Context
	stop context.CancelFunc
	conn *wsConn
}

// Aborted reports whether the run was aborted (an interrupt, its client left).
func (ss *Session) Aborted() bool { return ss.ctx.Err() != nil }

// Done is closed when the run is aborted.
func (ss *Session) Done() <-chan struct{} { return ss.ctx.Done() }

func (ss *Session) send(v map[string]any) bool {
	if ss.Aborted() {
		return false // like the server's callbacks: nothing is sent once aborted
	}
	v["_id"] = ss.Req.ID
	return ss.conn.send(v)
}

// Token streams a piece of the answer.
func (ss *Session) Token(t string) bool {
	return ss.send(map[string]any{"type": "ai:token", "token": t})
}

// ToolStart announces a tool call (no arguments: the real server sends none).
func (ss *Session) ToolStart(id, name string) bool {
	return ss.send(map[string]any{"type": "ai:tool_start", "toolCallId": id, "toolName": name})
}

// ToolResult sends a tool's result (TOON text on the real server).
func (ss *Session) ToolResult(id, result string) bool {
	return ss.send(map[string]any{"type": "ai:tool_result", "toolCallId": id, "result": result})
}

// Usage reports one model call's tokens.
func (ss *Session) Usage(prompt, completion int) bool {
	return ss.send(map[string]any{"type": "ai:usage", "usage": map[string]int{
		"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion}})
}

// Complete ends the run with fullText and keeps the answer in the thread.
func (ss *Session) Complete(fullText string) bool {
	ss.s.mu.Lock()
	ss.Thread.History = append(ss.Thread.History, map[string]any{"role": "assistant", "content": fullText})
	ss.Thread.Updated = time.Now()
	ss.s.mu.Unlock()
	return ss.send(map[string]any{"type": "ai:complete", "threadId": ss.Thread.ID, "fullText": fullText})
}

// Propose stops the run at a proposal, as ProposeFull without code diffs, and
// with no change to apply on approval.
func (ss *Session) Propose(callID, tool string, args map[string]any, action string) bool {
	return ss.ProposeFull(callID, tool, args, action, "", "")
}

// ProposeFull stops the run at a proposal: the thread waits on it and the client
// gets ai:tool_start, then an ai:complete whose fullText is the interrupt JSON.
// codeDiffs ("" for none) goes beside proposedAction; apply ("" for none) is the
// ai:apply_action's action sent when it is approved.
func (ss *Session) ProposeFull(callID, tool string, args map[string]any, action, codeDiffs, apply string) bool {
	tc := map[string]any{"id": callID, "name": tool, "args": args}
	p := &Pending{Kind: "hitl", ToolCall: tc, Action: json.RawMessage(action)}
	if apply != "" {
		p.Apply = json.RawMessage(apply)
	}
	ss.s.mu.Lock()
	ss.Thread.Pending = p
	ss.Thread.Updated = time.Now()
	argText, _ := json.Marshal(args)
	ss.Thread.History = append(ss.Thread.History, map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": callID, "type": "function", "function": map[string]any{"name": tool, "arguments": string(argText)}}}})
	ss.s.mu.Unlock()
	if !ss.ToolStart(callID, tool) {
		return false
	}
	full := map[string]any{"type": "interrupt", "proposedAction": json.RawMessage(action), "toolCall": tc}
	if codeDiffs != "" {
		full["codeDiffs"] = json.RawMessage(codeDiffs)
	}
	b, _ := json.Marshal(full)
	return ss.send(map[string]any{"type": "ai:complete", "threadId": ss.Thread.ID, "fullText": string(b)})
}

// ToolLimit stops the run at the tool-round limit: ai:tool_limit, then the
// ai:complete holding {"type":"tool_limit",…}.
func (ss *Session) ToolLimit(rounds, maxExtended int) bool {
	ss.s.mu.Lock()
	ss.Thread.Pending = &Pending{Kind: "tool_limit"}
	ss.s.mu.Unlock()
	if !ss.send(map[string]any{"type": "ai:tool_limit", "roundsUsed": rounds, "maxExtended": maxExtended}) {
		return false
	}
	b, _ := json.Marshal(map[string]any{"type": "tool_limit", "roundsUsed": rounds, "maxExtended": maxExtended})
	return ss.send(map[string]any{"type": "ai:complete", "threadId": ss.Thread.ID, "fullText": string(b)})
}

// Error ends the run with an ai:error.
func (ss *Session) Error(msg string) bool {
	return ss.send(map[string]any{"type": "ai:error", "error": msg})
}

// Raw sends bytes as they are (a malformed message).
func (ss *Session) Raw(b string) bool { return ss.conn.sendRaw([]byte(b)) }

// Drop cuts the connection without a close handshake.
func (ss *Session) Drop() { ss.conn.c.CloseNow() }

// Sleep waits d; false when the run was aborted meanwhile.
func (ss *Session) Sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ss.ctx.Done():
		return false
	}
}

// Close stops the server.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}
