// Package remotetest is a stand-in for a Nodius server's assistant, written from the
// server's protocol: the WebSocket /ws with ai:chat, ai:resume and
// ai:interrupt in and ai:token, ai:tool_start, ai:tool_result, ai:complete, ai:error
// out; and the HTTP endpoints POST /api/ai/chat, POST /api/ai/resume, POST
// /api/ai/threads, DELETE /api/ai/thread/:id (plus GET /api/ai/memory/:graph, the
// server: data source's read). It validates what it receives as strictly as the
// server does (unknown fields refused), and answers from scripts the tests write.
package remotetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Request is a client request the server accepted, as received.
type Request struct {
	Via      string // "ws" or "http"
	Type     string // ai:chat, ai:resume, ai:interrupt, threads, delete
	ID       int64
	GraphKey string
	Message  string
	ThreadID string
	Approved bool
	Feedback string
	Token    string
}

// Script answers one ai:chat or ai:resume. It runs in its own goroutine; the
// Session's senders report false once the run was interrupted or its client left.
type Script func(s *Session)

// Thread is one of the server's threads.
type Thread struct {
	ID       string
	GraphKey string
	UserID   string
	History  []map[string]any
	Pending  *Pending
	Created  time.Time
	Updated  time.Time
}

// Pending is the proposal a thread waits on.
type Pending struct {
	ToolCall map[string]any
	Action   json.RawMessage
}

// Server is the stand-in. Its exported fields are set before it serves (in New's
// configure functions); the scripts that answer may change at any time, through
// SetChat, SetResume and SetHang, which the handlers read under the same lock.
type Server struct {
	URL string // http://127.0.0.1:PORT

	// Token, when set, is the only JWT accepted: another (or none, with
	// RequireToken) is an ai:error auth_error on the WebSocket and a 401 over HTTP.
	Token        string
	RequireToken bool
	// Memory holds GET /api/ai/memory/{graph} bodies.
	Memory map[string]json.RawMessage

	srv *httptest.Server

	mu          sync.Mutex
	chat        Script
	resume      Script
	hang        time.Duration
	threads     map[string]*Thread
	order       []string
	n           int
	received    []Request
	violations  []string
	interrupts  []Request
	disconnects int
	conns       int
}

