package tools

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
)

// toolSchema is the part of a tool definition the parity tests compare.
type toolSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// checkParity compares defs with the tools recorded from the Nodius server in file:
// every recorded tool is in defs under the same name with the same required
// arguments, and every argument the server's tool takes is one ours takes. It
// returns the number of recorded tools and of ours.
func checkParity(t *testing.T, file string, defs []convo.ToolDef) (recorded, offered int) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var real []struct {
		Function struct {
			Name       string     `json:"name"`
			Parameters toolSchema `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &real); err != nil {
		t.Fatal(err)
	}
	ours := map[string]toolSchema{}
	for _, d := range defs {
		var s toolSchema
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		ours[d.Name] = s
	}
	for _, r := range real {
		name := r.Function.Name
		o, ok := ours[name]
		if !ok {
			t.Errorf("%s: the server's tool is missing", name)
			continue
		}
		want := slices.Sorted(slices.Values(r.Function.Parameters.Required))
		got := slices.Sorted(slices.Values(o.Required))
		if !slices.Equal(want, got) {
			t.Errorf("%s: required %v, the server's %v", name, got, want)
		}
		for p := range r.Function.Parameters.Properties {
			if _, ok := o.Properties[p]; !ok {
				t.Errorf("%s: the server's argument %q is missing", name, p)
			}
		}
	}
	return len(real), len(ours)
}

// TestParityWithServerTools checks the contract with the Nodius server's assistant:
// every tool it sends the model (testdata/real-tools.json, recorded from the server)
// is offered to an editor under the same name with the same required arguments, and
// every argument the server's tool takes is one ours takes.
func TestParityWithServerTools(t *testing.T) {
	if n, _ := checkParity(t, "testdata/real-tools.json", ToolDefs(RoleEditor, nil)); n < 17 {
		t.Fatalf("the recording holds %d tools, want the 17 of the server", n)
	}
}
