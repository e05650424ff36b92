// Package server reads and changes graphs held by a running Nodius server, the way
// the server offers them (DESIGN.md, "The Nodius server").
//
// Reading: the server has no endpoint for the graph as it is being edited. POST
// /api/graph/get answers the state it last saved (it saves from memory about every
// 30 s), and registering on the editing WebSocket (registerUserOnGraph) with
// fromTimestamp = the graph's lastUpdatedTime answers the editing messages made
// since (missingMessages). The live graph is the saved one with those messages
// replayed (package nodiusgraph). The Source does that once per graph and then
// follows the socket, as the web client does: the other clients' broadcasts and
// the acknowledgements of its own edits keep the copy current, and every read is
// answered from it (follow.go). When the socket cannot be had, the saved state is
// used and the Source says so (Options.Notice, Describe).
//
// Applying: an approved action of the local agent is turned into the editing
// messages the server's own action converter produces (instructions, batches of
// nodes and edges to create or delete) and sent on the editing socket, so web
// editors see it at once; see ApplyAction. The server's assistant hands its
// approved actions (ai:apply_action) to ApplyServerAction the same way.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// DefaultTimeout bounds one HTTP request to the server (headers and body).
const DefaultTimeout = 30 * time.Second

// DefaultMaxBytes bounds one answer of the server (a graph): far above any real
// graph, low enough that a broken or hostile server cannot exhaust memory.
const DefaultMaxBytes = 32 << 20

// DefaultIdleRelease is how long a graph's editing socket stays open without a
// read: long enough for one question's reads (the retrieval snapshot, the tool
// calls), short enough not to keep the user's web editor from the broadcasts. The
// agent also releases it when each run ends (Release).
const DefaultIdleRelease = 2 * time.Minute

// DefaultEditorName is the name other editors of the graph see for this client.
const DefaultEditorName = "nodius-ai (terminal)"

// Options configure a Source.
type Options struct {
	// BaseURL is the Nodius server, e.g. https://nodius.example.com.
	BaseURL string
	// Token is the user's JWT: HTTP calls send it as a bearer token, the WebSocket
	// in its authenticate frame. It goes to no other host.
	Token string
	// WSURL overrides where the WebSocket is (nodiusapi.Address: by default
	// wss://host/ws for an https server, ws://host:port+2000 for an http one).
	WSURL string
	// Timeout bounds each HTTP request (default DefaultTimeout).
	Timeout time.Duration
	// AckTimeout bounds each acknowledgement on the editing socket.
	AckTimeout time.Duration
	// IdleRelease closes a graph's editing socket when nothing read the graph for
	// that long (default DefaultIdleRelease; negative: never); the next read loads
	// it again. The server broadcasts an instruction to the first registration of
	// each user only, so while this client stays registered, a web editor of the
	// same user opened after it misses other users' instruction edits.
	IdleRelease time.Duration
	// HTTPClient replaces the default client (tests).
	HTTPClient *http.Client
	// MaxBytes bounds one answer (default DefaultMaxBytes; config key
	// max_snapshot_bytes). A larger answer fails with a sentence naming the key.
	MaxBytes int
	// EditorName is what other editors see while this client is registered.
	EditorName string
	// Notice, when set, is told once each thing the user should know about what
	// was read (only the saved state could be had, messages that did not replay).
	Notice func(string)
}

// Source is a datasource.Source over a Nodius server. It also applies whole actions
// (datasource.ActionApplier) and the server assistant's approved actions
// (nodiusapi.Applier) through the editing socket.
type Source struct {
	api     *nodiusapi.Client
	timeout time.Duration // one read's bound when no caller gives one (Version)
	ackWait time.Duration
	idle    time.Duration
	name    string
	notify  func(string)

	mu       sync.Mutex
	said     map[string]bool
	lastNote string
	follows  map[string]*follower // by graph key
	closed   bool
	sess     session // a held session (session.go)
}

var (
	_ datasource.Source        = (*Source)(nil)
	_ datasource.Snapshotter   = (*Source)(nil)
	_ datasource.ActionApplier = (*Source)(nil)
	_ datasource.Describer     = (*Source)(nil)
	_ nodiusapi.Applier        = (*Source)(nil)
)

