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

// Every line of a diff carries its number in the old and the new code, in every
// hunk: a 60-line function changed in several places far apart, with lines added
// and removed so that the two numberings drift apart.
func TestLineDiffNumbersEveryHunk(t *testing.T) {
	t.Parallel()
	var old []string
	for i := 1; i <= 60; i++ {
		old = append(old, fmt.Sprintf("  step(%d);", i))
	}
	edits := []struct {
		at   int // 0-based line of old
		drop int
		add  []string
	}{
		{3, 1, []string{"  first(1);", "  first(2);"}},      // two edits close together: one hunk
		{6, 0, []string{"  between();"}},                    //
		{20, 2, nil},                                        // two removed
		{38, 1, []string{"  a();", "  b();", "  c();"}},     // one changed into three
		{52, 0, []string{"  last();"}},                      // one added
		{59, 1, []string{"  end(1);", "  end(2);", "}));"}}, // the last one changed
	}
	var updated []string
	prev := 0
	for _, e := range edits {
		updated = append(updated, old[prev:e.at]...)
		updated = append(updated, e.add...)
		prev = e.at + e.drop
	}
	updated = append(updated, old[prev:]...)
	diff := LineDiff(strings.Join(old, "\n")+"\n", strings.Join(updated, "\n")+"\n")
	hunks, removed, added := 0, 0, 0
	for _, d := range diff {
		switch d.Op {
		case Gap:
			hunks++
			continue
		case '-':
			removed++
		case '+':
			added++
		}
		if d.Op != '+' && (d.Old < 1 || old[d.Old-1] != d.Text) {
			t.Errorf("%c %q numbered %d in the old code, where line %d is %q", d.Op, d.Text, d.Old, d.Old, line(old, d.Old))
		}
		if d.Op != '-' && (d.New < 1 || updated[d.New-1] != d.Text) {
			t.Errorf("%c %q numbered %d in the new code, where line %d is %q", d.Op, d.Text, d.New, d.New, line(updated, d.New))
		}
	}
	if hunks < 4 || removed != 5 || added != 10 {
		t.Errorf("%d gaps, %d removed, %d added: %+v", hunks, removed, added, diff)
	}
}

func line(lines []string, n int) string {
	if n < 1 || n > len(lines) {
		return "(none)"
	}
	return lines[n-1]
}
