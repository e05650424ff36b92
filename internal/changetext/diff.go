package changetext

import (
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// DiffLine is one line of a line diff, numbered as in the file it comes from.
type DiffLine struct {
	// Op is '-' for a removed line, '+' for an added one, ' ' for context, and
	// '…' (Gap) between two hunks, where unchanged lines are left out.
	Op rune
	// Old and New are the 1-based numbers of the line before and after the
	// change; 0 on the side the line is not in.
	Old, New int
	Text     string
}

// Gap is the Op of the line that stands for unchanged lines left out.
const Gap = '…'

// Number is the line number to show: the old one for a removed line, else the new.
func (d DiffLine) Number() int {
	if d.Op == '-' {
		return d.Old
	}
	return d.New
}

// diffContext is how many unchanged lines are shown around a change, as in
// git diff and the Nodius web client.
const diffContext = 3

// LineDiff is the line diff of old and new with three lines of context, the way a
// person reviews code: what is removed and added where, among the lines around it.
// Text is not sanitised: callers strip or reveal it for their display.
func LineDiff(old, new string) []DiffLine {
	old, new = withNewline(old), withNewline(new)
	u, err := udiff.ToUnifiedDiff("old", "new", old, udiff.Lines(old, new), diffContext)
	if err != nil { // edits computed from old itself are always valid; show it whole
		return wholeReplace(old, new)
	}
	var out []DiffLine
	// The new file's line numbers are counted here from the old one's: the
	// library's ToLine is wrong in a hunk after one that joined several edits.
	shift := 0 // new line number minus old, after the previous hunk
	for i, h := range u.Hunks {
		if i > 0 || h.FromLine > 1 {
			out = append(out, DiffLine{Op: Gap})
		}
		o, n := h.FromLine, h.FromLine+shift
		for _, l := range h.Lines {
			text := strings.TrimSuffix(l.Content, "\n")
			switch l.Kind {
			case udiff.Delete:
				out = append(out, DiffLine{Op: '-', Old: o, Text: text})
				o++
			case udiff.Insert:
				out = append(out, DiffLine{Op: '+', New: n, Text: text})
				n++
			default:
				out = append(out, DiffLine{Op: ' ', Old: o, New: n, Text: text})
				o++
				n++
			}
		}
		shift = n - o
		if i == len(u.Hunks)-1 && o <= strings.Count(old, "\n") {
			out = append(out, DiffLine{Op: Gap})
		}
	}
	return out
}

// Added is every line of text as added: new code with nothing before it.
func Added(text string) []DiffLine { return LineDiff("", text) }

func wholeReplace(old, new string) []DiffLine {
	var out []DiffLine
	for i, l := range splitLines(old) {
		out = append(out, DiffLine{Op: '-', Old: i + 1, Text: l})
	}
	for i, l := range splitLines(new) {
		out = append(out, DiffLine{Op: '+', New: i + 1, Text: l})
	}
	return out
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// lastNumber is the highest line number in diff, to size its number column.
func lastNumber(diff []DiffLine) int {
	n := 0
	for _, d := range diff {
		n = max(n, d.Old, d.New)
	}
	return n
}
