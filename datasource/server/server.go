// Package server reads and changes graphs held by a running Nodius server, the way
// the server offers them (DESIGN.md, "The Nodius server").
//
// Reading: the server has no endpoint for the graph as it is being edited. POST
// /api/graph/get answers the state it last saved (it saves from memory about every
// 30 s), and registering on the editing WebSocket (registerUserOnGraph) with
// fromTimestamp = the graph's lastUpdatedTime answers the editing messages made
// since (missingMessages). The live graph is the saved one with those messages
// replayed (package nodiusgraph). When the socket cannot be had, the saved state is
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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/server/editsock"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusws"
)

// DefaultTimeout bounds one HTTP request to the server (headers and body).
const DefaultTimeout = 30 * time.Second

// DefaultMaxBytes bounds one answer of the server (a graph): far above any real
// graph, low enough that a broken or hostile server cannot exhaust memory.
const DefaultMaxBytes = 32 << 20

// DefaultEditorName is the name other editors of the graph see for this client.
const DefaultEditorName = "nodius-ai (terminal)"

// Options configure a Source.
type Options struct {
	// BaseURL is the Nodius server, e.g. https://nodius.example.com.
	BaseURL string
	// Token is the user's JWT: HTTP calls send it as a bearer token, the WebSocket
	// in its authenticate frame. It goes to no other host.
	Token string
	// WSURL overrides where the WebSocket is (nodiusws.Address: by default
	// wss://host/ws for an https server, ws://host:port+2000 for an http one).
	WSURL string
	// Timeout bounds each HTTP request (default DefaultTimeout).
	Timeout time.Duration
	// AckTimeout bounds each acknowledgement on the editing socket.
	AckTimeout time.Duration
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
// (nodiusws.Applier) through the editing socket.
type Source struct {
	base     *url.URL
	token    string
	wsURL    string
	timeout  time.Duration
	ackWait  time.Duration
	hc       *http.Client
	maxBytes int
	name     string
	notify   func(string)

	mu       sync.Mutex
	said     map[string]bool
	lastNote string
}

var (
	_ datasource.Source        = (*Source)(nil)
	_ datasource.Snapshotter   = (*Source)(nil)
	_ datasource.ActionApplier = (*Source)(nil)
	_ datasource.Describer     = (*Source)(nil)
	_ nodiusws.Applier         = (*Source)(nil)
)

// New checks the URLs and returns a Source; it sends no request.
func New(opts Options) (*Source, error) {
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &fault.Error{Code: fault.Config,
			Message: fmt.Sprintf("server source needs an http:// or https:// URL (got %q) — use --source server:https://HOST", fault.MaskCredentials(opts.BaseURL))}
	}
	u.User = nil
	ws, err := nodiusws.Address(u, opts.WSURL)
	if err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout: timeout,
			Transport: &http.Transport{
				Proxy:                 http.ProxyFromEnvironment,
				DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
				TLSHandshakeTimeout:   10 * time.Second,
				ResponseHeaderTimeout: timeout,
				MaxIdleConns:          8,
				IdleConnTimeout:       90 * time.Second,
			},
		}
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	name := opts.EditorName
	if name == "" {
		name = DefaultEditorName
	}
	return &Source{base: u, token: opts.Token, wsURL: ws, timeout: timeout, ackWait: opts.AckTimeout, hc: hc,
		maxBytes: maxBytes, name: name, notify: opts.Notice, said: map[string]bool{}}, nil
}

// Describe names the server, and says when the last read had only the saved state.
func (s *Source) Describe() string {
	d := "server:" + s.base.String()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastNote != "" {
		d += " (" + s.lastNote + ")"
	}
	return d
}

// Close releases idle connections.
func (s *Source) Close() error {
	if s != nil {
		s.hc.CloseIdleConnections()
	}
	return nil
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

func (s *Source) endpoint(path string) string {
	u := *s.base
	u.Path = strings.TrimRight(s.base.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// post sends one JSON request and returns the status and body of the answer.
// Transport failures and the statuses every endpoint shares (401, 403, 429, 5xx
// except where the caller reads them) are *fault.Error with a sentence to print.
func (s *Source) post(ctx context.Context, path string, body any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint(path), bytes.NewReader(b))
	if err != nil {
		return 0, nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, nil, s.netError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.maxBytes)+1))
	if err != nil {
		return 0, nil, s.netError(ctx, err)
	}
	if len(data) > s.maxBytes {
		return 0, nil, fault.Limit("the Nodius server's answer", "max_snapshot_bytes", s.maxBytes)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		msg := "the Nodius server refused the token (401" + serverMessage(data) + ") — it may have expired or been revoked by a newer login: give a fresh one with --token or NODIUS_AI_TOKEN"
		if s.token == "" {
			msg = "the Nodius server wants a token (401) — pass a JWT with --token or NODIUS_AI_TOKEN"
		}
		return resp.StatusCode, nil, &fault.Error{Code: fault.Auth, Status: 401, Message: msg}
	case resp.StatusCode == http.StatusForbidden:
		return resp.StatusCode, nil, &fault.Error{Code: fault.Auth, Status: 403,
			Message: "the Nodius server refused access (403" + serverMessage(data) + ") — the token's user may not read this graph's workspace"}
	case resp.StatusCode == http.StatusTooManyRequests:
		return resp.StatusCode, nil, &fault.Error{Code: fault.RateLimit, Status: 429, Retryable: true,
			Message: "the Nodius server is rate limiting (429) — wait a moment and retry"}
	}
	return resp.StatusCode, data, nil
}

