// Package servertest is a stand-in for the parts of the Nodius server the server:
// data source speaks to, on loopback: POST /api/graph/get (the saved state, and the
// home page's list of the user's graphs), /api/graph/create, GET /api/auth/me,
// /api/nodeconfig/list, /api/sync, and the WebSocket with its authenticate
// handshake and editing protocol (registerUserOnGraph with missingMessages,
// applyInstructionToGraph, batchCreateElements, batchDeleteElements, their acks
// and broadcasts, __ping__). Edits change the graph in memory only; Save writes it
// to the saved state, as the real server's autosave does every 30 s. Its answers
// and refusals are the ones recorded from the real server
// (../shared/fixtures/nodius-server/08-editing-ws.jsonl, 07-http.jsonl).
package servertest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
)

// User is who a token stands for.
type User struct {
	ID         string
	Name       string
	Workspaces []string
}

// Server is the stand-in. Its zero value is not usable: call New.
type Server struct {
	// URL is the HTTP base (http://127.0.0.1:PORT); WSURL the WebSocket.
	URL, WSURL string

	httpSrv, wsSrv *http.Server
	httpLn, wsLn   net.Listener
	handler        http.Handler // the HTTP endpoints

	mu      sync.Mutex
	users   map[string]User // by token
	saved   map[string]*nodiusgraph.Graph
	live    map[string]*liveGraph
	configs []json.RawMessage
	last    int64             // the last time given out (ms): strictly increasing
	refuse  map[string]string // by message type: refuse the next one with this sentence
	counts  Counts
	sockets map[*client]bool // open sockets
	log     func(string)
	reqs    []Request // every HTTP request, in order
	created []string  // the keys POST /api/graph/create gave, in order
	types   typeState // node types edited on the socket (nodeconfig.go)
	// claimed are the instances (graph-KEY) this stand-in manages: /api/sync
	// claims one, as the real server's clusterManager.defineInstancePeer does, and
	// a registration on a graph not claimed here is refused.
	claimed map[string]bool
	peers   map[string]*Server // instances another stand-in manages (a cluster)
	loseAck map[string]bool    // by message type: apply the next one, then drop the socket before its ack
}

// Request is one HTTP request the stand-in received.
type Request struct {
	Method, Path  string
	Authorization string // the header as sent
	Body          string
}

// Requests lists the HTTP requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Created lists the keys of the graphs POST /api/graph/create made, in order.
func (s *Server) Created() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.created)
}

// Counts are what the stand-in was asked, to measure a client's cost.
type Counts struct {
	GraphGets       int // POST /api/graph/get of one graph
	GraphLists      int // POST /api/graph/get of a page of graphs
	GraphCreates    int // POST /api/graph/create
	NodeConfigLists int // POST /api/nodeconfig/list
	Sockets         int // WebSockets opened (authenticated or not)
	Registrations   int // registerUserOnGraph
	Refusals        int // registerUserOnGraph refused because the graph is not managed here
	Syncs           int // POST /api/sync
	Pings           int // __ping__
	Edits           int // editing messages applied
	Saves           int // forceSave
}

// Counts returns what the stand-in was asked so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Send sends frame, as it is, to every registration on the graph, as the server's
// broadcasts go: for testing what a client does with a message it cannot apply,
// or a sheet message.
func (s *Server) Send(graphKey string, frame any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lg := s.live[graphKey]; lg != nil {
		for _, cs := range lg.editors {
			for _, o := range cs {
				o.send(frame)
			}
		}
	}
}

// Open is how many WebSockets are open.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sockets)
}

// DropSockets closes every WebSocket at once, as a server restart or a network
// cut does.
func (s *Server) DropSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.sockets {
		c.ws.CloseNow()
	}
}

// logf tells Options.Log, when set; s.mu is held.
func (s *Server) logf(format string, args ...any) {
	if s.log != nil {
		s.log(fmt.Sprintf(format, args...))
	}
}

type liveGraph struct {
	g       *nodiusgraph.Graph
	history map[string][]entry // by sheet
	editors map[string][]*client
}

type entry struct {
	msg  json.RawMessage
	time int64
}

