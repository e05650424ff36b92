// Package server reads graphs from a running Nodius server's memory endpoint (seed
// 001's MemoryAwareDataSource, seen from outside the server): the live state of a
// graph being edited, with changes not yet saved to ArangoDB. A graph the server does
// not hold in memory (404) is read from the fallback source, usually ArangoDB.
//
// Each read fetches one snapshot (GET /api/ai/memory/{graphKey}) and answers from it
// in memory. Every call asks the server, so it sees the editor's current state; when
// the server sent an ETag or Last-Modified, the request is conditional and an
// unchanged graph (304) is answered from the snapshot kept (View pins one snapshot
// for a caller that reads several times). Approved
// proposals go to POST /api/ai/memory/{graphKey}/apply, with the state the person
// approving was shown as "expect" (see Source.ApplyAction).
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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/fault"
)

// DefaultTimeout bounds one request to the server (headers and body).
const DefaultTimeout = 30 * time.Second

// DefaultMaxBytes bounds one answer of the server (a graph snapshot): far above any
// real graph, low enough that a broken or hostile server cannot exhaust memory.
const DefaultMaxBytes = 32 << 20

// Options configure a Source.
type Options struct {
	// BaseURL is the Nodius server, e.g. https://nodius.example.com.
	BaseURL string
	// Token is the bearer JWT sent with every request ("" sends none).
	Token string
	// Fallback answers for graphs the server does not hold in memory; nil means
	// such graphs are not found.
	Fallback datasource.Source
	// Timeout bounds each request (default DefaultTimeout).
	Timeout time.Duration
	// HTTPClient replaces the default client (tests).
	HTTPClient *http.Client
	// MaxBytes bounds one answer, a snapshot (default DefaultMaxBytes; config key
	// max_snapshot_bytes). A larger answer fails with a sentence naming the key.
	MaxBytes int
}

// Source is a datasource.Source over a Nodius server's memory endpoint. It also
// applies whole actions through the server (datasource.ActionApplier).
type Source struct {
	base     *url.URL
	token    string
	fallback datasource.Source
	timeout  time.Duration
	hc       *http.Client
	maxBytes int
	// validated holds the last snapshot of each graph with the server's ETag or
	// Last-Modified, so an unchanged graph is revalidated instead of sent again.
	validated *revalidator
}

var (
	_ datasource.Source         = (*Source)(nil)
	_ datasource.Snapshotter    = (*Source)(nil)
	_ datasource.ActionApplier  = (*Source)(nil)
	_ datasource.Describer      = (*Source)(nil)
	_ datasource.VectorSearcher = (*Source)(nil)
)

// New checks the URL and returns a Source; it sends no request.
func New(opts Options) (*Source, error) {
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &fault.Error{Code: fault.Config,
			Message: fmt.Sprintf("server source needs an http:// or https:// URL (got %q) — use --source server:https://HOST", fault.MaskCredentials(opts.BaseURL))}
	}
	u.User = nil
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
	return &Source{base: u, token: opts.Token, fallback: opts.Fallback, timeout: timeout, hc: hc, maxBytes: maxBytes,
		validated: &revalidator{last: map[string]*validatedSnapshot{}}}, nil
}

// Describe names the server (and the fallback).
func (s *Source) Describe() string {
	d := "server:" + s.base.String()
	if s.fallback != nil {
		if fd, ok := s.fallback.(datasource.Describer); ok {
			d += " (fallback " + fd.Describe() + ")"
		} else {
			d += " (with fallback)"
		}
	}
	return d
}