func statusError(status int, data []byte) error {
	if status >= 500 {
		return &fault.Error{Code: fault.ServerError, Status: status, Retryable: true,
			Message: fmt.Sprintf("the Nodius server failed (%d%s) — retry, or look at the server's log", status, serverMessage(data))}
	}
	return &fault.Error{Code: fault.InvalidRequest, Status: status,
		Message: fmt.Sprintf("the Nodius server refused the request (%d%s) — is server: the Nodius server's URL?", status, serverMessage(data))}
}

// serverMessage extracts {"error": "..."} or {"message": "..."} from an error body.
func serverMessage(body []byte) string {
	var m struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	msg := m.Message
	if s, ok := m.Error.(string); ok && msg == "" {
		msg = s
	}
	msg = strings.TrimSpace(strings.ReplaceAll(msg, "\n", " "))
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func (s *Source) netError(ctx context.Context, err error) error {
	where := s.base.Host
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return &fault.Error{Code: fault.Interrupted, Message: "request to the Nodius server cancelled", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("the Nodius server at %s did not answer within %s — check that it is up, then retry", where, s.timeout)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot connect to the Nodius server at %s (connection refused) — is it running, and is the URL right?", where)}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &fault.Error{Code: fault.Network, Err: err,
			Message: fmt.Sprintf("cannot resolve the Nodius server host %q — check the server: URL", dns.Name)}
	}
	return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
		Message: fmt.Sprintf("cannot reach the Nodius server at %s — check the network and the server: URL", where)}
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
		return nil, statusError(status, data)
	}
	if status != http.StatusOK {
		return nil, statusError(status, data)
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
		return nil, nil, statusError(status, data)
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

// live is a graph as the editors have it: the saved state, with the editing
// messages since its save replayed, and the socket that registered for them, still
// open and registered on every sheet when keep is true (to apply through it).
type live struct {
	graph    *nodiusgraph.Graph
	conn     *editsock.Conn    // nil: only the saved state could be had
	regSeq   map[string]uint64 // each sheet's registration's place among the frames
	replayed int
	failed   int
	why      string // when conn is nil: why the socket could not be had

	mu   sync.Mutex
	late []broadcast // editing messages other clients made after the registrations
}

type broadcast struct {
	msg json.RawMessage
	seq uint64
}

// close closes the socket (see editsock.Conn.Close for why it sends no
// disconnedUserOnGraph).
func (l *live) close() {
	if l.conn != nil {
		_ = l.conn.Close()
	}
}

// load reads the live graph. A socket that cannot be opened or registered leaves
// the saved state with why set, unless the token is refused (an auth error) or keep
// is true (applying needs the socket).
func (s *Source) load(ctx context.Context, graphKey string, keep bool) (*live, error) {
	g, err := s.saved(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	l := &live{graph: g, regSeq: map[string]uint64{}}
	conn, err := editsock.Dial(ctx, s.wsURL, editsock.Options{
		Options:    nodiusws.Options{Token: s.token, HTTPClient: s.hc},
		AckTimeout: s.ackWait,
		OnBroadcast: func(msg json.RawMessage, seq uint64) {
			l.mu.Lock()
			l.late = append(l.late, broadcast{msg, seq})
			l.mu.Unlock()
		},
	})
	refused := false // the token itself was refused: an error, not a notice
	if err != nil {
		var fe *fault.Error
		refused = errors.As(err, &fe) && fe.Code == fault.Auth
	} else {
		l.conn = conn
		err = s.register(ctx, l)
		if err != nil {
			l.close()
			l.conn = nil
		}
	}
	if err != nil {
		if keep || refused || ctx.Err() != nil {
			return nil, err
		}
		l.why = err.Error()
		s.note("saved", "saved state only", fmt.Sprintf("only the state the Nodius server last saved could be read for graph %q (it saves about every 30 s, so recent edits may be missing): %s", graphKey, l.why))
		return l, nil
	}
	if !keep {
		l.close()
		l.conn = nil
	}
	switch {
	case l.failed > 0:
		s.note("replay", fmt.Sprintf("live, %d editing messages not replayed", l.failed), fmt.Sprintf(
			"%d of the %d editing messages made since graph %q was last saved could not be replayed: what is shown may differ from the editors' graph", l.failed, l.failed+l.replayed, graphKey))
	default:
		s.note("live", fmt.Sprintf("live: saved state + %d editing messages", l.replayed), "")
	}
	return l, nil
}

// register registers l.conn on every sheet from the graph's save time and, once
// all are registered, replays the messages each answered: a registration refused
// part-way leaves the saved state untouched, which is what the note then says.
// The server files an instruction message under each sheet it touches and a batch
// under the sender's sheet, so each is replayed once.
func (s *Source) register(ctx context.Context, l *live) error {
	from := l.graph.LastUpdated()
	ids := l.graph.SheetIDs()
	missing := make([][]json.RawMessage, len(ids))
	for i, id := range ids {
		reg, err := l.conn.Register(ctx, l.graph.Key(), id, s.name, from)
		if err != nil {
			var re *editsock.RefusedError
			if errors.As(err, &re) {
				code := fault.ServerError
				if strings.Contains(re.Message, "Access denied") {
					code = fault.Auth
				}
				return &fault.Error{Code: code, Err: err, Message: fmt.Sprintf(
					"the Nodius server would not register this client as an editor of graph %q (sheet %s): %s", l.graph.Key(), id, re.Message)}
			}
			return err
		}
		missing[i] = reg.Missing
		l.regSeq[id] = reg.Seq
	}
	for i, id := range ids {
		for _, m := range missing[i] {
			if err := l.graph.Replay(m, id); err != nil {
				l.failed++
			} else {
				l.replayed++
			}
		}
	}
	return nil
}

// catchUp applies the editing messages other clients made since the registrations
// and reports how many. A message that reached this socket before the registration
// of a sheet it touches is in that registration's answer: only the parts for sheets
// registered before it are applied here. A batch counted twice that way is refused
// by the copy (its keys exist, or are gone) and changes nothing.
func (l *live) catchUp() int {
	l.mu.Lock()
	late := l.late
	l.late = nil
	l.mu.Unlock()
	n := 0
	for _, b := range late {
		var m nodiusgraph.Message
		if json.Unmarshal(b.msg, &m) != nil {
			continue
		}
		before := func(sheet string) bool { seq, ok := l.regSeq[sheet]; return ok && seq < b.seq }
		switch m.Type {
		case "applyInstructionToGraph":
			var mine []nodiusgraph.GraphInstruction
			for _, in := range m.Instructions {
				if before(in.SheetID) {
					mine = append(mine, in)
				}
			}
			if len(mine) > 0 && l.graph.ApplyInstructions(mine) == nil {
				n++
			}
		case "batchCreateElements":
			if before(m.SheetID) && l.graph.BatchCreate(m.SheetID, m.Nodes, m.Edges) == nil {
				n++
			}
		case "batchDeleteElements":
			if before(m.SheetID) && l.graph.BatchDelete(m.SheetID, m.NodeKeys, m.EdgeKeys) == nil {
				n++
			}
		}
	}
	return n
}

// types reads the node types of a workspace. Only a refused token is an error:
// without the types, nodes are shown without their type's description.
func (s *Source) types(ctx context.Context, workspace string) ([]datasource.NodeConfig, error) {
	configs, _, err := s.nodeConfigs(ctx, workspace)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Code == fault.Auth {
			return nil, err
		}
		s.note("types", "node types unavailable", "the Nodius server's node types could not be read ("+err.Error()+"): nodes are shown without their type's description")
		return []datasource.NodeConfig{}, nil
	}
	return configs, nil
}

// snapshotOf converts a live graph, with the node types of its workspace.
func (s *Source) snapshotOf(ctx context.Context, l *live) (datasource.Snapshot, error) {
	snap, err := l.graph.Snapshot()
	if err != nil {
		return datasource.Snapshot{}, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q has a node or edge this client cannot read: %v", l.graph.Key(), err)}
	}
	configs, err := s.types(ctx, snap.Graph.Workspace)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	snap.Configs = configs
	// A node's code is its type's (node.process of the node type): resolved here so
	// that retrieval, the read tools and the pictures find it. A node of a type
	// without code keeps what it carries itself (a built-in type's node).
	datasource.CodeFromTypes(snap.Nodes, configs)
	return snap, nil
}

// Snapshot returns the graph as its editors have it now.
func (s *Source) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	l, err := s.load(ctx, graphKey, false)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	return s.snapshotOf(ctx, l)
}

// View reads the graph once and returns a source that answers from that one
// snapshot: a caller that reads several times for one answer (a tool call) takes a
// View, so the answer costs one read and comes from one state.
func (s *Source) View(ctx context.Context, graphKey string) (datasource.Source, error) {
	snap, err := s.Snapshot(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	st, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return nil, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q is inconsistent: %v", graphKey, err)}
	}
	return st, nil
}

// meta reads the graph document from the saved state: editing messages never
// change it, so no socket is opened (Graph is the agent's existence check).
func (s *Source) meta(ctx context.Context, graphKey string) (datasource.Graph, error) {
	g, err := s.saved(ctx, graphKey)
	if err != nil {
		return datasource.Graph{}, err
	}
	gm, err := g.Meta()
	if err != nil {
		return datasource.Graph{}, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q has a document this client cannot read: %v", graphKey, err)}
	}
	return gm, nil
}

// Graph returns the graph's metadata (one POST /api/graph/get).
func (s *Source) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	return s.meta(ctx, graphKey)
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

// Configs lists the node types of the graph's workspace: the saved document
// names the workspace, so no socket is opened.
func (s *Source) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	gm, err := s.meta(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return s.types(ctx, gm.Workspace)
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
