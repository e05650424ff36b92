package mcpserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent/tools"
)

// TestHomeModeCreateGraphOverMCP: served in home mode (--graph home), the client
// gets home mode's tools (no graph_context), lists the graphs, and proposes a new
// graph; the built `nodius-ai approve` the client was told writes it as a new graph
// file next to the source's, and `nodius-ai undo` removes it.
func TestHomeModeCreateGraphOverMCP(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	f := newFixture(t, fixOpts{graph: tools.HomeGraphKey})
	list, err := f.cs.ListTools(f.ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, tools.ProposeCreateGraph) || strings.Contains(got, "graph_context") {
		t.Errorf("home tools over MCP: %s", got)
	}
	if res := f.call(tools.ListUserGraphs, `{}`); res.IsError || !strings.Contains(text(res), "demo") {
		t.Errorf("list_user_graphs: %s", text(res))
	}
	res := f.call(tools.ProposeCreateGraph, `{"name":"Invoices","description":"bills","reason":"asked"}`)
	sc := structured(t, res)
	threadID, _ := sc["thread"].(string)
	if res.IsError || sc["status"] != "pending" || threadID == "" {
		t.Fatalf("proposal: %s %v", text(res), sc)
	}
	newFile := filepath.Join(filepath.Dir(f.path), "invoices.json")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = isolatedEnv(t)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("nodius-ai %v: %v\nstdout %s\nstderr %s", args, err, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	out := run(strings.Fields(sc["approve"].(string))[1:]...)
	if !strings.Contains(out, "Approved and applied") || !strings.Contains(out, "open it with --source file:"+newFile) {
		t.Errorf("approve printed %q", out)
	}
	if data, err := os.ReadFile(newFile); err != nil || !strings.Contains(string(data), `"starter"`) {
		t.Fatalf("new graph file: %v\n%s", err, data)
	}
	out = run("undo", threadID, "--source", "file:"+f.path, "--db", f.db)
	if _, err := os.Stat(newFile); !os.IsNotExist(err) {
		t.Errorf("undo left %s: %v\n%s", newFile, err, out)
	}
}