// Close releases idle connections and closes the fallback when it can be closed.
func (s *Source) Close() error {
	if s == nil {
		return nil
	}
	s.hc.CloseIdleConnections()
	if c, ok := s.fallback.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// errNotInMemory says the server answered 404: the graph is not being edited now.
var errNotInMemory = errors.New("graph not held in the server's memory")

// memoryAnswer is the body of GET /api/ai/memory/{graphKey}.
type memoryAnswer struct {
	Graph  *datasource.Graph `json:"graph"`
	Sheets map[string]struct {
		Nodes []datasource.Node `json:"nodes"`
		Edges []datasource.Edge `json:"edges"`
	} `json:"sheets"`
	NodeConfigs []datasource.NodeConfig `json:"nodeConfigs"`
}

func (s *Source) endpoint(graphKey string, tail ...string) string {
	u := *s.base
	parts := append([]string{"api", "ai", "memory", graphKey}, tail...)
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	u.Path = strings.TrimRight(s.base.Path, "/") + "/" + strings.Join(parts, "/")
	u.RawPath = strings.TrimRight(s.base.EscapedPath(), "/") + "/" + strings.Join(esc, "/")
	return u.String()
}

// do sends one request and returns the body of a 2xx answer. 404 gives
// errNotInMemory; other failures are *fault.Error with a sentence to print.
func (s *Source) do(ctx context.Context, method, target string, body any) ([]byte, error) {
	data, _, err := s.doWith(ctx, method, target, body, nil)
	return data, err
}

// doWith is do with extra request headers, returning the answer's headers too;
// 304 gives errNotModified.
func (s *Source) doWith(ctx context.Context, method, target string, body any, hdr http.Header) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, nil, s.netError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.maxBytes)+1))
	if err != nil {
		return nil, nil, s.netError(ctx, err)
	}
	if len(data) > s.maxBytes {
		return nil, nil, fault.Limit("the Nodius server's answer", "max_snapshot_bytes", s.maxBytes)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return data, resp.Header, nil
	case resp.StatusCode == http.StatusNotModified:
		return nil, resp.Header, errNotModified
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil, errNotInMemory
	case resp.StatusCode == http.StatusUnauthorized:
		msg := "the Nodius server rejected the token (401) — set a valid JWT with --token or NODIUS_AI_TOKEN"
		if s.token == "" {
			msg = "the Nodius server wants a token (401) — pass a JWT with --token or NODIUS_AI_TOKEN"
		}
		return nil, nil, &fault.Error{Code: fault.Auth, Status: 401, Message: msg}
	case resp.StatusCode == http.StatusForbidden:
		return nil, nil, &fault.Error{Code: fault.Auth, Status: 403,
			Message: "the Nodius server refused access (403) — the token's user may not read or change this graph"}
	case resp.StatusCode == http.StatusConflict:
		return nil, nil, &refusedError{body: data, err: &fault.Error{Code: fault.InvalidRequest, Status: 409,
			Message: fmt.Sprintf("the Nodius server refused the request (409%s)", serverMessage(data))}}
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, nil, &fault.Error{Code: fault.RateLimit, Status: 429, Retryable: true,
			Message: "the Nodius server is rate limiting (429) — wait a moment and retry"}
	case resp.StatusCode >= 500:
		return nil, nil, &fault.Error{Code: fault.ServerError, Status: resp.StatusCode, Retryable: true,
			Message: fmt.Sprintf("the Nodius server failed (%d%s) — retry, or look at the server's log", resp.StatusCode, serverMessage(data))}
	default:
		return nil, nil, &fault.Error{Code: fault.InvalidRequest, Status: resp.StatusCode,
			Message: fmt.Sprintf("the Nodius server refused the request (%d%s)", resp.StatusCode, serverMessage(data))}
	}
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
		msg = msg[:200] + "…"
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

// fetch gets the graph's live snapshot. errNotInMemory means the server does not
// hold it.
func (s *Source) fetch(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	last, hdr := s.validated.conditions(graphKey)
	data, respHdr, err := s.doWith(ctx, http.MethodGet, s.endpoint(graphKey), nil, hdr)
	if errors.Is(err, errNotModified) && last != nil {
		return last.copy(), nil
	}
	if err != nil {
		return datasource.Snapshot{}, err
	}
	var ans memoryAnswer
	if err := json.Unmarshal(data, &ans); err != nil {
		return datasource.Snapshot{}, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server sent a malformed snapshot of graph %q (%v) — is server: the Nodius server's URL?", graphKey, err)}
	}
	if ans.Graph == nil {
		return datasource.Snapshot{}, &fault.Error{Code: fault.ServerError,
			Message: fmt.Sprintf("the Nodius server's snapshot of graph %q has no \"graph\" — is server: the Nodius server's URL?", graphKey)}
	}
	snap := assemble(graphKey, ans)
	s.validated.remember(graphKey, respHdr, snap)
	return snap, nil
}

