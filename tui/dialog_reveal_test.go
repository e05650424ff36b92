package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// A direction control or a zero-width character inside a data value, a data key,
// a node key or a name is shown in the dialog as a marker (⟨U+202E⟩), never
// deleted: `safe\u202e txt.exe` must not read "safe txt.exe". What is read is
// what is applied.
func TestDialogShowsHiddenCharacters(t *testing.T) {
	t.Parallel()
	before := map[string]any{"method": "GET", "url": "https://example.com/a.json", "note": "x"}
	after := map[string]any{"method": "GET", "url": "safe\u202e txt.exe", "no\u200bte": "a<b & c", "note": "x"}
	p := &convo.Proposal{ID: "call_h", ThreadID: "t1", Tool: "propose_update_node", Reason: "point at the file",
		Action: datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
			NodeKey: "fetch\u2060api", Before: map[string]any{"data": before, "name": "Fetch"},
			Changes: map[string]any{"data": after, "name": "Fetch\ufeff"},
		}}}
	for _, sz := range [][2]int{{40, 18}, {80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			m, _ := openSized(t, clk, p, sz[0], sz[1])
			var text strings.Builder
			for _, s := range pageThrough(m, "pgdown") {
				for _, r := range dialogLines(s) {
					text.WriteString(strings.TrimPrefix(r, "↪ ") + "\n")
				}
			}
			// A value wrapped at 40 columns can break anywhere: read the rows joined.
			all := strings.ReplaceAll(text.String(), "\n", "")
			for _, want := range []string{"safe⟨U+202E⟩", "no⟨U+200B⟩te", "fetch⟨U+2060⟩api", "Fetch⟨U+FEFF⟩", `"a<b`} {
				if !strings.Contains(all, want) {
					t.Errorf("%q is not shown:\n%s", want, text.String())
				}
			}
			if strings.Contains(all, "safe txt.exe") || strings.Contains(all, "\u202e") || strings.Contains(all, "\\u003c") {
				t.Errorf("a hidden character is deleted, kept raw or escaped:\n%s", text.String())
			}
		})
	}
}

// A data change reads field by field in the dialog, as in ask: only what changed,
// nested keys by path, not the two whole objects.
func TestDialogShowsDataFieldByField(t *testing.T) {
	t.Parallel()
	before := map[string]any{"method": "GET", "url": "https://a", "headers": map[string]any{"Authorization": "x", "Accept": "json"}}
	after := map[string]any{"method": "GET", "url": "https://a", "headers": map[string]any{"Authorization": "y", "Accept": "json"}}
	p := &convo.Proposal{ID: "call_f", ThreadID: "t1", Tool: "propose_update_node", Reason: "rotate the key",
		Action: datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
			NodeKey: "fetch-api", Before: map[string]any{"data": before}, Changes: map[string]any{"data": after},
		}}}
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, _ := openSized(t, clk, p, 120, 40)
	var text strings.Builder
	for _, s := range pageThrough(m, "pgdown") {
		for _, r := range dialogLines(s) {
			text.WriteString(r + "\n")
		}
	}
	if !strings.Contains(text.String(), `data.headers.Authorization: "x" → "y"`) {
		t.Errorf("the changed field is not named by its path:\n%s", text.String())
	}
	if strings.Contains(text.String(), "method") || strings.Contains(text.String(), "Accept") {
		t.Errorf("unchanged fields are shown:\n%s", text.String())
	}
}
