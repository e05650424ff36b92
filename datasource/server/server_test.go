package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

const graphKey = servertest.SeedGraphKey

func standIn(t *testing.T) *servertest.Server {
	t.Helper()
	s, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func source(t *testing.T, s *servertest.Server, token string, notices *[]string) *server.Source {
	t.Helper()
	return sourceAt(t, s, s.WSURL, token, notices)
}

// noSocket is a WebSocket address nothing listens on.
const noSocket = "ws://127.0.0.1:1/"

// sourceAt is source with its editing socket at wsURL.
func sourceAt(t *testing.T, s *servertest.Server, wsURL, token string, notices *[]string) *server.Source {
	t.Helper()
	var mu sync.Mutex
	src, err := server.New(server.Options{BaseURL: s.URL, WSURL: wsURL, Token: token, AckTimeout: 5 * time.Second,
		Notice: func(m string) {
			mu.Lock()
			defer mu.Unlock()
			if notices != nil {
				*notices = append(*notices, m)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// editor is a second client (another user, as a web editor would be) registered on
// sheet "0" of the graph; it records the broadcasts it receives.
type editor struct {
	c    *nodiusapi.Editor
	mu   sync.Mutex
	got  []map[string]any
	seen chan struct{}
}

func newEditor(t *testing.T, s *servertest.Server, token string) *editor {
	t.Helper()
	ctx := context.Background()
	e := &editor{seen: make(chan struct{}, 100)}
	s.Claim(graphKey) // as a web editor's POST /api/sync does before it opens the graph
	c, err := nodiusapi.DialEditor(ctx, s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: token}, AckTimeout: 5 * time.Second,
		OnBroadcast: func(msg json.RawMessage, _ uint64) {
			var m map[string]any
			_ = json.Unmarshal(msg, &m)
			e.mu.Lock()
			e.got = append(e.got, m)
			e.mu.Unlock()
			e.seen <- struct{}{}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, sheet := range []string{"0", "1"} {
		if _, err := c.Register(ctx, graphKey, sheet, "second client", 0); err != nil {
			t.Fatal(err)
		}
	}
	e.c = c
	return e
}

// wait returns the first n broadcasts, waiting for them.
func (e *editor) wait(t *testing.T, n int) []map[string]any {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-e.seen:
		case <-time.After(10 * time.Second):
			t.Fatalf("the second client received %d broadcast(s), want %d", i, n)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any{}, e.got...)
}

func move(ctx context.Context, t *testing.T, c *nodiusapi.Editor, node string, x float64) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": []string{"posX"}, "v": x}, "sheetId": "0", "nodeId": node})
	if err := c.ApplyInstructions(ctx, []json.RawMessage{in}); err != nil {
		t.Fatal(err)
	}
}

func nodeOf(t *testing.T, snap datasource.Snapshot, key string) (datasource.Node, bool) {
	t.Helper()
	for _, n := range snap.Nodes {
		if n.Key == key {
			return n, true
		}
	}
	return datasource.Node{}, false
}

// TestLiveGraphShowsUnsavedEdits: an edit another client made, that the server
// has not saved, is in what the source reads; it stays after the save.
func TestLiveGraphShowsUnsavedEdits(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 4242)
	var notices []string
	src := source(t, s, "tok-alice", &notices)
	for _, when := range []string{"before the save", "after the save"} {
		snap, err := src.Snapshot(ctx, graphKey)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := nodeOf(t, snap, "fetch_api")
		if !ok || n.PosX != 4242 {
			t.Fatalf("%s: fetch_api posX = %v, want the unsaved 4242", when, n.PosX)
		}
		if snap.Graph.Sheets["1"] != "data-processing" || len(snap.Configs) == 0 {
			t.Errorf("%s: sheets %v, %d node types", when, snap.Graph.Sheets, len(snap.Configs))
		}
		if n, _ := nodeOf(t, snap, "sort_stats"); n.Sheet != "1" {
			t.Errorf("%s: sort_stats on sheet %q, want 1", when, n.Sheet)
		}
		s.Save(graphKey)
	}
	if len(notices) != 0 {
		t.Errorf("notices for a live read: %q", notices)
	}
	if d := src.Describe(); !strings.Contains(d, "live") {
		t.Errorf("Describe = %q, want it to say the graph is live", d)
	}
}

// TestSavedStateOnlyIsSaid: without the socket, the saved state is read and the
// source says so.
func TestSavedStateOnlyIsSaid(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 4242)
	var notices []string
	src := sourceAt(t, s, noSocket, "tok-alice", &notices)
	snap, err := src.Snapshot(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := nodeOf(t, snap, "fetch_api"); n.PosX != 400 {
		t.Errorf("fetch_api posX = %v, want the saved 400", n.PosX)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "last saved") {
		t.Errorf("notices = %q, want one saying only the saved state was read", notices)
	}
	if d := src.Describe(); !strings.Contains(d, "saved state only") {
		t.Errorf("Describe = %q", d)
	}
}

// TestRegistrationRefusedPartWayReadsTheSavedState: when the second sheet's
// registration is refused, the first sheet's replayed messages are not kept: what
// is read is the saved state, as the notice says.
func TestRegistrationRefusedPartWayReadsTheSavedState(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 4242)
	s.RefuseNext("registerUserOnGraph:1", "refused for the test")
	var notices []string
	snap, err := source(t, s, "tok-alice", &notices).Snapshot(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := nodeOf(t, snap, "fetch_api"); n.PosX != 400 {
		t.Errorf("fetch_api posX = %v, want the saved 400", n.PosX)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "last saved") || !strings.Contains(notices[0], "refused for the test") {
		t.Errorf("notices = %q, want one saying only the saved state was read, and why", notices)
	}
}

// TestGraphAndConfigsWithoutSocket: the graph's metadata and node types are
// read with the graph; without a socket they come from the saved state.
func TestGraphAndConfigsWithoutSocket(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src := sourceAt(t, s, noSocket, "tok-alice", &notices)
	g, err := src.Graph(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if g.Key != graphKey || g.Workspace == "" || len(g.Sheets) != 2 {
		t.Errorf("Graph = key %q, workspace %q, sheets %v", g.Key, g.Workspace, g.Sheets)
	}
	cfgs, err := src.Configs(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) == 0 {
		t.Error("Configs: no node types")
	}
	if len(notices) != 1 {
		t.Errorf("notices = %q, want the saved-state one, once", notices)
	}
	if _, err := src.Graph(ctx, "nosuchgraph"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("unknown graph: %v, want not found", err)
	}
}

func TestReadErrors(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	_, err := source(t, s, "tok-alice", nil).Snapshot(ctx, "nosuchgraph")
	if !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("unknown graph: %v, want not found", err)
	}
	_, err = source(t, s, "bad-token", nil).Snapshot(ctx, graphKey)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.Auth || strings.Contains(err.Error(), "bad-token") {
		t.Errorf("bad token: %v, want an auth error without the token", err)
	}
	// bob reads over HTTP (no workspace check) but may not register: saved state.
	var notices []string
	if _, err := source(t, s, "tok-bob", &notices).Snapshot(ctx, graphKey); err != nil || len(notices) != 1 || !strings.Contains(notices[0], "Access denied") {
		t.Errorf("bob: %v, notices %q", err, notices)
	}
}

func action(t *testing.T, js string) datasource.Action {
	t.Helper()
	var a datasource.Action
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestApplyAction applies each kind of action through the editing socket: the
// second client receives it as the web editor would, and the live graph has it.
func TestApplyAction(t *testing.T) {
	cases := []struct {
		name, action string
		messages     int // broadcasts the second client receives
		check        func(t *testing.T, snap datasource.Snapshot, res datasource.ApplyResult)
	}{
		{"move_node", `{"type":"move_node","payload":{"nodeKey":"fetch_api","posX":555,"posY":333}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, _ datasource.ApplyResult) {
				if n, _ := nodeOf(t, snap, "fetch_api"); n.PosX != 555 || n.PosY != 333 {
					t.Errorf("fetch_api at %v,%v", n.PosX, n.PosY)
				}
			}},
		{"update_node nested data on sheet 1", `{"type":"update_node","payload":{"nodeKey":"sort_stats","changes":{"data.sortBy.field":"pts","type":"transform"}}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, _ datasource.ApplyResult) {
				n, _ := nodeOf(t, snap, "sort_stats")
				f := datasource.NodeFields(n)
				d, _ := f["data"].(map[string]any)
				sb, _ := d["sortBy"].(map[string]any)
				if sb["field"] != "pts" {
					t.Errorf("sort_stats data = %v", f["data"])
				}
			}},
		{"create_node", `{"type":"create_node","payload":{"nodeKey":"logger","typeKey":"log-node","sheet":"0","posX":10,"posY":20,"data":{"level":"info"}}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, res datasource.ApplyResult) {
				n, ok := nodeOf(t, snap, "logger")
				if !ok || len(res.Created.Nodes) != 1 || res.Created.Nodes[0] != "logger" {
					t.Errorf("created %v", res.Created)
				}
				if _, ok := n.Handles["L"]; !ok {
					t.Errorf("the new node did not get its type's handles: %v", n.Handles)
				}
			}},
		{"delete_node takes its edges", `{"type":"delete_node","payload":{"nodeKey":"error_handler","removedEdges":[
			{"_key":"e3","sheet":"0","source":"fetch_api","sourceHandle":"1","target":"error_handler","targetHandle":"0"}]}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, _ datasource.ApplyResult) {
				if _, ok := nodeOf(t, snap, "error_handler"); ok {
					t.Error("error_handler still there")
				}
				for _, e := range snap.Edges {
					if e.Key == "e3" {
						t.Error("edge e3 of error_handler still there")
					}
				}
			}},
		{"create_edge gets a key", `{"type":"create_edge","payload":{"sourceKey":"error_handler","sourceHandle":"0","targetKey":"return","targetHandle":"0","sheet":"0"}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, res datasource.ApplyResult) {
				if len(res.Created.Edges) != 1 || len(res.Created.Edges[0]) != 64 {
					t.Errorf("created %v", res.Created)
				}
			}},
		{"delete_edge", `{"type":"delete_edge","payload":{"edgeKey":"e3"}}`, 1, nil},
		{"batch: create, connect, move in order", `{"type":"batch","payload":{"actions":[
			{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":1}},
			{"type":"create_edge","payload":{"edgeKey":"en1","sourceKey":"return","sourceHandle":"0","targetKey":"n1","targetHandle":"0","sheet":"0"}},
			{"type":"move_node","payload":{"nodeKey":"n1","posX":7,"posY":8}}]}}`, 2,
			func(t *testing.T, snap datasource.Snapshot, res datasource.ApplyResult) {
				if n, ok := nodeOf(t, snap, "n1"); !ok || n.PosX != 7 {
					t.Errorf("n1 = %+v", n)
				}
			}},
		{"create_node_with_edges", `{"type":"create_node_with_edges","payload":{"typeKey":"log-node","sheet":"0","posX":5,"posY":6,"edges":[
			{"direction":"in","handleId":"0","targetNodeKey":"filter_active","targetHandleId":"0","label":"log"}]}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, res datasource.ApplyResult) {
				if len(res.Created.Nodes) != 1 || len(res.Created.Edges) != 1 {
					t.Fatalf("created %v", res.Created)
				}
				for _, e := range snap.Edges {
					if e.Key == res.Created.Edges[0] && (e.Source != "filter_active" || e.Target != res.Created.Nodes[0]) {
						t.Errorf("edge %+v", e)
					}
				}
			}},
		{"reorganize_layout with moves", `{"type":"reorganize_layout","payload":{"nodeKeys":["root"],"moves":[{"nodeKey":"root","posX":3,"posY":4}]}}`, 1,
			func(t *testing.T, snap datasource.Snapshot, _ datasource.ApplyResult) {
				if n, _ := nodeOf(t, snap, "root"); n.PosX != 3 || n.PosY != 4 {
					t.Errorf("root at %v,%v", n.PosX, n.PosY)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(t)
			ctx := context.Background()
			carol := newEditor(t, s, "tok-carol")
			src := source(t, s, "tok-alice", nil)
			a := action(t, tc.action)
			res, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Applied {
				t.Fatalf("result %+v", res)
			}
			got := carol.wait(t, tc.messages)
			if len(got) < tc.messages {
				t.Fatalf("broadcasts %v", got)
			}
			snap, err := src.Snapshot(ctx, graphKey)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, snap, res)
			}
		})
	}
}

// TestApplyRefusesAConflictingEdit: another client adds an edge to the node a
// proposal deletes, after it was shown: nothing is applied.
func TestApplyRefusesAConflictingEdit(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	shown := action(t, `{"type":"delete_node","payload":{"nodeKey":"error_handler","removedEdges":[
		{"_key":"e3","sheet":"0","source":"fetch_api","sourceHandle":"1","target":"error_handler","targetHandle":"0"}]}}`)
	carol := newEditor(t, s, "tok-carol")
	edge, _ := json.Marshal(map[string]any{"_key": "late", "graphKey": graphKey, "sheet": "0", "source": "error_handler",
		"sourceHandle": "0", "target": "return", "targetHandle": "0"})
	if err := carol.c.BatchCreate(ctx, "0", nil, []json.RawMessage{edge}); err != nil {
		t.Fatal(err)
	}
	_, err := src.ApplyAction(ctx, graphKey, shown, datasource.Expect(shown))
	if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrGraphChanged) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if _, ok := s.Live(graphKey).NodeSheet("error_handler"); !ok {
		t.Error("error_handler was deleted despite the conflict")
	}
}

// TestApplyRefusesWhatTheGraphDoesNotAllow: a step the live graph refuses stops the
// whole action before anything is sent.
func TestApplyRefusesWhatTheGraphDoesNotAllow(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	a := action(t, `{"type":"batch","payload":{"actions":[
		{"type":"move_node","payload":{"nodeKey":"root","posX":1,"posY":1}},
		{"type":"delete_node","payload":{"nodeKey":"nope"}}]}}`)
	_, err := src.ApplyAction(ctx, graphKey, a)
	if !datasource.IsConflict(err) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	g := s.Live(graphKey)
	sh, _ := g.NodeSheet("root")
	n, _ := g.Sheets[sh].Node("root")
	if n["posX"] != float64(100) {
		t.Errorf("root moved to %v: the first step was sent", n["posX"])
	}
}

func applyActions(t *testing.T) map[string]nodiusapi.ApplyAction {
	t.Helper()
	files, _ := filepath.Glob("testdata/04*.jsonl")
	out := map[string]nodiusapi.ApplyAction{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l struct {
				Frame struct {
					Type   string                `json:"type"`
					Action nodiusapi.ApplyAction `json:"action"`
				} `json:"frame"`
			}
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Frame.Type == "ai:apply_action" {
				out[filepath.Base(f)] = l.Frame.Action
			}
		}
		fh.Close()
	}
	if len(out) != 10 {
		t.Fatalf("%d apply_action frames in testdata, want 10 (04a–04i, 04l)", len(out))
	}
	return out
}

// TestApplyServerActionReplays04 applies the ai:apply_action frames the real
// server sent after each approval (04a–04i, 04l) to the seeded graph, as the web
// client does: every step is acknowledged and the second client receives it.
func TestApplyServerActionReplays04(t *testing.T) {
	for name, a := range applyActions(t) {
		t.Run(name, func(t *testing.T) {
			s := standIn(t)
			ctx := context.Background()
			carol := newEditor(t, s, "tok-carol")
			src := source(t, s, "tok-alice", nil)
			rep, err := src.ApplyServerAction(ctx, graphKey, a)
			if err != nil || !rep.Complete() {
				t.Fatalf("report %+v, err %v", rep, err)
			}
			want := 0
			for _, n := range []int{len(a.Instructions), len(a.NodesToCreate) + len(a.EdgesToCreate), len(a.NodeKeysToDelete) + len(a.EdgeKeysToDelete)} {
				if n > 0 {
					want++
				}
			}
			carol.wait(t, want)
			if rep.Instructions != len(a.Instructions) || len(rep.NodesCreated) != len(a.NodesToCreate) || len(rep.NodesDeleted) != len(a.NodeKeysToDelete) {
				t.Errorf("report %+v for %d instructions, %d nodes created, %d deleted", rep, len(a.Instructions), len(a.NodesToCreate), len(a.NodeKeysToDelete))
			}
			if len(a.NodeKeysToDelete) > 0 && len(rep.EdgesDeleted) <= len(a.EdgeKeysToDelete) {
				t.Errorf("the deleted node's edges were not added: %v", rep.EdgesDeleted)
			}
		})
	}
}

// TestApplyServerActionReportsAPartialApply: the server's instructions name sheet
// "0"; a node of sheet 1 is "not found", and the report says so after the move of
// a node of sheet 0 went through in the message before.
func TestApplyServerActionReportsAPartialApply(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	in := func(node string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": []string{"posX"}, "v": 9}, "sheetId": "0", "nodeId": node})
		return b
	}
	node, _ := json.Marshal(map[string]any{"_key": "x1", "graphKey": graphKey, "sheet": "0", "type": "log-node"})
	a := nodiusapi.ApplyAction{Instructions: []json.RawMessage{in("root")}, NodesToCreate: []json.RawMessage{node}, NodeKeysToDelete: []string{"sort_stats"}, SheetID: "0"}
	rep, err := src.ApplyServerAction(ctx, graphKey, a)
	if err == nil || rep.Complete() {
		t.Fatalf("report %+v, err %v: want a failure", rep, err)
	}
	if rep.Instructions != 1 || len(rep.NodesCreated) != 1 || rep.Failed != "batchDeleteElements" || !strings.Contains(rep.Reason, "sort_stats not found") {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(err.Error(), "not fully applied") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %v", err)
	}

	// A token the socket refuses: nothing is applied, and the report does not say complete.
	rep, err = source(t, s, "bad", nil).ApplyServerAction(ctx, graphKey, nodiusapi.ApplyAction{Instructions: []json.RawMessage{in("root")}, SheetID: "0"})
	if err == nil || rep.Complete() || rep.Instructions != 0 {
		t.Errorf("bad token: report %+v, err %v", rep, err)
	}

	// An instruction for a node of sheet 1 named on sheet 0.
	rep, err = src.ApplyServerAction(ctx, graphKey, nodiusapi.ApplyAction{Instructions: []json.RawMessage{in("sort_stats")}, SheetID: "0"})
	if err == nil || rep.Failed != "applyInstructionToGraph" || !strings.Contains(rep.Reason, "Node with id sort_stats not found") || !strings.Contains(rep.Reason, "sheet 1") {
		t.Errorf("report %+v, err %v", rep, err)
	}
}

// TestApplyActionStoppedPartWay: the server refuses the second message of an
// action: the error is recorded as a decision (a conflict) and says what was
// applied.
func TestApplyActionStoppedPartWay(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	a := action(t, `{"type":"batch","payload":{"actions":[
		{"type":"move_node","payload":{"nodeKey":"root","posX":1,"posY":2}},
		{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":1}}]}}`)
	s.RefuseNext("batchCreateElements", "Node with _key n1 already exists")
	_, err := src.ApplyAction(ctx, graphKey, a)
	if !datasource.IsConflict(err) || !strings.Contains(err.Error(), "only part of the change") ||
		!strings.Contains(err.Error(), "applied 2 instruction(s)") || !strings.Contains(err.Error(), "n1 already exists") {
		t.Fatalf("err = %v", err)
	}
	g := s.Live(graphKey)
	if n, _ := g.Sheets["0"].Node("root"); n["posX"] != float64(1) {
		t.Errorf("root posX = %v: the first message should be applied", n["posX"])
	}
	if _, ok := g.NodeSheet("n1"); ok {
		t.Error("n1 created despite the refusal")
	}
}

// TestReplayFailureIsSaid: editing messages that do not apply to the saved state
// (here: already in it) are counted and said.
func TestReplayFailureIsSaid(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	carol := newEditor(t, s, "tok-carol")
	node, _ := json.Marshal(map[string]any{"_key": "x1", "graphKey": graphKey, "sheet": "0", "type": "log-node"})
	if err := carol.c.BatchCreate(ctx, "0", []json.RawMessage{node}, nil); err != nil {
		t.Fatal(err)
	}
	// A saved state that already holds the edit but says it is older than it.
	g := s.Live(graphKey)
	g.Doc["lastUpdatedTime"] = float64(1)
	body, _ := g.MarshalJSON()
	if err := s.AddGraph(body); err != nil {
		t.Fatal(err)
	}
	var notices []string
	src := source(t, s, "tok-alice", &notices)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "1 of the 1 editing messages") {
		t.Errorf("notices = %q", notices)
	}
	if d := src.Describe(); !strings.Contains(d, "not replayed") {
		t.Errorf("Describe = %q", d)
	}
}

// TestNodeCodeComesFromItsType: real nodes carry no code; the source gives each node
// its type's node.process, so retrieval and the read tools find it.
func TestNodeCodeComesFromItsType(t *testing.T) {
	t.Parallel()
	s, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	n, err := source(t, s, "tok-alice", nil).Node(context.Background(), servertest.SeedGraphKey, "fetch_api")
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != "api-call" || !strings.Contains(n.Process, "fetch") {
		t.Fatalf("fetch_api (%s) has code %q, want its type's", n.Type, n.Process)
	}
}