// New checks the URLs and returns a Source; it sends no request.
func New(opts Options) (*Source, error) {
	if _, err := nodiusapi.ParseServerURL(opts.BaseURL); err != nil {
		return nil, &fault.Error{Code: fault.Config,
			Message: fmt.Sprintf("server source needs an http:// or https:// URL (got %q) — use --source server:https://HOST", fault.MaskCredentials(opts.BaseURL))}
	}
	api, err := nodiusapi.New(nodiusapi.Options{BaseURL: opts.BaseURL, Token: opts.Token, WSURL: opts.WSURL,
		HTTPClient: opts.HTTPClient, Timeout: opts.Timeout, MaxBytes: opts.MaxBytes})
	if err != nil {
		return nil, err
	}
	name := opts.EditorName
	if name == "" {
		name = DefaultEditorName
	}
	idle := opts.IdleRelease
	if idle == 0 {
		idle = DefaultIdleRelease
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Source{api: api, timeout: timeout, ackWait: opts.AckTimeout, idle: idle,
		name: name, notify: opts.Notice, said: map[string]bool{}, follows: map[string]*follower{}}, nil
}

// Describe names the server, and says when the last read had only the saved state.
func (s *Source) Describe() string {
	d := "server:" + s.api.Server()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastNote != "" {
		d += " (" + s.lastNote + ")"
	}
	return d
}

// Close closes the editing sockets of the graphs read (their reading goroutines
// end before it returns) and releases idle connections. The Source is not used
// after.
func (s *Source) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	follows := s.follows
	s.follows = map[string]*follower{}
	s.mu.Unlock()
	for _, f := range follows {
		f.close()
	}
	s.api.HTTPClient().CloseIdleConnections()
	return nil
}

// Release closes every graph's editing socket that no read is using (Releaser):
// the server broadcasts an instruction to the first registration of each user
// only, so staying registered between questions would keep those edits from a web
// editor of the same user opened meanwhile. The next read loads again, without a
// notice (nothing was missed).
func (s *Source) Release() {
	if s == nil || s.held() { // a chat keeps its registration (session.go)
		return
	}
	s.mu.Lock()
	follows := make([]*follower, 0, len(s.follows))
	for _, f := range s.follows {
		follows = append(follows, f)
	}
	s.mu.Unlock()
	for _, f := range follows {
		f.release()
	}
}

// note remembers what the last read was (short, for Describe), and tells the user
// sentence the first time a note of that kind (key) is made: a chat that reads the
// graph on every question says it once, before its screen starts.
func (s *Source) note(key, short, sentence string) {
	s.mu.Lock()
	s.lastNote = short
	first := sentence != "" && !s.said[key]
	if first {
		s.said[key] = true
	}
	s.mu.Unlock()
	if first && s.notify != nil {
		s.notify(sentence)
	}
}

// post sends one JSON request and returns the status and body of the answer.
// Transport failures and the statuses every endpoint shares (401, 403, 429) are
// *fault.Error with the one wording of nodiusapi; the others are the caller's to
// read.
func (s *Source) post(ctx context.Context, path string, body any) (int, []byte, error) {
	a, err := s.api.Do(ctx, http.MethodPost, path, body)
	if err != nil {
		return 0, nil, err
	}
	switch a.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return a.Status, nil, s.api.StatusError(a.Status, a.Body, "")
	}
	return a.Status, a.Body, nil
}

// rawPost sends one JSON body, with the token, and returns the status and the
// answer (at most MaxBytes) as they are: POST /api/graph/create reads its
// refusals itself (CreateGraphRequest).
func (s *Source) rawPost(ctx context.Context, path string, b []byte) (int, []byte, error) {
	a, err := s.api.Do(ctx, http.MethodPost, path, b)
	return a.Status, a.Body, err
}

// statusError is the classified error of a status the caller did not expect.
func (s *Source) statusError(status int, data []byte) error {
	return s.api.StatusError(status, data, "")
}

// saved reads the graph as the server last saved it (POST /api/graph/get). An
// unknown key is answered with an empty body, or a 500 when the graph is built:
// a 500 is asked again without building to tell the two apart.
func (s *Source) saved(ctx context.Context, graphKey string) (*nodiusgraph.Graph, error) {
	status, data, err := s.post(ctx, "/api/graph/get", map[string]any{"retrieveGraph": map[string]any{"token": graphKey, "buildGraph": true}})
	if err != nil {
		return nil, err
	}
	if status >= 500 {
		st2, d2, err2 := s.post(ctx, "/api/graph/get", map[string]any{"retrieveGraph": map[string]any{"token": graphKey, "buildGraph": false}})
		if err2 == nil && st2 == http.StatusOK && len(bytes.TrimSpace(d2)) == 0 {
			return nil, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		}
		return nil, s.statusError(status, data)
	}
	if status != http.StatusOK {
		return nil, s.statusError(status, data)
	}
	g, ok, err := nodiusgraph.Parse(data)
	if err != nil {
		return nil, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q is not valid JSON (%v) — is server: the Nodius server's URL?", graphKey, err)}
	}
	if !ok {
		return nil, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
	}
	if g.Key() == "" {
		g.Doc["_key"] = graphKey
	}
	if len(g.Sheets) == 0 {
		return nil, &fault.Error{Code: fault.ServerError,
			Message: fmt.Sprintf("the Nodius server sent graph %q without its sheets — is server: the Nodius server's URL?", graphKey)}
	}
	g.DropDanglingEdges() // as the server does when it loads the graph to edit it
	return g, nil
}

