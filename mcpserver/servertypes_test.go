package mcpserver_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
)

// TestServerProposalTypesOverMCP: the proposal types the server's tools add are
// offered over MCP and, set to auto, applied at once to the graph file.
func TestServerProposalTypesOverMCP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{policy: map[datasource.ActionType]config.Policy{
		datasource.CreateNodeWithEdgesAction: config.PolicyAuto, datasource.ConfigureNodeTypeAction: config.PolicyAuto,
		datasource.ReorganizeLayoutAction: config.PolicyAuto}})
	for _, c := range []struct{ tool, args string }{
		{tools.ProposeCreateNodeWithEdges, `{"typeKey":"log-node","edges":[{"direction":"in","handleId":"0","targetNodeKey":"filter-active","targetHandleId":"0"}],"reason":"log"}`},
		{tools.ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","processPatches":[{"search":"// Fetch season averages","replace":"// Fetch v2 season averages"}],"reason":"v2"}`},
		{tools.ProposeReorganizeLayout, `{"nodeKeys":["root","fetch-api"],"reason":"tidy"}`},
	} {
		res := f.call(c.tool, c.args)
		if res.IsError || structured(t, res)["status"] != "applied" {
			t.Fatalf("%s: IsError %v, %s", c.tool, res.IsError, text(res))
		}
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes   []map[string]any `json:"nodes"`
		Configs []struct {
			Key  string `json:"_key"`
			Node struct {
				Process string `json:"process"`
			} `json:"node"`
		} `json:"nodeConfigs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 10 {
		t.Errorf("%d nodes, want the demo's 9 and the new one", len(doc.Nodes))
	}
	for _, c := range doc.Configs {
		if c.Key == "api-call" && !strings.HasPrefix(c.Node.Process, "// Fetch v2") {
			t.Errorf("api-call's code: %.60q", c.Node.Process)
		}
	}
	root, fetch := fileNodes(t, f.path)["root"], fileNodes(t, f.path)["fetch-api"]
	if root["posX"].(float64) >= fetch["posX"].(float64) {
		t.Errorf("not laid out left to right: root %v, fetch-api %v", root["posX"], fetch["posX"])
	}
}
