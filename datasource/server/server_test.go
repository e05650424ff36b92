package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/undo"
	"github.com/nodius/nodius-ai/internal/fault"
)

const token = "jwt-123"

// memoryBody is the live graph "live": two sheets, every edge listed twice as the
// server's edgeMap does (by source and by target), one node without a sheet field.
const memoryBody = `{
  "graph": {"_key": "live", "name": "Live", "workspace": "ws1", "sheets": {"0": "main", "1": "aux"}},
  "sheets": {
    "0": {"nodes": [
            {"_key": "root", "type": "starter", "sheet": "0"},
            {"_key": "fetch", "type": "api-call", "sheet": "0", "process": "fetch(url)", "embedding": [1, 0]},
            {"_key": "shape", "type": "js", "process": "reshape rows", "embedding": [0, 1]}],
          "edges": [
            {"_key": "e1", "sheet": "0", "source": "root", "target": "fetch"},
            {"_key": "e1", "sheet": "0", "source": "root", "target": "fetch"},
            {"_key": "e2", "sheet": "0", "source": "fetch", "target": "shape"},
            {"_key": "e2", "sheet": "0", "source": "fetch", "target": "shape"},
            {"_key": "dangling", "sheet": "0", "source": "fetch", "target": "gone"}]},
    "1": {"nodes": [{"_key": "aux", "type": "js", "sheet": "1"}], "edges": []}
  },
  "nodeConfigs": [{"_key": "api-call", "displayName": "API Call"}]
}`