// nodeConfigs reads the node types the user can see (POST /api/nodeconfig/list)
// and keeps those of the graph's workspace and the built-in "root" one. defaults
// holds, by type, what a new node of that type starts with (the config's node:
// handles, size, data, and its version), as the server's createNodeFromConfig
// takes it.
func (s *Source) nodeConfigs(ctx context.Context, workspace string) (configs []datasource.NodeConfig, defaults map[string]typeDefaults, err error) {
	status, data, err := s.post(ctx, "/api/nodeconfig/list", map[string]any{})
	if err != nil {
		return nil, nil, err
	}
	if status != http.StatusOK {
		return nil, nil, s.statusError(status, data)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, &fault.Error{Code: fault.ServerError, Err: err, Message: "the Nodius server's node type list is not a JSON array"}
	}
	configs, defaults = []datasource.NodeConfig{}, map[string]typeDefaults{}
	for _, r := range raw {
		var c datasource.NodeConfig
		if json.Unmarshal(r, &c) != nil || c.Key == "" {
			continue
		}
		if c.Workspace != "" && c.Workspace != "root" && workspace != "" && c.Workspace != workspace {
			continue
		}
		var inner struct {
			Version any `json:"version"`
			Node    struct {
				Handles map[string]datasource.HandleGroup `json:"handles"`
			} `json:"node"`
		}
		var node struct {
			Node map[string]any `json:"node"`
		}
		if json.Unmarshal(r, &inner) == nil && len(c.Handles) == 0 {
			c.Handles = inner.Node.Handles
		}
		if json.Unmarshal(r, &node) == nil && node.Node != nil {
			defaults[c.Key] = typeDefaults{version: inner.Version, handles: node.Node["handles"], size: node.Node["size"], data: node.Node["data"]}
		}
		configs = append(configs, c)
	}
	return configs, defaults, nil
}

// typeDefaults is what a new node of a type starts with.
type typeDefaults struct {
	version, handles, size, data any
}

// Snapshot returns the graph as its editors have it now: the first read of a
// graph loads it and follows its editing socket; later ones answer from that
// copy (see follower).
func (s *Source) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	f, err := s.current(ctx, graphKey)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	snap, _, err := f.snapshot()
	return snap, err
}

// current returns the graph's follower with its copy current.
func (s *Source) current(ctx context.Context, graphKey string) (*follower, error) {
	f, err := s.follow(graphKey)
	if err != nil {
		return nil, err
	}
	if err := f.current(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// View returns a source that answers from the graph as it is now: a caller that
// reads several times for one answer (a tool call) takes a View, so the answer
// comes from one state. Views of an unchanged copy are one and the same.
func (s *Source) View(ctx context.Context, graphKey string) (datasource.Source, error) {
	f, err := s.current(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return f.viewOf()
}

// Graph returns the graph's metadata, from the copy.
func (s *Source) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	f, err := s.current(ctx, graphKey)
	if err != nil {
		return datasource.Graph{}, err
	}
	f.mu.Lock()
	gm, err := f.graph.Meta()
	f.mu.Unlock()
	if err != nil {
		return datasource.Graph{}, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q has a document this client cannot read: %v", graphKey, err)}
	}
	return gm, nil
}

// Nodes lists nodes, of one sheet when sheet is not empty.
func (s *Source) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return src.Nodes(ctx, graphKey, sheet)
}

// Edges lists edges, of one sheet when sheet is not empty.
func (s *Source) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return src.Edges(ctx, graphKey, sheet)
}

// Node returns one node.
func (s *Source) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return datasource.Node{}, err
	}
	return src.Node(ctx, graphKey, nodeKey)
}

// Configs lists the node types of the graph's workspace, read with the graph.
func (s *Source) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	f, err := s.current(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]datasource.NodeConfig{}, f.configs...), nil
}

// Search ranks nodes by text over the live graph.
func (s *Source) Search(ctx context.Context, graphKey, query string, limit int, queryEmbedding []float32) ([]datasource.ScoredNode, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return src.Search(ctx, graphKey, query, limit, queryEmbedding)
}

// Neighborhood walks the live graph breadth first.
func (s *Source) Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return datasource.Neighborhood{}, err
	}
	return src.Neighborhood(ctx, graphKey, nodeKey, depth, dir)
}