type client struct {
	user   User
	ws     *websocket.Conn
	sheets []string // registered sheets, in order
	graph  string
	wmu    sync.Mutex
}

// Options of New.
type Options struct {
	// HTTPAddr and WSAddr to listen on (default 127.0.0.1:0 each).
	HTTPAddr, WSAddr string
	// Log, when set, is told each request and editing frame (one line each).
	Log func(string)
	// PairedPorts puts the WebSocket on the HTTP port + 2000, where the real
	// server in plain HTTP mode has it (where a server alone routes its sockets), on
	// 127.0.0.1; HTTPAddr and WSAddr are then ignored.
	PairedPorts bool
}

// New starts a stand-in with no graphs and no users.
func New(opt Options) (*Server, error) {
	if opt.HTTPAddr == "" {
		opt.HTTPAddr = "127.0.0.1:0"
	}
	if opt.WSAddr == "" {
		opt.WSAddr = "127.0.0.1:0"
	}
	s := &Server{users: map[string]User{}, saved: map[string]*nodiusgraph.Graph{}, live: map[string]*liveGraph{}, refuse: map[string]string{}, sockets: map[*client]bool{}, log: opt.Log,
		claimed: map[string]bool{}, peers: map[string]*Server{}, loseAck: map[string]bool{}}
	var err error
	if opt.PairedPorts {
		if err := s.listenPaired(); err != nil {
			return nil, err
		}
	} else {
		if s.httpLn, err = net.Listen("tcp", opt.HTTPAddr); err != nil {
			return nil, err
		}
		if s.wsLn, err = net.Listen("tcp", opt.WSAddr); err != nil {
			s.httpLn.Close()
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/graph/get", s.graphGet)
	mux.HandleFunc("POST /api/nodeconfig/list", s.nodeConfigList)
	mux.HandleFunc("POST /api/sync", s.sync)
	mux.HandleFunc("POST /api/graph/create", s.graphCreate)
	mux.HandleFunc("GET /api/auth/me", s.me)
	s.handler = s.recording(s.typeRoutes(mux))
	s.httpSrv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.wsSrv = &http.Server{Handler: http.HandlerFunc(s.socket), ReadHeaderTimeout: 10 * time.Second}
	go s.httpSrv.Serve(s.httpLn)
	go s.wsSrv.Serve(s.wsLn)
	s.URL = "http://" + s.httpLn.Addr().String()
	s.WSURL = "ws://" + s.wsLn.Addr().String() + "/"
	return s, nil
}

// listenPaired finds a free port P with P+2000 free too.
func (s *Server) listenPaired() error {
	for try := 0; try < 50; try++ {
		h, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		port := h.Addr().(*net.TCPAddr).Port
		if port+2000 > 65535 {
			h.Close()
			continue
		}
		w, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+2000))
		if err != nil {
			h.Close()
			continue
		}
		s.httpLn, s.wsLn = h, w
		return nil
	}
	return errors.New("no free pair of ports (P, P+2000) on 127.0.0.1")
}

// Handler serves the stand-in's HTTP endpoints (/api/graph/get, /api/graph/create,
// /api/nodeconfig/list, /api/sync), for a stand-in that carries them beside others on one port.
func (s *Server) Handler() http.Handler { return s.handler }

// Editor is the editing side of a socket that another stand-in accepted and
// authenticated (the real server carries the assistant and the editing protocol on
// one socket): the frames that are not the assistant's go to Handle.
type Editor struct {
	s *Server
	c *client
}

// Attach makes ws, authenticated with token, an editing connection. ok is false
// when the token stands for no user of this stand-in.
func (s *Server) Attach(ws *websocket.Conn, token string) (*Editor, bool) {
	s.mu.Lock()
	u, ok := s.users[token]
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	return &Editor{s: s, c: &client{ws: ws, user: u}}, true
}

// Handle answers one editing frame; false means the server closes the socket (an
// edit without registering).
func (e *Editor) Handle(data []byte) bool { return e.s.handle(e.c, data) }

// Leave forgets the connection's registrations (the socket closed).
func (e *Editor) Leave() { e.s.leave(e.c) }