// fakeServer implements the memory endpoint contract for graph "live".
type fakeServer struct {
	mu      sync.Mutex
	applied []json.RawMessage
	expects []json.RawMessage // the "expect" of each apply request, as sent
	gets    int
	status  int           // forced status for every request, when not 0
	body    string        // replaces memoryBody, when not ""
	delay   time.Duration // before answering
	// honour makes apply check "expect" (a datasource.Precondition) against the
	// graph it holds, in the same step as the apply, as a server honouring it would:
	// 409 {"applied": false, "conflicts": [...]} when it does not hold.
	honour bool
	// beforeApply, when set, runs as an apply request arrives, before anything is
	// checked: an editor changing the live graph at that moment.
	beforeApply func(f *fakeServer)
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	status, body, delay := f.status, f.body, f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if r.Header.Get("Authorization") != "Bearer "+token {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":"boom"}`))
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/ai/memory/live":
		f.mu.Lock()
		f.gets++
		f.mu.Unlock()
		if body == "" {
			body = memoryBody
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	case r.Method == http.MethodPost && r.URL.Path == "/api/ai/memory/live/apply":
		var req struct {
			Action json.RawMessage `json:"action"`
			Expect json.RawMessage `json:"expect"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Action) == 0 {
			http.Error(w, `{"error":"no action"}`, http.StatusBadRequest)
			return
		}
		if f.beforeApply != nil {
			f.beforeApply(f)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.expects = append(f.expects, req.Expect)
		if f.honour && len(req.Expect) > 0 {
			if conflicts := f.unmet(req.Expect); len(conflicts) > 0 {
				w.WriteHeader(http.StatusConflict)
				_ = json.NewEncoder(w).Encode(map[string]any{"applied": false, "conflicts": conflicts})
				return
			}
		}
		f.applied = append(f.applied, req.Action)
		_, _ = w.Write([]byte(`{"applied": true, "created": {"nodes": ["n1"], "edges": []}}`))
	default:
		http.Error(w, `{"error":"graph not in memory"}`, http.StatusNotFound)
	}
}

// unmet checks a precondition against the graph the fake holds and lists what
// differs. f.mu is held.
func (f *fakeServer) unmet(expect json.RawMessage) []string {
	var pre datasource.Precondition
	if err := json.Unmarshal(expect, &pre); err != nil {
		return []string{"malformed expect: " + err.Error()}
	}
	body := f.body
	if body == "" {
		body = memoryBody
	}
	var ans memoryAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		return []string{"malformed graph: " + err.Error()}
	}
	if err := pre.Check(datasource.SnapshotLookup(assemble("live", ans))); err != nil {
		return strings.Split(strings.TrimPrefix(err.Error(), datasource.ErrGraphChanged.Error()+": "), "; ")
	}
	return nil
}

func newTestSource(t *testing.T, f *fakeServer, fallback datasource.Source, tok string, timeout time.Duration) *Source {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := New(Options{BaseURL: srv.URL + "/", Token: tok, Fallback: fallback, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fallbackStore holds graph "stored", which the server does not have in memory.
func fallbackStore(t *testing.T) *memgraph.Store {
	t.Helper()
	st, err := memgraph.New([]datasource.Snapshot{{
		Graph: datasource.Graph{Key: "stored", Name: "Stored"},
		Nodes: []datasource.Node{{Key: "a", Type: "js"}, {Key: "b", Type: "js"}},
		Edges: []datasource.Edge{{Key: "ab", Source: "a", Target: "b"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func keys[T any](xs []T, key func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, key(x))
	}
	sort.Strings(out)
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestLiveGraph(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := newTestSource(t, f, fallbackStore(t), token, 0)
	ctx := ctxT(t)

	snap, err := s.Snapshot(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(snap.Nodes, func(n datasource.Node) string { return n.Key }); !slices.Equal(got, []string{"aux", "fetch", "root", "shape"}) {
		t.Errorf("nodes = %v", got)
	}
	if got := keys(snap.Edges, func(e datasource.Edge) string { return e.Key }); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Errorf("edges = %v, want each once and no dangling edge", got)
	}
	n, err := s.Node(ctx, "live", "shape")
	if err != nil || n.Sheet != "0" || n.Process != "reshape rows" {
		t.Errorf("node = %+v, %v (sheet filled from the sheet id)", n, err)
	}
	sheet1, err := s.Nodes(ctx, "live", "1")
	if err != nil || len(sheet1) != 1 || sheet1[0].Key != "aux" {
		t.Errorf("sheet 1 = %+v, %v", sheet1, err)
	}
	edges, err := s.Edges(ctx, "live", "")
	if err != nil || len(edges) != 2 {
		t.Errorf("edges = %+v, %v", edges, err)
	}
	cfgs, err := s.Configs(ctx, "live")
	if err != nil || len(cfgs) != 1 {
		t.Errorf("configs = %+v, %v", cfgs, err)
	}
	nb, err := s.Neighborhood(ctx, "live", "fetch", 1, datasource.Any)
	if err != nil || !slices.Equal(keys(nb.Nodes, func(n datasource.Node) string { return n.Key }), []string{"fetch", "root", "shape"}) {
		t.Errorf("neighborhood = %+v, %v", nb, err)
	}
	hits, err := s.Search(ctx, "live", "reshape", 3, nil)
	if err != nil || len(hits) == 0 || hits[0].Node.Key != "shape" {
		t.Errorf("search = %+v, %v", hits, err)
	}
	vh, err := s.VectorSearch(ctx, "live", []float32{0.1, 1}, 3)
	if err != nil || len(vh) == 0 || vh[0].Node.Key != "shape" {
		t.Errorf("vector search = %+v, %v", vh, err)
	}
	if _, err := s.Node(ctx, "live", "nope"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("missing node: %v", err)
	}
	f.mu.Lock()
	gets := f.gets
	f.mu.Unlock()
	if gets < 9 {
		t.Errorf("%d GETs: every call should read the live state", gets)
	}
}

func TestFallback(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := newTestSource(t, &fakeServer{}, fallbackStore(t), token, 0)
	g, err := s.Graph(ctx, "stored")
	if err != nil || g.Name != "Stored" {
		t.Fatalf("fallback graph = %+v, %v", g, err)
	}
	snap, err := s.Snapshot(ctx, "stored")
	if err != nil || len(snap.Nodes) != 2 {
		t.Errorf("fallback snapshot = %+v, %v", snap, err)
	}
	// Apply to a graph not in memory goes through the fallback.
	res, err := s.ApplyAction(ctx, "stored", datasource.Action{Type: datasource.CreateNodeAction,
		CreateNode: &datasource.CreateNodePayload{NodeKey: "c", TypeKey: "starter"}})
	if err != nil || !slices.Equal(res.Created.Nodes, []string{"c"}) {
		t.Errorf("fallback apply = %+v, %v", res, err)
	}
	if _, err := s.Node(ctx, "stored", "c"); err != nil {
		t.Errorf("node applied through the fallback not found: %v", err)
	}

	none := newTestSource(t, &fakeServer{}, nil, token, 0)
	if _, err := none.Graph(ctx, "stored"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("no fallback: %v, want not found", err)
	}
	if _, err := none.ApplyAction(ctx, "stored", datasource.Action{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "a"}}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("no fallback apply: %v, want not found", err)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := newTestSource(t, f, nil, token, 0)
	a := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{TypeKey: "js", Sheet: "0"}}
	res, err := datasource.Apply(ctxT(t), s, "live", a)
	if err != nil || !res.Applied || !slices.Equal(res.Created.Nodes, []string{"n1"}) || res.Created.Edges == nil {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.applied) != 1 {
		t.Fatalf("server got %d actions", len(f.applied))
	}
	var got datasource.Action
	if err := json.Unmarshal(f.applied[0], &got); err != nil || got.Type != datasource.CreateNodeAction || got.CreateNode.TypeKey != "js" {
		t.Errorf("server got action %s (%v)", f.applied[0], err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		f        *fakeServer
		token    string
		timeout  time.Duration
		code     fault.Code
		contains string
	}{
		{"no token", &fakeServer{}, "", 0, fault.Auth, "wants a token"},
		{"bad token", &fakeServer{}, "nope", 0, fault.Auth, "rejected the token"},
		{"forbidden", &fakeServer{status: 403}, token, 0, fault.Auth, "403"},
		{"server error", &fakeServer{status: 502}, token, 0, fault.ServerError, "502: boom"},
		{"malformed JSON", &fakeServer{body: `{"graph": {"_key": "live"}, "sheets": [`}, token, 0, fault.ServerError, "malformed"},
		{"not a snapshot", &fakeServer{body: `{"hello": "world"}`}, token, 0, fault.ServerError, "no \"graph\""},
		{"slow answer", &fakeServer{delay: 2 * time.Second}, token, 100 * time.Millisecond, fault.Timeout, "did not answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestSource(t, tc.f, fallbackStore(t), tc.token, tc.timeout)
			_, err := s.Graph(ctxT(t), "live")
			ce, ok := fault.As(err)
			if !ok || ce.Code != tc.code || !strings.Contains(ce.Message, tc.contains) {
				t.Fatalf("err = %v, want %s containing %q", err, tc.code, tc.contains)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("token in error: %v", err)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		s, err := New(Options{BaseURL: "http://" + addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Graph(ctxT(t), "live")
		if ce, ok := fault.As(err); !ok || ce.Code != fault.Network {
			t.Errorf("err = %v, want network", err)
		}
	})
	if _, err := New(Options{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp URL accepted")
	}
}

func TestEndpointEscapesKeys(t *testing.T) {
	t.Parallel()
	s, err := New(Options{BaseURL: "https://nodius.example.com/base/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.endpoint("a/b?c", "apply"); got != "https://nodius.example.com/base/api/ai/memory/a%2Fb%3Fc/apply" {
		t.Errorf("endpoint = %s", got)
	}
	if d := s.Describe(); d != "server:https://nodius.example.com/base" {
		t.Errorf("Describe = %s", d)
	}
}

// TestViewReadsOnce: a View answers several reads from one GET; a graph the server
// does not hold is the fallback's.
func TestViewReadsOnce(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := newTestSource(t, f, fallbackStore(t), token, 0)
	ctx := ctxT(t)
	v, err := s.View(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := v.Node(ctx, "live", "shape"); err != nil || n.Process != "reshape rows" {
		t.Errorf("node = %+v, %v", n, err)
	}
	if edges, err := v.Edges(ctx, "live", ""); err != nil || len(edges) != 2 {
		t.Errorf("edges = %+v, %v", edges, err)
	}
	if g, err := v.Graph(ctx, "live"); err != nil || g.Name != "Live" {
		t.Errorf("graph = %+v, %v", g, err)
	}
	f.mu.Lock()
	gets := f.gets
	f.mu.Unlock()
	if gets != 1 {
		t.Errorf("%d GETs for one view, want 1", gets)
	}
	fb, err := s.View(ctx, "stored")
	if err != nil {
		t.Fatal(err)
	}
	if g, err := fb.Graph(ctx, "stored"); err != nil || g.Name != "Stored" {
		t.Errorf("fallback view graph = %+v, %v", g, err)
	}
	none := newTestSource(t, &fakeServer{}, nil, token, 0)
	if _, err := none.View(ctx, "stored"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("no fallback: %v, want not found", err)
	}
}

// TestSnapshotLimit: a snapshot over MaxBytes is refused with a sentence naming
// max_snapshot_bytes, without reading the rest.
func TestSnapshotLimit(t *testing.T) {
	t.Parallel()
	f := &fakeServer{body: `{"graph":{"_key":"live","name":"` + strings.Repeat("x", 200_000) + `"},"sheets":{}}`}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := New(Options{BaseURL: srv.URL, Token: token, MaxBytes: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Nodes(ctxT(t), "live", "")
	fe, ok := fault.As(err)
	if !ok || fe.Code != fault.BudgetExceeded || !strings.Contains(fe.Message, "max_snapshot_bytes") {
		t.Fatalf("Nodes of a 200 KB snapshot with a 100 KB limit = %v", err)
	}
	// The same snapshot under the default limit is fine.
	s2, _ := New(Options{BaseURL: srv.URL, Token: token})
	if _, err := s2.Nodes(ctxT(t), "live", ""); err != nil {
		t.Fatalf("default limit: %v", err)
	}
}

// The apply endpoint takes no expectation: what the person approving was shown is
// checked on a fresh snapshot before the action is sent, and nothing is sent when
// the graph differs.
func TestApplyExpect(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := newTestSource(t, f, nil, token, 0)
	ctx := ctxT(t)
	edges, err := s.Edges(ctx, "live", "")
	if err != nil {
		t.Fatal(err)
	}
	var shown []datasource.Edge
	for _, e := range edges {
		if e.Source == "fetch" || e.Target == "fetch" {
			shown = append(shown, e)
		}
	}
	if len(shown) < 2 {
		t.Fatalf("fetch has %d edges", len(shown))
	}
	del := datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch", RemovedEdges: shown[1:]}}
	if _, err := datasource.Apply(ctx, s, "live", del, datasource.Expect(del)); !datasource.IsConflict(err) || !strings.Contains(err.Error(), shown[0].Key) {
		t.Fatalf("apply with an edge not shown: %v", err)
	}
	f.mu.Lock()
	sent := len(f.applied)
	f.mu.Unlock()
	if sent != 0 {
		t.Fatalf("%d actions sent although the graph differs from what was shown", sent)
	}
	del.DeleteNode.RemovedEdges = shown
	if _, err := datasource.Apply(ctx, s, "live", del, datasource.Expect(del)); err != nil {
		t.Fatalf("apply as shown: %v", err)
	}
	f.mu.Lock()
	sent = len(f.applied)
	f.mu.Unlock()
	if sent != 1 {
		t.Fatalf("%d actions sent, want 1", sent)
	}
}

// The apply endpoint reports no steps: a recorder (datasource.Record) is fed on a
// fresh snapshot read right before the action is sent — for a deleted node, the
// node and every edge it takes.
func TestApplyRecord(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	s := newTestSource(t, f, nil, token, 0)
	ctx := ctxT(t)
	node, err := s.Node(ctx, "live", "fetch")
	if err != nil {
		t.Fatal(err)
	}
	edges, err := s.Edges(ctx, "live", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range edges {
		if e.Source == "fetch" || e.Target == "fetch" {
			want[e.Key] = true
		}
	}
	rec := undo.NewRecorder()
	del := datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch"}}
	if _, err := datasource.Apply(ctx, s, "live", del, datasource.Record(rec)); err != nil {
		t.Fatal(err)
	}
	rev, err := rec.Reversal()
	if err != nil {
		t.Fatal(err)
	}
	if len(rev.Steps) != 1+len(want) || rev.Steps[0].Op != undo.RestoreNode || rev.Steps[0].Node.Key != node.Key ||
		rev.Steps[0].Node.Process != node.Process {
		t.Fatalf("recorded %+v, want fetch restored with its %d edges", rev.Steps, len(want))
	}
	for _, st := range rev.Steps[1:] {
		if st.Op != undo.RestoreEdge || !want[st.Key] {
			t.Fatalf("recorded step %+v, want the edges of fetch %v", st, want)
		}
	}
}

// What the person approving was shown travels with the action as "expect": a
// server that honours it refuses an apply whose graph changed after the client's
// last look (an editor adding an edge to fetch between the fresh snapshot and the
// apply), the client says the graph changed, and nothing is applied. Today's
// servers ignore the field and apply: that gap only the server can close.
func TestApplySendsWhatWasShown(t *testing.T) {
	t.Parallel()
	withEdge := strings.Replace(memoryBody, `"edges": [`, `"edges": [{"_key": "e9", "sheet": "0", "source": "root", "sourceHandle": "0", "target": "fetch", "targetHandle": "0"},`, 1)
	editorAddsAnEdge := func(f *fakeServer) {
		f.mu.Lock()
		f.body = withEdge
		f.mu.Unlock()
	}
	for _, honour := range []bool{true, false} {
		f := &fakeServer{honour: honour, beforeApply: editorAddsAnEdge}
		s := newTestSource(t, f, nil, token, 0)
		ctx := ctxT(t)
		edges, err := s.Edges(ctx, "live", "")
		if err != nil {
			t.Fatal(err)
		}
		var shown []datasource.Edge
		for _, e := range edges {
			if e.Source == "fetch" || e.Target == "fetch" {
				shown = append(shown, e)
			}
		}
		del := datasource.Action{Type: datasource.DeleteNodeAction,
			DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch", RemovedEdges: shown}}
		_, err = datasource.Apply(ctx, s, "live", del, datasource.Expect(del))
		f.mu.Lock()
		applied, expects := len(f.applied), f.expects
		f.mu.Unlock()
		if len(expects) != 1 {
			t.Fatalf("%d apply requests", len(expects))
		}
		var sent datasource.Precondition
		if err := json.Unmarshal(expects[0], &sent); err != nil {
			t.Fatalf("expect %s: %v", expects[0], err)
		}
		if got := keys(sent.NodeEdges["fetch"], func(e datasource.Edge) string { return e.Key }); !slices.Equal(got, []string{"e1", "e2"}) {
			t.Errorf("expect sent %s, want fetch's edges e1 and e2", expects[0])
		}
		if !honour {
			// Today's server: applied, the edge added meanwhile unseen.
			if err != nil || applied != 1 {
				t.Errorf("a server ignoring expect: %v, %d applied", err, applied)
			}
			continue
		}
		if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrGraphChanged) ||
			!strings.Contains(err.Error(), "the Nodius server says") || !strings.Contains(err.Error(), "e9: root:0 → fetch:0") {
			t.Fatalf("apply on a server honouring expect: %v", err)
		}
		if applied != 0 {
			t.Fatalf("%d actions applied although the graph differs from what was shown", applied)
		}
	}
}

// "expect" is sent only when there is something to expect: not without
// datasource.Expect (pictures, undo), not for a creation.
func TestApplySendsNoEmptyExpect(t *testing.T) {
	t.Parallel()
	f := &fakeServer{honour: true}
	s := newTestSource(t, f, nil, token, 0)
	ctx := ctxT(t)
	create := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "js", Sheet: "0"}}
	del := datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "shape"}}
	for _, tc := range []struct {
		a    datasource.Action
		opts []datasource.ApplyOption
	}{{create, []datasource.ApplyOption{datasource.Expect(create)}}, {del, nil}} {
		if _, err := datasource.Apply(ctx, s, "live", tc.a, tc.opts...); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, e := range f.expects {
		if len(e) != 0 {
			t.Errorf("request %d sent expect %s", i+1, e)
		}
	}
}

// A 409 without conflicts (another refusal) stays the server's refusal, not a
// changed graph.
func TestApplyRefusedWithoutConflicts(t *testing.T) {
	t.Parallel()
	f := &fakeServer{status: http.StatusConflict}
	s := newTestSource(t, f, nil, token, 0)
	create := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "js", Sheet: "0"}}
	_, err := datasource.Apply(ctxT(t), s, "live", create)
	if datasource.IsConflict(err) || !fault.Is(err, fault.InvalidRequest) || !strings.Contains(err.Error(), "409") {
		t.Fatalf("apply answered 409 without conflicts: %v", err)
	}
}
