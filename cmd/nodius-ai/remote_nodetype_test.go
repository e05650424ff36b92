package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// TestRemoteNodeTypeApproval: the server's assistant proposes a change of a node
// type's code and the person approves. The server sends no ai:apply_action (it
// writes the type where its editor does not read it), so nodius-ai applies the
// change shown on the type's editing socket and reads it back: after approve
// says done, POST /api/nodeconfig/get answers the new code. A creation goes
// through /api/nodeconfig/create.
func TestRemoteNodeTypeApproval(t *testing.T) {
	t.Parallel()
	graph, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(graph.Close)
	srv := remotetest.New(t, func(s *remotetest.Server) { s.Editing = graph })
	const code = "node.data.result = players.filter(p => p.Status !== \"Out\");\nnext();"
	srv.SetChat(func(s *remotetest.Session) {
		if strings.Contains(s.Req.Message, "new type") {
			s.ProposeFull("call_c", "propose_configure_node_type", map[string]any{"mode": "create", "displayName": "Rate Limiter", "reason": "pace calls"},
				`{"type":"configure_node_type","payload":{"mode":"create","displayName":"Rate Limiter","description":"Waits between calls","category":"custom","icon":"timer","process":"await wait(1000);\nnext();"}}`, "", "")
			return
		}
		s.ProposeFull("call_t", "propose_configure_node_type", map[string]any{"mode": "update", "typeKey": "filter", "displayName": "Filter", "reason": "keep injured"},
			`{"type":"configure_node_type","payload":{"mode":"update","typeKey":"filter","displayName":"Filter","process":"`+strings.ReplaceAll(strings.ReplaceAll(code, `"`, `\"`), "\n", `\n`)+`"}}`, "", "")
	})
	srv.SetResume(func(s *remotetest.Session) {
		s.Token("Done.")
		s.Complete("Done.")
	})
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
	r := e.run("", "ask", "--graph", servertest.SeedGraphKey, "--format", "json", "keep injured players")
	evs := events(t, r.stdout)
	if r.code != 3 || len(evs) == 0 {
		t.Fatalf("ask: code %d stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "approve", evs[0]["thread_id"].(string))
	if r.code != 0 || !strings.Contains(r.stdout, "Done.") {
		t.Fatalf("approve: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	doc := graph.NodeConfig("filter")
	if node, _ := doc["node"].(map[string]any); node["process"] != code {
		t.Fatalf("approved and said done, but the saved type's code is %q", node["process"])
	}
	if graph.TypeRequests("forceSave") != 1 || graph.TypeRequests("/api/nodeconfig/get") < 2 {
		t.Errorf("forceSave %d, get %d", graph.TypeRequests("forceSave"), graph.TypeRequests("/api/nodeconfig/get"))
	}

	r = e.run("", "ask", "--graph", servertest.SeedGraphKey, "--format", "json", "a new type")
	evs = events(t, r.stdout)
	if r.code != 3 || len(evs) == 0 {
		t.Fatalf("ask: code %d stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "approve", evs[0]["thread_id"].(string))
	if r.code != 0 {
		t.Fatalf("approve: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	if graph.TypeRequests("/api/nodeconfig/create") != 1 {
		t.Fatalf("%d creations", graph.TypeRequests("/api/nodeconfig/create"))
	}
	r = e.run("", "threads", "show", evs[0]["thread_id"].(string), "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"outcome": "applied"`) || !strings.Contains(r.stdout, "created node type") {
		t.Fatalf("threads show: code %d stdout %s", r.code, r.stdout)
	}
}