// Close stops both listeners and closes every socket.
func (s *Server) Close() {
	_ = s.httpSrv.Close()
	_ = s.wsSrv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lg := range s.live {
		for _, cs := range lg.editors {
			for _, c := range cs {
				c.ws.CloseNow()
			}
		}
	}
	for c := range s.sockets {
		c.ws.CloseNow()
	}
}

// AddUser makes token stand for u.
func (s *Server) AddUser(token string, u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[token] = u
}

// AddGraph stores a graph as /api/graph/get answers it (the saved state).
func (s *Server) AddGraph(body []byte) error {
	g, ok, err := nodiusgraph.Parse(body)
	if err != nil || !ok {
		return fmt.Errorf("not a graph: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved[g.Key()] = g
	s.last = max(s.last, g.LastUpdated())
	return nil
}

// SetNodeConfigs sets what /api/nodeconfig/list answers.
func (s *Server) SetNodeConfigs(configs []json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configs = configs
}

// Save writes the graph's live state to the saved state, as the autosave does,
// with lastUpdatedTime the moment of the save.
func (s *Server) Save(graphKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.save(graphKey)
}

// save is Save with s.mu held.
func (s *Server) save(graphKey string) {
	lg := s.live[graphKey]
	if lg == nil {
		return
	}
	g := lg.g.Clone()
	g.Doc["lastUpdatedTime"] = float64(s.now())
	s.saved[graphKey] = g
	// As the autosave: every registration is told nothing is unsaved.
	for _, cs := range lg.editors {
		for _, o := range cs {
			o.send(map[string]any{"type": "saveStatus", "graphKey": graphKey, "lastSaveTime": s.last, "hasUnsavedChanges": false, "autoSaveEnabled": true})
		}
	}
}

// RefuseNext makes the stand-in refuse the next editing message of that type
// (applyInstructionToGraph, batchCreateElements, batchDeleteElements) with the
// sentence, as the real server refuses one the graph does not allow: for testing
// what a client does when a change stops part-way. "registerUserOnGraph:SHEET"
// refuses the next registration on that sheet.
func (s *Server) RefuseNext(msgType, sentence string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[msgType] = sentence
}

// Live returns a copy of the graph as its editors have it (the saved state when
// nobody registered on it yet).
func (s *Server) Live(graphKey string) *nodiusgraph.Graph {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lg := s.live[graphKey]; lg != nil {
		return lg.g.Clone()
	}
	if g := s.saved[graphKey]; g != nil {
		return g.Clone()
	}
	return nil
}

// Saved returns a copy of the graph as POST /api/graph/get answers it: the state
// last saved (Save, forceSave), nil for an unknown graph.
func (s *Server) Saved(graphKey string) *nodiusgraph.Graph {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.saved[graphKey]; g != nil {
		return g.Clone()
	}
	return nil
}

// LastTime is the last moment (ms) the stand-in gave an edit or a save: a
// registration from it gets the messages made after.
func (s *Server) LastTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Server) now() int64 {
	s.last = max(s.last+1, time.Now().UnixMilli())
	return s.last
}

func (s *Server) user(r *http.Request) (User, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	u, known := s.users[tok]
	return u, ok && known
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") == "" {
		writeJSON(w, 401, map[string]any{"error": "Unauthorized", "message": "Missing Authorization header", "loginUrl": "/login"})
		return false
	}
	if _, ok := s.user(r); !ok {
		writeJSON(w, 401, map[string]any{"error": "Unauthorized", "message": "Invalid token", "loginUrl": "/login"})
		return false
	}
	return true
}