// New starts a stand-in on loopback; it stops when the test ends. Each configure
// function runs before the server listens: fields set after New race with the
// handlers (a request from another process gives the race detector no
// happens-before edge).
func New(t testing.TB, configure ...func(*Server)) *Server {
	s := NewHandler()
	for _, c := range configure {
		c(s)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// NewHandler returns a stand-in not yet listening: serve it with net/http (the
// fakenodius command does).
func NewHandler() *Server {
	return &Server{threads: map[string]*Thread{}, Memory: map[string]json.RawMessage{}}
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

// SetHang makes the server stop reading a connection for d after its first
// request: it seems hung, pings get no pong (0: never).
func (s *Server) SetHang(d time.Duration) {
	s.mu.Lock()
	s.hang = d
	s.mu.Unlock()
}

// ServeHTTP serves /ws and the HTTP endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serveHTTP(w, r) }

// NewThread adds a thread to the server (as the web client would have started it).
func (s *Server) NewThread(graphKey string, pending *Pending, history ...map[string]any) *Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newThreadLocked(graphKey, pending, history)
}

func (s *Server) newThreadLocked(graphKey string, pending *Pending, history []map[string]any) *Thread {
	s.n++
	now := time.Now()
	th := &Thread{ID: fmt.Sprintf("ai_%d_%d", now.UnixMilli(), s.n), GraphKey: graphKey, UserID: "ws-user",
		History: history, Pending: pending, Created: now, Updated: now}
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

// Violations lists the requests refused by validation (unknown or missing fields).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Interrupts lists the ai:interrupt messages received.
func (s *Server) Interrupts() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.interrupts...)
}

// Disconnects counts the WebSocket connections that ended, and Conns those opened.
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

func (s *Server) violation(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.violations = append(s.violations, msg)
	s.mu.Unlock()
	return msg
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.received = append(s.received, r)
	s.mu.Unlock()
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ws":
		s.serveWS(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/api/ai/threads":
		s.serveThreads(w, r)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/ai/thread/"):
		s.serveDelete(w, r, strings.TrimPrefix(r.URL.Path, "/api/ai/thread/"))
	case r.Method == http.MethodPost && (r.URL.Path == "/api/ai/chat" || r.URL.Path == "/api/ai/resume"):
		s.serveRun(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/ai/memory/"):
		key := strings.TrimPrefix(r.URL.Path, "/api/ai/memory/")
		if !s.httpAuth(w, r) {
			return
		}
		body, ok := s.Memory[key]
		if !ok {
			httpError(w, http.StatusNotFound, "graph not in memory")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	default:
		httpError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	}
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

// httpAuth checks the bearer token of an HTTP request.
func (s *Server) httpAuth(w http.ResponseWriter, r *http.Request) bool {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if r.Header.Get("Authorization") == "" {
		tok = ""
	}
	if !s.tokenOK(tok) {
		httpError(w, http.StatusUnauthorized, "Token invalide")
		return false
	}
	return true
}

func (s *Server) tokenOK(tok string) bool {
	if s.Token == "" {
		return true
	}
	if tok == "" {
		return !s.RequireToken
	}
	return tok == s.Token
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

func (s *Server) serveThreads(w http.ResponseWriter, r *http.Request) {
	if !s.httpAuth(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	var in struct {
		GraphKey *string `json:"graphKey"`
	}
	if err := decodeStrict(body, &in); err != nil || in.GraphKey == nil || *in.GraphKey == "" {
		httpError(w, http.StatusBadRequest, s.violation("POST /api/ai/threads: invalid body %s", body))
		return
	}
	s.record(Request{Via: "http", Type: "threads", GraphKey: *in.GraphKey})
	s.mu.Lock()
	var list []map[string]any
	for i := len(s.order) - 1; i >= 0; i-- {
		th := s.threads[s.order[i]]
		if th == nil || th.GraphKey != *in.GraphKey {
			continue
		}
		var pending any
		if th.Pending != nil {
			pending = map[string]any{"toolCall": th.Pending.ToolCall, "proposedAction": th.Pending.Action}
		}
		list = append(list, map[string]any{
			"_key": th.ID, "threadId": th.ID, "graphKey": th.GraphKey, "workspace": "default", "userId": th.UserID,
			"conversationHistory": th.History, "pendingInterrupt": pending,
			"createdTime": th.Created.UnixMilli(), "lastUpdatedTime": th.Updated.UnixMilli(),
		})
	}
	s.mu.Unlock()
	if list == nil {
		list = []map[string]any{}
	}
	writeJSON(w, map[string]any{"threads": list})
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
		httpError(w, http.StatusNotFound, "Thread introuvable")
		return
	}
	writeJSON(w, map[string]any{"success": true})
}

// chatWire and the others are the server's strict schemas: an unknown field is
// refused, as the server refuses it.
type chatWire struct {
	Type     *string `json:"type"`
	ID       *int64  `json:"_id"`
	GraphKey *string `json:"graphKey"`
	Message  *string `json:"message"`
	ThreadID *string `json:"threadId"`
	Token    *string `json:"token"`
}

type resumeWire struct {
	Type     *string `json:"type"`
	ID       *int64  `json:"_id"`
	ThreadID *string `json:"threadId"`
	Approved *bool   `json:"approved"`
	Feedback *string `json:"feedback"`
	Token    *string `json:"token"`
}

type interruptWire struct {
	Type     *string `json:"type"`
	ID       *int64  `json:"_id"`
	ThreadID *string `json:"threadId"`
	Token    *string `json:"token"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseWS validates one client message; the error is the ai:error text.
func parseWS(data []byte) (Request, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Request{}, fmt.Errorf("message is not JSON: %v", err)
	}
	r := Request{Via: "ws", Type: head.Type}
	switch head.Type {
	case "ai:chat":
		var m chatWire
		if err := decodeStrict(data, &m); err != nil {
			return r, err
		}
		if m.ID == nil || m.GraphKey == nil || *m.GraphKey == "" || m.Message == nil || *m.Message == "" {
			return r, errors.New("ai:chat needs _id, graphKey and message")
		}
		r.ID, r.GraphKey, r.Message, r.ThreadID, r.Token = *m.ID, *m.GraphKey, *m.Message, str(m.ThreadID), str(m.Token)
	case "ai:resume":
		var m resumeWire
		if err := decodeStrict(data, &m); err != nil {
			return r, err
		}
		if m.ID == nil || m.ThreadID == nil || m.Approved == nil {
			return r, errors.New("ai:resume needs _id, threadId and approved")
		}
		r.ID, r.ThreadID, r.Approved, r.Feedback, r.Token = *m.ID, *m.ThreadID, *m.Approved, str(m.Feedback), str(m.Token)
	case "ai:interrupt":
		var m interruptWire
		if err := decodeStrict(data, &m); err != nil {
			return r, err
		}
		if m.ID == nil || m.ThreadID == nil {
			return r, errors.New("ai:interrupt needs _id and threadId")
		}
		r.ID, r.ThreadID, r.Token = *m.ID, *m.ThreadID, str(m.Token)
	default:
		return r, fmt.Errorf("unknown message type %q", head.Type)
	}
	return r, nil
}

// wsConn is one client connection: writes are serialised, runs tracked by _id.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	ctx    context.Context
	wmu    sync.Mutex
	mu     sync.Mutex
	runs   map[int64]context.CancelFunc
	closed bool
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
	wc := &wsConn{s: s, c: c, ctx: ctx, runs: map[int64]context.CancelFunc{}}
	s.mu.Lock()
	s.conns++
	s.mu.Unlock()
	defer func() {
		// Abort on disconnect: every run of this client stops, as on the server.
		wc.mu.Lock()
		wc.closed = true
		for _, stop := range wc.runs {
			stop()
		}
		wc.mu.Unlock()
		cancel()
		c.CloseNow()
		s.mu.Lock()
		s.disconnects++
		s.mu.Unlock()
	}()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		req, err := parseWS(data)
		if err != nil {
			msg := s.violation("%s: %v: %s", req.Type, err, data)
			var id any
			var head struct {
				ID *int64 `json:"_id"`
			}
			if json.Unmarshal(data, &head) == nil && head.ID != nil {
				id = *head.ID
			}
			wc.send(map[string]any{"type": "ai:error", "_id": id, "error": "Message invalide: " + msg})
			continue
		}
		if !s.tokenOK(req.Token) {
			wc.send(map[string]any{"type": "ai:error", "_id": req.ID, "error": "Erreur d'authentification: token invalide", "code": "auth_error", "retryable": false})
			continue
		}
		if req.Type == "ai:interrupt" {
			s.mu.Lock()
			s.interrupts = append(s.interrupts, req)
			s.mu.Unlock()
			wc.mu.Lock()
			if stop, ok := wc.runs[req.ID]; ok {
				stop()
			}
			wc.mu.Unlock()
			continue
		}
		s.record(req)
		rctx, stop := context.WithCancel(ctx)
		wc.mu.Lock()
		wc.runs[req.ID] = stop
		wc.mu.Unlock()
		go func() {
			defer func() {
				wc.mu.Lock()
				delete(wc.runs, req.ID)
				wc.mu.Unlock()
				stop()
			}()
			s.run(&Session{Req: req, ctx: rctx, conn: wc, s: s})
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
	if req.Type == "ai:chat" {
		th := s.threads[req.ThreadID]
		if th == nil || th.GraphKey != req.GraphKey {
			// Unknown or absent thread: a new one, with the server's own id.
			th = s.newThreadLocked(req.GraphKey, nil, nil)
		}
		th.History = append(th.History, map[string]any{"role": "user", "content": req.Message})
		ss.Thread = th
	} else {
		th := s.threads[req.ThreadID]
		ss.Thread = th
	}
	th := ss.Thread
	var pending *Pending
	if th != nil && req.Type == "ai:resume" {
		pending = th.Pending
		th.Pending = nil
	}
	chat, resume := s.chat, s.resume
	s.mu.Unlock()
	if req.Type == "ai:resume" {
		if th == nil {
			ss.Error("Thread introuvable", "", false)
			return
		}
		if pending == nil {
			ss.Error("Aucune action en attente de validation pour ce thread", "", false)
			return
		}
		ss.Decided = pending
		if resume != nil {
			resume(ss)
		} else {
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
	Decided *Pending // on resume: the proposal being decided

	s    *Server
	ctx  context.Context
	conn *wsConn
	http *httpCollector
	text strings.Builder
}

// Aborted reports whether the run was interrupted or its client left.
func (ss *Session) Aborted() bool { return ss.ctx.Err() != nil }

// Done is closed when the run is interrupted or its client leaves.
func (ss *Session) Done() <-chan struct{} { return ss.ctx.Done() }

func (ss *Session) send(v map[string]any) bool {
	if ss.Aborted() {
		return false // like the server's callbacks: nothing is sent once aborted
	}
	v["_id"] = ss.Req.ID
	if ss.http != nil {
		ss.http.add(v)
		return true
	}
	return ss.conn.send(v)
}

// Token streams a piece of the answer.
func (ss *Session) Token(t string) bool {
	ss.text.WriteString(t)
	return ss.send(map[string]any{"type": "ai:token", "token": t})
}

// ToolStart announces a tool call.
func (ss *Session) ToolStart(id, name string) bool {
	return ss.send(map[string]any{"type": "ai:tool_start", "toolCallId": id, "toolName": name})
}

// ToolResult sends a tool's result (a JSON text).
func (ss *Session) ToolResult(id, result string) bool {
	return ss.send(map[string]any{"type": "ai:tool_result", "toolCallId": id, "result": result})
}

// Complete ends the run with fullText and keeps the answer in the thread.
func (ss *Session) Complete(fullText string) bool {
	ss.s.mu.Lock()
	ss.Thread.History = append(ss.Thread.History, map[string]any{"role": "assistant", "content": fullText})
	ss.Thread.Updated = time.Now()
	ss.s.mu.Unlock()
	return ss.send(map[string]any{"type": "ai:complete", "threadId": ss.Thread.ID, "fullText": fullText})
}

// Propose stops the run at a proposal: the thread waits on it and the client gets
// an ai:complete whose fullText is the interrupt JSON.
func (ss *Session) Propose(callID, tool string, args map[string]any, action string) bool {
	argText, _ := json.Marshal(args)
	tc := map[string]any{"id": callID, "type": "function", "function": map[string]any{"name": tool, "arguments": string(argText)}}
	ss.s.mu.Lock()
	ss.Thread.Pending = &Pending{ToolCall: tc, Action: json.RawMessage(action)}
	ss.Thread.Updated = time.Now()
	ss.s.mu.Unlock()
	full, _ := json.Marshal(map[string]any{"type": "interrupt", "proposedAction": json.RawMessage(action), "toolCall": tc})
	if ss.Aborted() {
		return false
	}
	v := map[string]any{"type": "ai:complete", "_id": ss.Req.ID, "threadId": ss.Thread.ID, "fullText": string(full)}
	if ss.http != nil {
		ss.http.add(v)
		return true
	}
	return ss.conn.send(v)
}

// Error ends the run with an ai:error (code "" sends none).
func (ss *Session) Error(msg, code string, retryable bool) bool {
	v := map[string]any{"type": "ai:error", "error": msg}
	if code != "" {
		v["code"], v["retryable"] = code, retryable
	}
	return ss.send(v)
}

// Raw sends bytes as they are (a malformed message).
func (ss *Session) Raw(b string) bool {
	if ss.http != nil {
		return false
	}
	return ss.conn.sendRaw([]byte(b))
}

// Drop cuts the connection without a close handshake.
func (ss *Session) Drop() {
	if ss.conn != nil {
		ss.conn.c.CloseNow()
	}
}

// Sleep waits d; false when the run was aborted meanwhile.
func (ss *Session) Sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ss.ctx.Done():
		return false
	}
}

// httpCollector gathers a run's messages for the non-streaming endpoints.
type httpCollector struct {
	mu   sync.Mutex
	msgs []map[string]any
}

func (h *httpCollector) add(v map[string]any) {
	h.mu.Lock()
	h.msgs = append(h.msgs, v)
	h.mu.Unlock()
}

// serveRun answers POST /api/ai/chat and /api/ai/resume with the same scripts,
// as one JSON answer: {threadId, type: "message"|"interrupt", message, ...}.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	if !s.httpAuth(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req Request
	if r.URL.Path == "/api/ai/chat" {
		var in struct {
			GraphKey *string `json:"graphKey"`
			Message  *string `json:"message"`
			ThreadID *string `json:"threadId"`
		}
		if err := decodeStrict(body, &in); err != nil || str(in.GraphKey) == "" || str(in.Message) == "" {
			httpError(w, http.StatusBadRequest, s.violation("POST /api/ai/chat: invalid body %s", body))
			return
		}
		req = Request{Via: "http", Type: "ai:chat", GraphKey: *in.GraphKey, Message: *in.Message, ThreadID: str(in.ThreadID)}
	} else {
		var in struct {
			ThreadID *string `json:"threadId"`
			Approved *bool   `json:"approved"`
			Feedback *string `json:"feedback"`
		}
		if err := decodeStrict(body, &in); err != nil || str(in.ThreadID) == "" || in.Approved == nil {
			httpError(w, http.StatusBadRequest, s.violation("POST /api/ai/resume: invalid body %s", body))
			return
		}
		req = Request{Via: "http", Type: "ai:resume", ThreadID: *in.ThreadID, Approved: *in.Approved, Feedback: str(in.Feedback)}
	}
	s.record(req)
	col := &httpCollector{}
	ss := &Session{Req: req, ctx: r.Context(), s: s, http: col}
	s.run(ss)
	col.mu.Lock()
	defer col.mu.Unlock()
	threadID := req.ThreadID
	if ss.Thread != nil {
		threadID = ss.Thread.ID
	}
	var calls []any
	for _, m := range col.msgs {
		switch m["type"] {
		case "ai:error":
			httpError(w, http.StatusInternalServerError, fmt.Sprint(m["error"]))
			return
		case "ai:tool_start":
			calls = append(calls, map[string]any{"id": m["toolCallId"], "name": m["toolName"]})
		case "ai:complete":
			full := fmt.Sprint(m["fullText"])
			var it map[string]any
			if json.Unmarshal([]byte(full), &it) == nil && it["type"] == "interrupt" {
				writeJSON(w, map[string]any{"threadId": threadID, "type": "interrupt", "message": ss.text.String(),
					"proposedAction": it["proposedAction"], "toolCall": it["toolCall"], "toolCalls": nonNil(calls)})
				return
			}
			writeJSON(w, map[string]any{"threadId": threadID, "type": "message", "message": full, "toolCalls": nonNil(calls)})
			return
		}
	}
	httpError(w, http.StatusInternalServerError, "run ended without an answer")
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// Close stops a server started by New (a test can then check what works offline).
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// MemoryBody turns a graph file document ({"graph", "nodes", "edges",
// "nodeConfigs"}) into the body of GET /api/ai/memory/{graph}: nodes and edges by
// sheet, each edge listed twice as the server's edge map holds it.
func MemoryBody(doc []byte) (json.RawMessage, error) {
	var d struct {
		Graph       json.RawMessage   `json:"graph"`
		Nodes       []json.RawMessage `json:"nodes"`
		Edges       []json.RawMessage `json:"edges"`
		NodeConfigs []json.RawMessage `json:"nodeConfigs"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	type sheet struct {
		Nodes []json.RawMessage `json:"nodes"`
		Edges []json.RawMessage `json:"edges"`
	}
	sheets := map[string]*sheet{}
	get := func(raw json.RawMessage) *sheet {
		var s struct {
			Sheet string `json:"sheet"`
		}
		_ = json.Unmarshal(raw, &s)
		if sheets[s.Sheet] == nil {
			sheets[s.Sheet] = &sheet{Nodes: []json.RawMessage{}, Edges: []json.RawMessage{}}
		}
		return sheets[s.Sheet]
	}
	for _, n := range d.Nodes {
		sh := get(n)
		sh.Nodes = append(sh.Nodes, n)
	}
	for _, e := range d.Edges {
		sh := get(e)
		sh.Edges = append(sh.Edges, e, e)
	}
	return json.Marshal(map[string]any{"graph": d.Graph, "sheets": sheets, "nodeConfigs": d.NodeConfigs})
}
