package prompt

import (
	"strings"
	"testing"
)

// TestHomePrompt: the home prompt says no graph is open, names the listing tools,
// and offers the creations to an editor only.
func TestHomePrompt(t *testing.T) {
	ed := HomePrompt("editor")
	for _, want := range []string{"no graph is open", "list_user_graphs", "list_node_configs", "propose_create_graph", "propose_create_html_class", "{{graph:KEY}}"} {
		if !strings.Contains(ed, want) {
			t.Errorf("editor's home prompt lacks %q", want)
		}
	}
	if v := HomePrompt("viewer"); strings.Contains(v, "propose_create") || !strings.Contains(v, "read-only") {
		t.Errorf("viewer's home prompt offers creation or does not say read-only:\n%s", v)
	}
	if HomePrompt("editor") != ed {
		t.Error("the home prompt is not deterministic")
	}
}