// graphGet answers the saved state; no workspace check (as recorded: bob gets it).
func (s *Server) graphGet(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body struct {
		RetrieveGraph *struct {
			Token      string `json:"token"`
			BuildGraph bool   `json:"buildGraph"`
			Length     *int   `json:"length"`
			Offset     *int   `json:"offset"`
		} `json:"retrieveGraph"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.RetrieveGraph == nil {
		writeJSON(w, 500, map[string]any{"error": "Internal Server Error"})
		return
	}
	if rg := body.RetrieveGraph; rg.Token == "" {
		if rg.Length == nil || rg.Offset == nil {
			w.WriteHeader(500) // the real server ends a list request without them so
			return
		}
		if *rg.Offset < 0 || *rg.Length < 1 {
			writeJSON(w, 400, map[string]any{"error": "Invalid pagination parameters"})
			return
		}
		u, _ := s.user(r)
		writeJSON(w, 200, s.list(u, *rg.Offset, *rg.Length))
		return
	}
	s.mu.Lock()
	s.counts.GraphGets++
	s.logf("POST /api/graph/get %s", body.RetrieveGraph.Token)
	g := s.saved[body.RetrieveGraph.Token]
	var data []byte
	if g != nil {
		if body.RetrieveGraph.BuildGraph {
			data, _ = g.MarshalJSON()
		} else {
			data, _ = json.Marshal(g.Doc)
		}
	}
	s.mu.Unlock()
	switch {
	case g == nil && body.RetrieveGraph.BuildGraph:
		w.WriteHeader(500) // the real server fails building an unknown graph
	case g == nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200) // and answers nothing for one it does not build
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}
}

// list answers a page of the user's graph documents (no _sheets) as the real
// server does: those of the user's workspaces (all, for a user without any),
// without the graphs of HTML classes and the invisible ones, most recently saved
// first.
func (s *Server) list(u User, offset, length int) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.GraphLists++
	s.logf("POST /api/graph/get list %d+%d", offset, length)
	var gs []*nodiusgraph.Graph
	for _, g := range s.saved {
		ws, _ := g.Doc["workspace"].(string)
		meta, _ := g.Doc["metadata"].(map[string]any)
		if g.Doc["htmlKeyLinked"] != nil || meta["invisible"] == true || (len(u.Workspaces) > 0 && !slices.Contains(u.Workspaces, ws)) {
			continue
		}
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *nodiusgraph.Graph) int {
		if a.LastUpdated() != b.LastUpdated() {
			return int(b.LastUpdated() - a.LastUpdated())
		}
		return strings.Compare(a.Key(), b.Key())
	})
	out := []map[string]any{}
	for i := offset; i < len(gs) && i < offset+length; i++ {
		out = append(out, gs[i].Clone().Doc)
	}
	return out
}

// graphCreate answers POST /api/graph/create as requestWorkFlow.ts does: the
// workspace is body.graph.workspace ?? body.htmlClass.workspace (400 "Missing
// workspace"), one of the user's when the user has any (403 "Access denied to
// workspace 'W'"). An HTML class (checked first) gets a graph "NAME-graph" linked
// to it (htmlKeyLinked) holding one html node "root"; a graph gets a Starter node
// "root" and a Return node "return" 300 to its right; both on sheet "0" main. The
// answer is the graph document in both cases; a body with neither is a 500.
func (s *Server) graphCreate(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	u, _ := s.user(r)
	type spec struct {
		Name      string  `json:"name"`
		Workspace *string `json:"workspace"`
	}
	var body struct {
		Graph     *spec `json:"graph"`
		HTMLClass *spec `json:"htmlClass"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ws := ""
	switch {
	case body.Graph != nil && body.Graph.Workspace != nil:
		ws = *body.Graph.Workspace
	case body.HTMLClass != nil && body.HTMLClass.Workspace != nil:
		ws = *body.HTMLClass.Workspace
	}
	if ws == "" {
		writeJSON(w, 400, map[string]any{"error": "Missing workspace"})
		return
	}
	if len(u.Workspaces) > 0 && !slices.Contains(u.Workspaces, ws) {
		writeJSON(w, 403, map[string]any{"error": fmt.Sprintf("Access denied to workspace '%s'", ws)})
		return
	}
	if body.Graph == nil && body.HTMLClass == nil {
		w.WriteHeader(500)
		return
	}
	s.mu.Lock()
	s.counts.GraphCreates++
	now := s.now()
	key := fmt.Sprintf("g%011d", len(s.saved)+len(s.created)+1)
	s.mu.Unlock()
	doc := map[string]any{"_key": key, "category": "default", "version": 0, "permission": 0,
		"workspace": ws, "createdTime": now, "lastUpdatedTime": now, "sheetsList": map[string]string{"0": "main"}}
	node := func(k, typ string, x int, size map[string]any, handles map[string]any) map[string]any {
		return map[string]any{"_key": k, "graphKey": key, "type": typ, "typeVersion": 1, "sheet": "0", "posX": x, "posY": 0,
			"size": size, "handles": handles}
	}
	point := func(id, typ, accept string) map[string]any {
		return map[string]any{"id": id, "type": typ, "accept": accept}
	}
	var nodes []any
	if body.HTMLClass != nil {
		doc["name"] = body.HTMLClass.Name + "-graph"
		doc["htmlKeyLinked"] = "h" + key
		nodes = []any{node("root", "html", 0, map[string]any{"width": 640, "height": 360, "dynamic": true}, map[string]any{
			"0": map[string]any{"position": "fix", "point": []any{point("0", "out", "event[]"), point("1", "in", "entryType")}}})}
	} else {
		doc["name"] = body.Graph.Name
		size := map[string]any{"width": 150, "height": 150, "dynamic": true}
		nodes = []any{
			node("root", "starter", 0, size, map[string]any{
				"0": map[string]any{"position": "fix", "point": []any{point("1", "in", "entryType")}},
				"R": map[string]any{"position": "separate", "point": []any{point("0", "out", "any")}}}),
			node("return", "return", 300, size, map[string]any{
				"L": map[string]any{"position": "separate", "point": []any{point("0", "in", "any")}}}),
		}
	}
	built := map[string]any{}
	for k, v := range doc {
		built[k] = v
	}
	built["_sheets"] = map[string]any{"0": map[string]any{"edges": []any{}, "nodes": nodes}}
	raw, _ := json.Marshal(built)
	if err := s.AddGraph(raw); err != nil {
		writeJSON(w, 500, map[string]any{"error": err.Error()})
		return
	}
	s.mu.Lock()
	s.created = append(s.created, key)
	s.logf("POST /api/graph/create %s", key)
	s.mu.Unlock()
	writeJSON(w, 200, doc)
}

// me answers GET /api/auth/me as the real AuthManager does (what auth login asks
// to check a token): {success, user: {userId, username, roles, workspaces}}, or
// 401 {success: false, error}.
func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	u, ok := s.user(r)
	if !ok {
		msg := "Invalid token"
		if r.Header.Get("Authorization") == "" {
			msg = "Token required"
		}
		writeJSON(w, 401, map[string]any{"success": false, "error": msg})
		return
	}
	writeJSON(w, 200, map[string]any{"success": true, "user": map[string]any{
		"userId": u.ID, "username": u.Name, "roles": []string{"editor"}, "workspaces": u.Workspaces}})
}