// assemble flattens the sheets into one snapshot: nodes and edges get their sheet id
// when they lack it, edges seen twice (the server indexes each edge by its source and
// by its target) are kept once, and edges whose ends are not in the snapshot (an
// editor's transient state) are dropped.
func assemble(graphKey string, ans memoryAnswer) datasource.Snapshot {
	g := *ans.Graph
	if g.Key == "" {
		g.Key = graphKey
	}
	snap := datasource.Snapshot{Graph: g, Nodes: []datasource.Node{}, Edges: []datasource.Edge{}, Configs: ans.NodeConfigs}
	if snap.Configs == nil {
		snap.Configs = []datasource.NodeConfig{}
	}
	sheetIDs := make([]string, 0, len(ans.Sheets))
	for id := range ans.Sheets {
		sheetIDs = append(sheetIDs, id)
	}
	slices.Sort(sheetIDs)
	nodeSeen := map[string]bool{}
	for _, id := range sheetIDs {
		for _, n := range ans.Sheets[id].Nodes {
			if n.Key == "" || nodeSeen[n.Key] {
				continue
			}
			if n.Sheet == "" {
				n.Sheet = id
			}
			nodeSeen[n.Key] = true
			snap.Nodes = append(snap.Nodes, n)
		}
	}
	edgeSeen := map[string]bool{}
	for _, id := range sheetIDs {
		for _, e := range ans.Sheets[id].Edges {
			if e.Key == "" || edgeSeen[e.Key] || !nodeSeen[e.Source] || !nodeSeen[e.Target] {
				continue
			}
			if e.Sheet == "" {
				e.Sheet = id
			}
			edgeSeen[e.Key] = true
			snap.Edges = append(snap.Edges, e)
		}
	}
	return snap
}

// View reads the graph once and returns a source that answers from that one
// snapshot, or the fallback when the server does not hold the graph (nil fallback:
// not found). Every read of Source fetches the whole graph; a caller that reads
// several times for one answer (a tool call: the node, its edges, the type names)
// takes a View, so the answer costs one request and comes from one state.
func (s *Source) View(ctx context.Context, graphKey string) (datasource.Source, error) {
	snap, err := s.fetch(ctx, graphKey)
	if errors.Is(err, errNotInMemory) {
		if s.fallback == nil {
			return nil, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		}
		return s.fallback, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return nil, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's snapshot of graph %q is inconsistent: %v", graphKey, err)}
	}
	return st, nil
}

// Snapshot returns the graph as the editor holds it now (or as the fallback has it).
func (s *Source) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	snap, err := s.fetch(ctx, graphKey)
	if errors.Is(err, errNotInMemory) {
		if s.fallback == nil {
			return datasource.Snapshot{}, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		}
		return datasource.LoadSnapshot(ctx, s.fallback, graphKey)
	}
	return snap, err
}

// Graph returns the graph's metadata.
func (s *Source) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return datasource.Graph{}, err
	}
	return src.Graph(ctx, graphKey)
}

// Nodes lists nodes, of one sheet when sheet is not empty.
func (s *Source) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return src.Nodes(ctx, graphKey, sheet)
}

// Edges lists edges (each once), of one sheet when sheet is not empty.
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

// Configs lists the custom node types the server sent with the graph.
func (s *Source) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return src.Configs(ctx, graphKey)
}

// Search ranks nodes by text over the live graph (the fallback may use the embedding).
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

