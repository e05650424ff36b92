package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// TestApproveNodeTypeOnServer: the local agent on a server: source proposes a
// change of a node type's code, then a new type; approving each applies it where
// the Nodius editor reads node types (the type's editing socket, then forceSave;
// /api/nodeconfig/create), and POST /api/nodeconfig/get answers it once approve
// says done.
func TestApproveNodeTypeOnServer(t *testing.T) {
	t.Parallel()
	s, err := servertest.NewSeeded(servertest.Options{PairedPorts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	llm := llmtest.Start(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "t1", Name: "propose_configure_node_type",
			Arguments: `{"mode":"update","typeKey":"log-node","displayName":"Logger","process":"log(\"changed\");\nnext();","reason":"louder"}`}}},
		llmtest.Turn{Text: "Changed."},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "t2", Name: "propose_configure_node_type",
			Arguments: `{"mode":"create","displayName":"Rate Limiter","category":"custom","process":"await wait(1000);\nnext();","reason":"pace"}`}}},
		llmtest.Turn{Text: "Created."},
	)
	env := map[string]string{
		"NODIUS_AI_BASE_URL": llm.OpenAIURL(), "NODIUS_AI_API_KEY": "x", "NODIUS_AI_MODEL": "fake-model",
		"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db"), "NODIUS_AI_SOURCE": "server:" + s.URL, "NODIUS_AI_TOKEN": "tok-alice",
	}
	approve := func(q string) (string, string) {
		t.Helper()
		out, errOut, code := runCLI(t, "", env, "ask", "--graph", servertest.SeedGraphKey, "--format", "json", q)
		if code != ExitProposal {
			t.Fatalf("ask: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		var first struct {
			ThreadID string `json:"thread_id"`
		}
		_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first)
		out, errOut, code = runCLI(t, "", env, "approve", first.ThreadID)
		if code != 0 {
			t.Fatalf("approve: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		return out, errOut
	}
	approve("make the logger louder")
	node, _ := s.NodeConfig("log-node")["node"].(map[string]any)
	if node["process"] != "log(\"changed\");\nnext();" {
		t.Fatalf("saved log-node process %q", node["process"])
	}
	if s.TypeRequests("applyInstructionToNodeConfig") != 1 || s.TypeRequests("forceSave") != 1 || s.TypeRequests("/api/nodeconfig/update") != 0 {
		t.Errorf("instructions %d, forceSave %d, update %d", s.TypeRequests("applyInstructionToNodeConfig"), s.TypeRequests("forceSave"), s.TypeRequests("/api/nodeconfig/update"))
	}
	_, said := approve("a rate limiter type")
	if !strings.Contains(said, `nodius-ai: created node type "Rate Limiter" on the Nodius server (key `) {
		t.Errorf("approve did not say the new type's key: %q", said)
	}
	if s.TypeRequests("/api/nodeconfig/create") != 1 {
		t.Fatalf("%d creations", s.TypeRequests("/api/nodeconfig/create"))
	}
}
