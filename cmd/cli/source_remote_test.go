package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// secondClient registers carol on both sheets of the seeded graph, as a web
// editor would be; broadcasts come out of got.
func secondClient(t *testing.T, s *servertest.Server) (*nodiusapi.Editor, chan map[string]any) {
	t.Helper()
	got := make(chan map[string]any, 16)
	s.Claim(servertest.SeedGraphKey) // as carol's web editor asks POST /api/sync before it opens the graph
	c, err := nodiusapi.DialEditor(context.Background(), s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-carol"},
		AckTimeout: 5 * time.Second, OnBroadcast: func(msg json.RawMessage, _ uint64) {
			var m map[string]any
			_ = json.Unmarshal(msg, &m)
			got <- m
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, sheet := range []string{"0", "1"} {
		if _, err := c.Register(context.Background(), servertest.SeedGraphKey, sheet, "carol (web)", 0); err != nil {
			t.Fatal(err)
		}
	}
	return c, got
}

// TestInspectContextServerIsLive: `inspect context --source server:URL` shows a
// node another client created that the server has not saved yet.
func TestInspectContextServerIsLive(t *testing.T) {
	t.Parallel()
	s, err := servertest.NewSeeded(servertest.Options{PairedPorts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	carol, _ := secondClient(t, s)
	node, _ := json.Marshal(map[string]any{"_key": "unsaved_logger", "graphKey": servertest.SeedGraphKey, "sheet": "0",
		"type": "log-node", "typeVersion": 1, "posX": 1, "posY": 2, "size": map[string]any{"width": 200, "height": 100},
		"handles": map[string]any{}, "data": map[string]any{}})
	if err := carol.BatchCreate(context.Background(), "0", []json.RawMessage{node}, nil); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", "server:"+s.URL, "--token", "tok-alice",
		"--graph", servertest.SeedGraphKey, "--format", "json", "unsaved_logger")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	c := decodeContext(t, out)
	if !slices.ContainsFunc(c.Nodes, func(n struct{ Key, Type, Sheet string }) bool { return n.Key == "unsaved_logger" }) {
		t.Errorf("the unsaved node is not in the context: %+v", c.Nodes)
	}
	if strings.Contains(out+errOut, "tok-alice") {
		t.Error("the token was printed")
	}

	_, errOut, code = runCLI(t, "", nil, "inspect", "context", "--source", "server:"+s.URL, "--token", "tok-alice", "--graph", "nosuch", "x")
	if code != ExitUsage || !strings.Contains(errOut, `no graph "nosuch"`) {
		t.Errorf("unknown graph: exit %d, stderr %q", code, errOut)
	}
}

// TestApproveThroughEditingSocket: a proposal of the local agent over a server:
// source is applied through the editing socket on approval (the second client
// receives it); a conflicting edit made between showing and approving is refused.
func TestApproveThroughEditingSocket(t *testing.T) {
	t.Parallel()
	s, err := servertest.NewSeeded(servertest.Options{PairedPorts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	carol, got := secondClient(t, s)
	llm := llmtest.Start(t,
		llmtest.Turn{Text: "Moving it.", ToolCalls: []llmtest.ToolCall{{ID: "p1", Name: "propose_move_node",
			Arguments: `{"nodeKey":"fetch_api","posX":555,"posY":333,"reason":"tidy"}`}}},
		llmtest.Turn{Text: "Moved."},
		llmtest.Turn{Text: "Deleting it.", ToolCalls: []llmtest.ToolCall{{ID: "p2", Name: "propose_delete_node",
			Arguments: `{"nodeKey":"error_handler","reason":"unused"}`}}},
		llmtest.Turn{Text: "Deleted."},
	)
	src := "server:" + s.URL
	env := map[string]string{
		"NODIUS_AI_BASE_URL": llm.OpenAIURL(), "NODIUS_AI_API_KEY": "x", "NODIUS_AI_MODEL": "fake-model",
		"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db"), "NODIUS_AI_SOURCE": src, "NODIUS_AI_TOKEN": "tok-alice",
	}
	ask := func(q string) string {
		t.Helper()
		out, errOut, code := runCLI(t, "", env, "ask", "--graph", servertest.SeedGraphKey, "--format", "json", q)
		if code != ExitProposal {
			t.Fatalf("ask: exit %d, stderr %q", code, errOut)
		}
		var first struct {
			ThreadID string `json:"thread_id"`
		}
		_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first)
		return first.ThreadID
	}

	thread := ask("move fetch_api")
	out, errOut, code := runCLI(t, "", env, "approve", thread)
	if code != 0 {
		t.Fatalf("approve: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case m := <-got:
		if m["type"] != "applyInstructionToGraph" {
			t.Errorf("the second client received %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second client received nothing")
	}
	g := s.Live(servertest.SeedGraphKey)
	if n, _ := g.Sheets["0"].Node("fetch_api"); n["posX"] != float64(555) {
		t.Errorf("fetch_api posX = %v after approval", n["posX"])
	}

	// The proposal shows error_handler's edges; carol then adds one.
	thread = ask("delete error_handler")
	edge, _ := json.Marshal(map[string]any{"_key": "late", "graphKey": servertest.SeedGraphKey, "sheet": "0", "source": "error_handler",
		"sourceHandle": "0", "target": "return", "targetHandle": "0"})
	if err := carol.BatchCreate(context.Background(), "0", nil, []json.RawMessage{edge}); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI(t, "", env, "approve", thread)
	if code == 0 || !strings.Contains(errOut, "changed") {
		t.Errorf("approve after a conflicting edit: exit %d, stderr %q", code, errOut)
	}
	if _, ok := s.Live(servertest.SeedGraphKey).NodeSheet("error_handler"); !ok {
		t.Error("error_handler was deleted despite the conflicting edit")
	}
}
