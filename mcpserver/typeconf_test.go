package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/tools"
)

// TestTypeChangesOverMCP: a node type created, a type's look and code changed, and
// an html node given raw HTML, each proposed through MCP, wait for the person;
// `nodius-ai approve` writes them to the graph file (Nodius's format: the type's
// config, node.process, node.size, border) and `nodius-ai undo` gives the file's
// graph back.
func TestTypeChangesOverMCP(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	tests := []struct {
		name, tool, args string
		applied          []string // in the graph file after approve
	}{
		{"create type", tools.ProposeConfigureNodeType,
			`{"mode":"create","typeKey":"score-check","displayName":"Score Check","process":"next(incoming[0].data);","size":{"width":240,"height":90},"reason":"a checker"}`,
			[]string{`"_key": "score-check"`, `"process": "next(incoming[0].data);"`, `"width": 240`}},
		{"type look and code", tools.ProposeConfigureNodeType,
			`{"mode":"update","typeKey":"api-call","displayName":"Season API","border":{"radius":3},"processPatches":[{"search":"// Fetch season averages","replace":"// Fetch v2 season averages"}],"reason":"v2"}`,
			[]string{`"displayName": "Season API"`, `"radius": 3`, `// Fetch v2 season averages`}},
		{"html node", tools.ProposeUpdateNode,
			`{"nodeKey":"display-html","updates":{"html":"<h2 style=\"color: teal\">Leaders</h2>"},"reason":"a title"}`,
			[]string{`"tag": "h2"`, `"color",`, `"en": "Leaders"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixOpts{})
			before := canonicalFile(t, f.path)
			res := f.call(tc.tool, tc.args)
			sc := structured(t, res)
			if res.IsError || sc["status"] != "pending" {
				t.Fatalf("proposal: IsError %v, %s", res.IsError, text(res))
			}
			thread := sc["thread"].(string)
			printed := strings.Fields(sc["approve"].(string))
			run := func(args ...string) string {
				cmd := exec.Command(bin, args...)
				cmd.Env = isolatedEnv(t)
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					t.Fatalf("nodius-ai %s: %v\nstdout %s\nstderr %s", strings.Join(args, " "), err, out.String(), errOut.String())
				}
				return out.String()
			}
			run(printed[1:]...)
			raw, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.applied {
				if !strings.Contains(string(raw), want) {
					t.Errorf("graph file after approve lacks %s", want)
				}
			}
			run("undo", thread, "--source", "file:"+f.path, "--db", f.db)
			if now := canonicalFile(t, f.path); now != before {
				t.Errorf("undo did not give the graph back:\nwant %s\ngot  %s", before, now)
			}
		})
	}
}

// canonicalFile is the graph file as JSON with sorted keys.
func canonicalFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
