package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

const pyAnswer = "Here:\n\n```python\ndef handler(event):\n    for player in event['players']:\n        if player['active'] and player['points_per_game'] > 20 and player['minutes'] > 30:\n            yield player\n```\n"

const tableAnswer = "Nodes:\n\n| key | type | description of the node |\n|---|---|---|\n| fetch-api | api-call | calls the NBA stats endpoint and returns games |\n| filter-active | filter | keeps the active players |\n"

// Wrapped code lines keep their indentation (and say they continue): at 40 columns
// the body of the `if` still reads as indented under it.
func TestMarkdownCodeKeepsIndentWhenWrapped(t *testing.T) {
	t.Parallel()
	for _, dark := range []bool{true, false} {
		for _, noColor := range []bool{true, false} {
			md := newMarkdown(dark, noColor)
			for _, w := range []int{36, 40, 60} {
				out := ansi.Strip(md.Render(pyAnswer, w))
				lines := strings.Split(out, "\n")
				ifIndent := -1
				for i, l := range lines {
					if ansi.StringWidth(l) > w {
						t.Errorf("w=%d: line wider than the screen: %q", w, l)
					}
					if strings.Contains(l, "if player['active']") {
						ifIndent = len(l) - len(strings.TrimLeft(l, " "))
						next := lines[i+1]
						if !strings.Contains(next, "↪") {
							t.Errorf("w=%d: the long if line was not wrapped with a mark:\n%s", w, out)
						}
						if in := len(next) - len(strings.TrimLeft(next, " ")); in < ifIndent {
							t.Errorf("w=%d: continuation at column %d, the if at %d:\n%s", w, in, ifIndent, out)
						}
					}
					if strings.Contains(l, "yield player") && ifIndent >= 0 {
						if in := len(l) - len(strings.TrimLeft(l, " ")); in <= ifIndent {
							t.Errorf("w=%d: yield not under the if:\n%s", w, out)
						}
					}
				}
				if ifIndent < 0 {
					t.Errorf("w=%d: code lost:\n%s", w, out)
				}
			}
		}
	}
}

// A table too wide for the screen becomes one readable bullet per row (no key cut
// mid-word); one that fits stays a table.
func TestMarkdownNarrowTables(t *testing.T) {
	t.Parallel()
	md := newMarkdown(true, true)
	narrow := ansi.Strip(md.Render(tableAnswer, 40))
	for _, want := range []string{"fetch-api", "filter-active", "type: api-call"} {
		if !strings.Contains(narrow, want) {
			t.Errorf("40 columns: %q missing:\n%s", want, narrow)
		}
	}
	wide := ansi.Strip(md.Render(tableAnswer, 120))
	if !strings.Contains(wide, "| type") && !strings.Contains(wide, "│ type") {
		t.Errorf("120 columns: not a table:\n%s", wide)
	}
}

// While a table streams in, the rows already shown do not move.
func TestMarkdownStreamingTableIsStable(t *testing.T) {
	t.Parallel()
	md := newMarkdown(true, true)
	rows := []string{"| a | b |", "|---|---|", "| x | short |", "| a-much-longer-key | a much longer value than before |", "| y | z |"}
	var prev []string
	for i := 3; i <= len(rows); i++ {
		out := strings.Split(ansi.Strip(md.RenderTail(strings.Join(rows[:i], "\n")+"\n", 80)), "\n")
		for j, l := range prev {
			if j < len(out) && out[j] != l {
				t.Errorf("after row %d, line %d changed:\n%q\n%q", i, j, l, out[j])
			}
		}
		prev = out
	}
}

// TestMarkdownRendersTags: the assistant's tags never show raw braces, finished or
// while the tag is still arriving; the tagged key stays.
func TestMarkdownRendersTags(t *testing.T) {
	t.Parallel()
	md := newMarkdown(true, true)
	out := md.Render("{{node:fetch_api}} calls {{highlight:a,b}}; see {{link:https://x.io|docs}}", 80)
	if strings.Contains(out, "{{") || !strings.Contains(out, "fetch_api") || !strings.Contains(out, "docs") {
		t.Fatalf("rendered %q", out)
	}
	if tail := md.RenderTail("it is {{node:fet", 80); strings.Contains(tail, "{{") || strings.Contains(tail, "fet") {
		t.Fatalf("the tail showed a tag still arriving: %q", tail)
	}
}
