package changetext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func TestLineDiff(t *testing.T) {
	t.Parallel()
	var old, new []string
	for i := 1; i <= 20; i++ {
		old = append(old, fmt.Sprintf("line %d", i))
		new = append(new, fmt.Sprintf("line %d", i))
	}
	new[9] = "line ten"                    // line 10 changed
	new = append(new[:15:15], new[16:]...) // line 16 removed
	new = append(new, "line 21")           // one added at the end
	got := LineDiff(strings.Join(old, "\n"), strings.Join(new, "\n")+"\n")
	var b strings.Builder
	for _, d := range got {
		fmt.Fprintf(&b, "%c%d %s\n", d.Op, d.Number(), d.Text)
	}
	want := `…0 
 7 line 7
 8 line 8
 9 line 9
-10 line 10
+10 line ten
 11 line 11
 12 line 12
 13 line 13
 14 line 14
 15 line 15
-16 line 16
 16 line 17
 17 line 18
 18 line 19
 19 line 20
+20 line 21
`
	if b.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", b.String(), want)
	}
	added := Added("a\nb")
	if len(added) != 2 || added[0].Op != '+' || added[1].New != 2 || added[1].Text != "b" {
		t.Errorf("Added: %+v", added)
	}
	if same := LineDiff("x\ny", "x\ny\n"); len(same) != 0 {
		t.Errorf("a trailing newline alone is a change: %+v", same)
	}
}

// The change printed for a decision shows a direction control; the one printed
// elsewhere (threads show) removes it. Code is numbered, with context.
func TestWriteForDecisionRevealsDirectionControls(t *testing.T) {
	t.Parallel()
	a := datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
		NodeKey: "n\u202e1",
		Before:  map[string]any{"process": "a\nb\nc\n"},
		Changes: map[string]any{"process": "a\nif (isAdmin\u202e) {\nc\n"},
	}}
	var shown, stored strings.Builder
	WriteForDecision(&shown, a, "")
	Write(&stored, a, "")
	for _, want := range []string{"~ update node n⟨U+202E⟩1", "    2 - b", "    2 + if (isAdmin⟨U+202E⟩) {", "    1   a", "    3   c"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("WriteForDecision lacks %q:\n%s", want, shown.String())
		}
	}
	if strings.ContainsRune(stored.String(), 0x202e) || strings.Contains(stored.String(), "U+202E") || !strings.Contains(stored.String(), "if (isAdmin) {") {
		t.Errorf("Write:\n%s", stored.String())
	}
}
