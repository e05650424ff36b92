package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// TestRemoteApprovalAppliesThroughTheEditingSocket: with the server's assistant
// and no other source, an approved proposal arrives as ai:apply_action and is
// applied through the editing protocol of the same server, on the same kind of
// socket the web client uses: the live graph changes, a web editor registered on
// the graph receives the change, and only then does the run say it is done.
func TestRemoteApprovalAppliesThroughTheEditingSocket(t *testing.T) {
	t.Parallel()
	graph, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(graph.Close)
	srv := remotetest.New(t, func(s *remotetest.Server) { s.Editing = graph })
	srv.SetChat(func(s *remotetest.Session) {
		s.Token("I propose to delete it.")
		s.ProposeFull("call_del", "propose_delete_node", map[string]any{"nodeKey": "error_handler", "reason": "unused"},
			`{"type":"delete_node","payload":{"nodeKey":"error_handler"}}`, "",
			`{"instructions":[],"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":["error_handler"],"edgeKeysToDelete":[],"sheetId":"0"}`)
	})
	srv.SetResume(func(s *remotetest.Session) {
		s.Token("Deleted.")
		s.Complete("Deleted.")
	})

	// carol has the graph open in the web editor (her page claimed it through
	// POST /api/sync first).
	graph.Claim(servertest.SeedGraphKey)
	got := make(chan map[string]any, 16)
	carol, err := nodiusapi.DialEditor(context.Background(), srv.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-carol"},
		AckTimeout: 5 * time.Second, OnBroadcast: func(msg json.RawMessage, _ uint64) {
			var m map[string]any
			_ = json.Unmarshal(msg, &m)
			got <- m
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = carol.Close() })
	if _, err := carol.Register(context.Background(), servertest.SeedGraphKey, "0", "carol (web)", 0); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	e := &env{t: t, dir: dir, vars: []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"NODIUS_AI_AGENT=server:" + srv.URL,
		"NODIUS_AI_WS_URL=" + srv.WSURL,
		"NODIUS_AI_TOKEN=tok-alice",
	}}
	r := e.run("", "ask", "--graph", servertest.SeedGraphKey, "--format", "json", "delete error_handler")
	evs := events(t, r.stdout)
	if r.code != 3 || len(evs) == 0 {
		t.Fatalf("ask: code %d stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
	threadID := evs[0]["thread_id"].(string)
	if _, ok := graph.Live(servertest.SeedGraphKey).NodeSheet("error_handler"); !ok {
		t.Fatal("the node went before the approval")
	}

	r = e.run("", "approve", threadID)
	if r.code != 0 || !strings.Contains(r.stdout, "Deleted.") {
		t.Fatalf("approve: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	if _, ok := graph.Live(servertest.SeedGraphKey).NodeSheet("error_handler"); ok {
		t.Fatal("approved and said done, but the live graph still has the node")
	}
	select {
	case m := <-got:
		if m["type"] != "batchDeleteElements" {
			t.Fatalf("the web editor received %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the web editor received nothing")
	}
	r = e.run("", "threads", "show", threadID, "--format", "json")
	if strings.Contains(r.stdout, "not_applied") {
		t.Fatalf("recorded as not applied: %s", r.stdout)
	}
	// Not vacuous: the show ran and the thread records the outcome.
	if r.code != 0 || !strings.Contains(r.stdout, `"outcome": "applied"`) {
		t.Fatalf("threads show: code %d stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
}