// recording keeps every HTTP request (method, path, Authorization, body) for
// Requests, then serves it.
func (s *Server) recording(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: string(body)})
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) nodeConfigList(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	s.counts.NodeConfigLists++
	s.logf("POST /api/nodeconfig/list")
	list := slices.Clone(s.configs)
	s.mu.Unlock()
	if list == nil {
		list = []json.RawMessage{}
	}
	writeJSON(w, 200, list)
}

// sync answers POST /api/sync as the real server does: an instance another
// stand-in manages (RouteTo) is answered with that peer's {host, port} (no secure,
// no path); any other is claimed here (managed from now on) and answered with
// this stand-in's {host, port, secure:false}.
func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body struct {
		InstanceID string `json:"instanceId"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.InstanceID == "" {
		w.WriteHeader(500) // the real server ends a request without instanceId so
		return
	}
	s.mu.Lock()
	s.counts.Syncs++
	s.logf("POST /api/sync %s", body.InstanceID)
	peer := s.peers[body.InstanceID]
	if peer == nil {
		s.claimed[body.InstanceID] = true
	}
	s.mu.Unlock()
	at := s.wsLn.Addr().(*net.TCPAddr)
	if peer != nil {
		at = peer.wsLn.Addr().(*net.TCPAddr)
		writeJSON(w, 200, map[string]any{"host": at.IP.String(), "port": at.Port})
		return
	}
	writeJSON(w, 200, map[string]any{"host": at.IP.String(), "port": at.Port, "secure": false})
}

// Claim makes this stand-in the manager of the graph, as a web editor's
// POST /api/sync does before it opens the graph.
func (s *Server) Claim(graphKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimed["graph-"+graphKey] = true
	delete(s.peers, "graph-"+graphKey)
}

// Unclaim forgets that this stand-in manages the graph (a claim that lapsed):
// the next registration is refused until /api/sync is asked again.
func (s *Server) Unclaim(graphKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.claimed, "graph-"+graphKey)
}

// RouteTo makes peer the manager of the graph in a cluster of two stand-ins:
// /api/sync here answers peer's address, registrations here are refused, and the
// peer manages it. The peer must hold the graph too (the instances of a real
// cluster share one database).
func (s *Server) RouteTo(graphKey string, peer *Server) {
	s.mu.Lock()
	s.peers["graph-"+graphKey] = peer
	delete(s.claimed, "graph-"+graphKey)
	s.mu.Unlock()
	peer.Claim(graphKey)
}

// LoseNextAck makes the stand-in apply the next editing message of that type
// (applyInstructionToGraph, batchCreateElements, batchDeleteElements, forceSave),
// broadcast it as usual, and then drop the sender's socket before acknowledging
// it: the acknowledgement is lost, the change landed.
func (s *Server) LoseNextAck(msgType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseAck[msgType] = true
}

// socket runs one WebSocket: authenticate first, then the editing protocol.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(32 << 20)
	c := &client{ws: ws}
	s.mu.Lock()
	s.counts.Sockets++
	s.sockets[c] = true
	s.logf("websocket opened")
	s.mu.Unlock()
	defer s.leave(c)
	ctx := r.Context()
	authCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	for c.user.ID == "" {
		_, data, err := ws.Read(authCtx)
		if err != nil {
			cancel()
			if errors.Is(authCtx.Err(), context.DeadlineExceeded) {
				c.send(map[string]any{"type": "authResult", "success": false, "error": "Authentication timeout"})
				ws.Close(4002, "Authentication timeout")
			}
			return
		}
		var m struct {
			Type  string `json:"type"`
			Token string `json:"token"`
		}
		if json.Unmarshal(data, &m) != nil {
			c.send(map[string]any{"error": "Invalid JSON"})
			continue
		}
		if m.Type != "authenticate" {
			c.send(map[string]any{"type": "authResult", "success": false, "error": "Not authenticated. Send authenticate message first."})
			continue
		}
		s.mu.Lock()
		u, ok := s.users[m.Token]
		s.mu.Unlock()
		if !ok {
			cancel()
			c.send(map[string]any{"type": "authResult", "success": false, "error": "Invalid token"})
			ws.Close(4001, "Authentication failed")
			return
		}
		c.user = u
		c.send(map[string]any{"type": "authResult", "success": true, "userId": u.ID, "username": u.Name, "workspaces": u.Workspaces})
	}
	cancel()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if !s.handle(c, data) {
			ws.CloseNow()
			return
		}
	}
}

func (c *client) send(v any) {
	b, _ := json.Marshal(v)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.ws.Write(ctx, websocket.MessageText, b)
}

func (s *Server) leave(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sockets[c] {
		delete(s.sockets, c)
		s.logf("websocket closed")
	}
	delete(s.types.editing, c)
	if lg := s.live[c.graph]; lg != nil {
		for id, cs := range lg.editors {
			lg.editors[id] = slices.DeleteFunc(cs, func(x *client) bool { return x == c })
		}
	}
}

// handle answers one message; false closes the socket.
func (s *Server) handle(c *client, data []byte) bool {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		c.send(map[string]any{"error": "Invalid JSON"})
		return true
	}
	typ, _ := m["type"].(string)
	id, hasID := m["_id"]
	refuse := func(msg string) bool {
		if hasID {
			c.send(map[string]any{"_id": id, "_response": map[string]any{"status": false, "message": msg}})
		}
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if keep, done := s.typeMessage(c, typ, m, id, hasID); done {
		return keep
	}
	switch typ {
	case "__ping__":
		s.counts.Pings++
		if c.graph == "" {
			return false
		}
		c.send(map[string]any{"type": "__pong__"})
		return true
	case "registerUserOnGraph":
		s.counts.Registrations++
		s.logf("registerUserOnGraph %v sheet %v (%s)", m["graphKey"], m["sheetId"], c.user.Name)
		return s.register(c, m, id, hasID)
	case "disconnedUserOnGraph":
		// As the real server: the first registration of the user on each sheet
		// goes, whichever connection made it.
		gk, _ := m["graphKey"].(string)
		if lg := s.live[gk]; lg != nil {
			for sh, cs := range lg.editors {
				if i := slices.IndexFunc(cs, func(x *client) bool { return x.user.ID == c.user.ID }); i >= 0 {
					lg.editors[sh] = slices.Delete(cs, i, i+1)
				}
			}
		}
		return true
	case "forceSave":
		// As the real server: only a socket registered on a graph may ask; the
		// graph is saved, every editor told (saveStatus), then the ack.
		if c.graph == "" {
			return false
		}
		gk, _ := m["graphKey"].(string)
		if gk == "" {
			gk = c.graph
		}
		s.counts.Saves++
		s.logf("forceSave %s (%s)", gk, c.user.Name)
		s.save(gk)
		if s.loseAck[typ] {
			delete(s.loseAck, typ)
			c.ws.CloseNow()
			return true
		}
		if hasID {
			ack := map[string]any{}
			for k, v := range m {
				ack[k] = v
			}
			ack["_response"] = map[string]any{"status": true}
			c.send(ack)
		}
		return true
	case "applyInstructionToGraph", "batchCreateElements", "batchDeleteElements":
	default:
		return true // unknown types get no answer
	}
	if c.graph == "" {
		return false // an edit without registering: the server closes the socket
	}
	lg := s.live[c.graph]
	var msg nodiusgraph.Message
	if json.Unmarshal(data, &msg) != nil {
		c.send(map[string]any{"error": "Invalid JSON"})
		return true
	}
	if sentence, ok := s.refuse[typ]; ok {
		delete(s.refuse, typ)
		return refuse(sentence)
	}
	var sheets []string // the histories the message is filed under
	var err error
	switch typ {
	case "applyInstructionToGraph":
		if len(msg.Instructions) > 20 {
			return false
		}
		err = lg.g.ApplyInstructions(msg.Instructions)
		for _, in := range msg.Instructions {
			if !slices.Contains(sheets, in.SheetID) {
				sheets = append(sheets, in.SheetID)
			}
		}
	case "batchCreateElements":
		err = lg.g.BatchCreate(msg.SheetID, orEmpty(msg.Nodes), orEmpty(msg.Edges))
		sheets = []string{c.sheets[0]}
	case "batchDeleteElements":
		err = lg.g.BatchDelete(msg.SheetID, msg.NodeKeys, msg.EdgeKeys)
		sheets = []string{c.sheets[0]}
	}
	if err != nil {
		return refuse(err.Error())
	}
	s.counts.Edits++
	s.logf("%s (%s)", typ, c.user.Name)
	for _, cs := range lg.editors {
		for _, o := range cs {
			o.send(map[string]any{"type": "saveStatus", "graphKey": c.graph, "lastSaveTime": s.last, "hasUnsavedChanges": true, "autoSaveEnabled": true})
		}
	}
	kept := map[string]any{}
	for k, v := range m {
		kept[k] = v
	}
	hist, _ := json.Marshal(kept)
	t := s.now()
	for _, sh := range sheets {
		lg.history[sh] = append(lg.history[sh], entry{msg: hist, time: t})
	}
	lost := s.loseAck[typ]
	delete(s.loseAck, typ)
	if hasID && !lost {
		ack := map[string]any{}
		for k, v := range m {
			ack[k] = v
		}
		ack["_response"] = map[string]any{"status": true}
		c.send(ack)
	}
	if lost {
		defer c.ws.CloseNow() // after the broadcasts: the others see the change
	}
	delete(kept, "_id")
	// Broadcasts skip the sender's user, not only its connection. An instruction
	// message reaches the first connection of each other user of the sheets it
	// touches; a batch every connection of another user on its sheet.
	if typ != "applyInstructionToGraph" {
		for _, o := range lg.editors[msg.SheetID] {
			if o.user.ID != c.user.ID {
				o.send(kept)
			}
		}
		return true
	}
	notified := map[string]bool{c.user.ID: true}
	for _, sh := range sheets {
		for _, o := range lg.editors[sh] {
			if !notified[o.user.ID] {
				notified[o.user.ID] = true
				o.send(kept)
			}
		}
	}
	return true
}

func orEmpty(v []map[string]any) []map[string]any {
	if v == nil {
		return []map[string]any{}
	}
	return v
}

func (s *Server) register(c *client, m map[string]any, id any, hasID bool) bool {
	gk, _ := m["graphKey"].(string)
	sheet, _ := m["sheetId"].(string)
	from, _ := m["fromTimestamp"].(float64)
	if !s.claimed["graph-"+gk] {
		// As the real server's registerUserOnGraph: only the instance that
		// manages the graph (the one /api/sync named) takes its editors.
		s.counts.Refusals++
		if hasID {
			c.send(map[string]any{"_id": id, "_response": map[string]any{"status": false, "message": "This server don't manage graph with key:" + gk}})
		}
		return true
	}
	lg := s.live[gk]
	if lg == nil {
		saved := s.saved[gk]
		if saved == nil {
			c.send(map[string]any{"error": "Invalid JSON"})
			return true
		}
		lg = &liveGraph{g: saved.Clone(), history: map[string][]entry{}, editors: map[string][]*client{}}
		s.live[gk] = lg
	}
	if ws, _ := lg.g.Doc["workspace"].(string); ws != "" && !slices.Contains(c.user.Workspaces, ws) {
		if hasID {
			c.send(map[string]any{"_id": id, "_response": map[string]any{"status": false, "message": "Access denied to this graph's workspace"}})
			return true
		}
		return false
	}
	if lg.g.Sheets[sheet] == nil {
		c.send(map[string]any{"error": "Invalid JSON"})
		return true
	}
	if sentence, ok := s.refuse["registerUserOnGraph:"+sheet]; ok {
		delete(s.refuse, "registerUserOnGraph:"+sheet)
		if hasID {
			c.send(map[string]any{"_id": id, "_response": map[string]any{"status": false, "message": sentence}})
		}
		return true
	}
	lg.editors[sheet] = append(lg.editors[sheet], c)
	c.graph = gk
	if !slices.Contains(c.sheets, sheet) {
		c.sheets = append(c.sheets, sheet)
	}
	missing := []json.RawMessage{}
	for _, e := range lg.history[sheet] {
		if float64(e.time) > from {
			missing = append(missing, e.msg)
		}
	}
	if hasID {
		c.send(map[string]any{"_id": id, "_response": map[string]any{"status": true}, "missingMessages": missing})
	}
	return true
}

//go:embed testdata/seed-graph.json
var seedGraph []byte

//go:embed testdata/seed-nodeconfigs.json
var seedNodeConfigs []byte

// SeedGraphKey is the graph NewSeeded holds, the one of the recordings.
const SeedGraphKey = "testgraph001"

// NewSeeded starts a stand-in holding the graph and node types of the recordings of
// the real server (testgraph001, sheets "0" main and "1" data-processing), and
// their users, token "tok-NAME" each: alice, carol (editor) and dave (viewer) of
// the graph's workspace, bob of his own workspace.
func NewSeeded(opt Options) (*Server, error) {
	s, err := New(opt)
	if err != nil {
		return nil, err
	}
	if err := s.AddGraph(seedGraph); err != nil {
		s.Close()
		return nil, err
	}
	var configs []json.RawMessage
	if err := json.Unmarshal(seedNodeConfigs, &configs); err != nil {
		s.Close()
		return nil, err
	}
	s.SetNodeConfigs(configs)
	for name, u := range RecordedUsers() {
		s.AddUser("tok-"+name, u)
	}
	return s, nil
}

// RecordedUsers are the users of the recordings, by name.
func RecordedUsers() map[string]User {
	const ws = "2bef1a5a3bd4"
	return map[string]User{
		"alice": {ID: "2bef1a5a3bd4", Name: "alice", Workspaces: []string{ws}},
		"carol": {ID: "7448f3c25cfd", Name: "carol", Workspaces: []string{ws}},
		"dave":  {ID: "8f406529c50b", Name: "dave", Workspaces: []string{ws}},
		"bob":   {ID: "be95679f31a7", Name: "bob", Workspaces: []string{"be95679f31a7"}},
	}
}