// VectorSearch ranks by similarity: over the live nodes' embeddings, or on the
// fallback's side. A fallback that cannot rank by vectors gives an error, and the
// retriever uses text ranking.
func (s *Source) VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]datasource.ScoredNode, error) {
	src, err := s.View(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	vs, ok := src.(datasource.VectorSearcher)
	if !ok {
		return nil, errors.New("the fallback source cannot rank by vectors")
	}
	return vs.VectorSearch(ctx, graphKey, queryEmbedding, limit)
}

// ApplyAction sends an approved action to the server, which applies it to the live
// graph and its editors. A graph the server does not hold goes to the fallback.
//
// The server's apply endpoint reports no steps (datasource.Record): the recorder is
// fed on a fresh snapshot read right before the action is sent. What the person
// approving was shown (datasource.Expect) is checked on that snapshot too, and also
// sent with the action as "expect", the datasource.Precondition the graph must
// meet: a server that honours it checks it in the same step as the change and
// answers 409 {"applied": false, "conflicts": [...]} when it does not hold, which
// is a *datasource.ConflictError here. Today's servers ignore the field, so a
// change made in the server between the snapshot and the apply is not seen: only
// the server can close that gap.
func (s *Source) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	o := datasource.ApplyOptionsOf(opts)
	if err := s.beforeApply(ctx, graphKey, a, o); err != nil {
		return datasource.ApplyResult{}, err
	}
	body := map[string]any{"action": a}
	if o.Expect != nil {
		if pre := datasource.PreconditionOf(*o.Expect); !pre.Empty() {
			body["expect"] = pre
		}
	}
	data, err := s.do(ctx, http.MethodPost, s.endpoint(graphKey, "apply"), body)
	var refused *refusedError
	if errors.As(err, &refused) {
		if conflict := conflictOf(refused.body); conflict != nil {
			return datasource.ApplyResult{}, conflict
		}
	}
	if errors.Is(err, errNotInMemory) {
		if s.fallback == nil {
			return datasource.ApplyResult{}, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		}
		return datasource.Apply(ctx, s.fallback, graphKey, a, opts...)
	}
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	var res datasource.ApplyResult
	if err := json.Unmarshal(data, &res); err != nil {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's answer to apply was malformed (%v); the change may or may not be applied — check the graph", err)}
	}
	if res.Created.Nodes == nil {
		res.Created.Nodes = []string{}
	}
	if res.Created.Edges == nil {
		res.Created.Edges = []string{}
	}
	if !res.Applied {
		if conflict := conflictOf(data); conflict != nil {
			return datasource.ApplyResult{}, conflict
		}
		return res, &fault.Error{Code: fault.InvalidRequest,
			Message: fmt.Sprintf("the Nodius server did not apply the change to graph %q%s", graphKey, noteSuffix(res.Note))}
	}
	return res, nil
}

// beforeApply checks an expectation and feeds a recorder on one snapshot of the
// graph, read right before the action is sent: the recorder sees the action made on
// an in-memory copy of it.
func (s *Source) beforeApply(ctx context.Context, graphKey string, a datasource.Action, o datasource.ApplyOptions) error {
	if o.Expect == nil && o.Record == nil {
		return nil
	}
	snap, err := datasource.LoadSnapshot(ctx, s, graphKey)
	if err != nil {
		return err
	}
	if o.Expect != nil {
		if err := datasource.CheckShown(datasource.SnapshotLookup(snap), *o.Expect); err != nil {
			return &datasource.ConflictError{Err: err}
		}
	}
	if o.Record != nil {
		snap.Graph.Key = graphKey
		sim, err := memgraph.New([]datasource.Snapshot{snap})
		if err != nil {
			return err
		}
		// A copy that refuses the action leaves the recorder with that failure: the
		// server, not the copy, decides whether the action applies.
		_, _ = sim.ApplyAction(ctx, graphKey, a, datasource.Record(o.Record))
	}
	return nil
}

// refusedError is a 409 answer: the server refused the request as it stands. Its
// body is kept for apply, which reads the conflicts a server honouring "expect"
// lists; anything else sees the classified error it wraps.
type refusedError struct {
	body []byte
	err  *fault.Error
}

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// maxConflicts bounds how many of the server's reasons are kept, and how long each.
const (
	maxConflicts     = 10
	maxConflictBytes = 300
)

// conflictOf reads {"applied": false, "conflicts": ["..."]}, the answer of a server
// that found the graph not to be what the person approving was shown, into a
// *datasource.ConflictError (nil when the answer lists no conflict).
func conflictOf(body []byte) error {
	var ans struct {
		Applied   bool     `json:"applied"`
		Conflicts []string `json:"conflicts"`
	}
	if json.Unmarshal(body, &ans) != nil || ans.Applied || len(ans.Conflicts) == 0 {
		return nil
	}
	reasons := ans.Conflicts[:min(len(ans.Conflicts), maxConflicts)]
	for i, r := range reasons {
		if r = strings.TrimSpace(r); len(r) > maxConflictBytes {
			r = strings.ToValidUTF8(r[:maxConflictBytes], "") + "…"
		}
		reasons[i] = r
	}
	return &datasource.ConflictError{Err: fmt.Errorf("%w (the Nodius server says): %s", datasource.ErrGraphChanged, strings.Join(reasons, "; "))}
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}
