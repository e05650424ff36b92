package tui

import (
	"regexp"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"

	"github.com/charmbracelet/x/ansi"
	"github.com/nodius/nodius-ai/internal/clientaction"
)

// markdown renders markdown at a width, keeping one glamour renderer per width
// (building one parses a whole style sheet, far dearer than rendering a message).
//
// Two things glamour does badly in a narrow terminal are done here instead:
//   - code blocks are rendered without wrapping, then each long line is wrapped
//     with its indentation kept (and a ↪ mark), so Python still reads as Python;
//   - a table wider than the terminal becomes one bullet per row ("column: value"),
//     and so does a table still streaming in, whose column widths would otherwise
//     jump with every row.
type markdown struct {
	style     string
	renderers map[int]*glamour.TermRenderer
	// names resolves the keys of the assistant's tags ({{node:K}}, …), once the
	// graph's nodes are loaded; until then a tag shows its key.
	names clientaction.Names
}

func newMarkdown(dark, noColor bool) *markdown {
	style := styles.LightStyle
	switch {
	case noColor:
		style = styles.AsciiStyle
	case dark:
		style = styles.DarkStyle
	}
	return &markdown{style: style, renderers: map[int]*glamour.TermRenderer{}}
}

// wideCode is the width code blocks are rendered at before being wrapped here.
const wideCode = 500

func (md *markdown) renderer(width int) *glamour.TermRenderer {
	r := md.renderers[width]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(md.style), glamour.WithWordWrap(width))
		if err != nil {
			return nil
		}
		md.renderers[width] = r
	}
	return r
}

// Render returns text rendered at width, stripped of control sequences first; when
// glamour fails the plain text is returned (a message is never lost to a renderer).
func (md *markdown) Render(text string, width int) string { return md.render(text, width, false) }

// RenderTail renders the unfinished end of a streaming answer: a table there is
// still growing, so it is shown as rows that do not depend on each other's widths.
func (md *markdown) RenderTail(text string, width int) string { return md.render(text, width, true) }

// maxProse is the widest an answer is set: longer lines are hard to read on a very
// wide terminal (250 columns), as in glow and mods.
const maxProse = 120

func (md *markdown) render(text string, width int, tail bool) string {
	width = min(width, maxProse)
	text = strip(text)
	if tail {
		text = clientaction.Complete(text) // a tag still arriving is not shown raw
	}
	if strings.TrimSpace(text) == "" {
		return ""
	}
	var out []string
	for _, seg := range splitFences(text) {
		var s string
		if seg.fence {
			s = md.renderCode(seg.text, width)
		} else {
			s = md.renderProse(narrowTables(md.tags(seg.text), width, tail), width)
		}
		if s = trimBlankLines(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n\n")
}

// tags turns the assistant's tags into readable markdown: a node's key as code
// (as the model writes node names) with its type, several keys likewise, a link
// as its label and address. Never raw braces.
func (md *markdown) tags(text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return clientaction.RenderString(text, clientaction.Options{Names: md.names, Style: func(k clientaction.Kind, t string) string {
		switch k {
		case clientaction.Node, clientaction.Graph, clientaction.NodeConfig, clientaction.HTML:
			key, rest, _ := strings.Cut(t, " (")
			if rest != "" {
				rest = " (" + rest
			}
			return "`" + strings.ReplaceAll(key, "`", "'") + "`" + rest
		case clientaction.Select, clientaction.Highlight:
			keys := strings.Split(t, ", ")
			for i, k := range keys {
				keys[i] = "`" + strings.ReplaceAll(k, "`", "'") + "`"
			}
			return strings.Join(keys, ", ")
		}
		return t
	}})
}

func (md *markdown) renderProse(text string, width int) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	r := md.renderer(width)
	if r == nil {
		return wrapPlain(text, width)
	}
	out, err := r.Render(text)
	if err != nil {
		return wrapPlain(text, width)
	}
	return out
}

// renderCode renders one fenced block unwrapped and wraps its long lines keeping
// their indentation.
func (md *markdown) renderCode(fence string, width int) string {
	r := md.renderer(wideCode)
	if r == nil {
		return wrapPlain(fence, width)
	}
	out, err := r.Render(fence)
	if err != nil {
		return wrapPlain(fence, width)
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = trimRightStyled(l)
		lines = append(lines, wrapCodeLine(l, width)...)
	}
	return strings.Join(lines, "\n")
}

// trimRightStyled drops the trailing padding glamour adds (spaces and the styles
// around them), keeping the styles of what shows.
func trimRightStyled(l string) string {
	n := ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " "))
	if n == 0 {
		return ""
	}
	if n < ansi.StringWidth(l) {
		l = ansi.Truncate(l, n, "")
	}
	return endStyles(l)
}

var trailingSGR = regexp.MustCompile(`(\x1b\[[0-9;:]*m)+$`)

// endStyles replaces the zero-width style sequences a cut leaves at the end of a
// line by one reset.
func endStyles(l string) string {
	if loc := trailingSGR.FindStringIndex(l); loc != nil {
		return l[:loc[0]] + "\x1b[m"
	}
	return l
}

// wrapCodeLine cuts a rendered code line to width, at a space when there is one in
// the second half of the line; the continuation lines start at the line's own
// indentation, marked ↪, so a wrapped statement never looks like a line of its own.
func wrapCodeLine(l string, width int) []string {
	if ansi.StringWidth(l) <= width {
		return []string{l}
	}
	plain := ansi.Strip(l)
	ind := len(plain) - len(strings.TrimLeft(plain, " "))
	ind = min(ind, width/2)
	cont := strings.Repeat(" ", ind) + "↪ "
	room := max(4, width-ind-2)
	cut := func(s string, w int) int { // columns to take from s
		r := []rune(ansi.Strip(s))
		if len(r) <= w {
			return len(r)
		}
		for i := w - 1; i > w/2; i-- {
			if r[i] == ' ' {
				return i + 1
			}
		}
		return w
	}
	n := cut(l, width)
	out := []string{endStyles(ansi.Truncate(l, n, ""))}
	rest := ansi.TruncateLeft(l, n, "")
	for ansi.StringWidth(rest) > 0 {
		n = cut(rest, room)
		out = append(out, cont+endStyles(ansi.Truncate(rest, n, "")))
		rest = ansi.TruncateLeft(rest, n, "")
	}
	return out
}

// segment is a run of prose or one fenced code block (fences included).
type segment struct {
	text  string
	fence bool
}

// splitFences cuts markdown into prose and fenced code blocks. An unclosed fence
// (still streaming) runs to the end.
func splitFences(text string) []segment {
	var segs []segment
	var cur strings.Builder
	inFence := false
	marker := ""
	flush := func(fence bool) {
		if cur.Len() > 0 {
			segs = append(segs, segment{text: cur.String(), fence: fence})
			cur.Reset()
		}
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !inFence && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			flush(false)
			inFence, marker = true, t[:3]
			cur.WriteString(line)
		case inFence && strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "":
			cur.WriteString(line)
			flush(true)
			inFence = false
		default:
			cur.WriteString(line)
		}
	}
	flush(inFence)
	return segs
}

var tableDelim = regexp.MustCompile(`^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$`)

// narrowTables rewrites each table that is wider than width (or, in a streaming
// tail, the table still growing at the end) as one bullet per row.
func narrowTables(text string, width int, tail bool) string {
	if !strings.Contains(text, "|") {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if i+1 < len(lines) && strings.Contains(lines[i], "|") && tableDelim.MatchString(lines[i+1]) && strings.Contains(lines[i+1], "-") {
			j := i + 2
			for j < len(lines) && strings.Contains(lines[j], "|") && strings.TrimSpace(lines[j]) != "" {
				j++
			}
			header := cells(lines[i])
			var rows [][]string
			for _, l := range lines[i+2 : j] {
				rows = append(rows, cells(l))
			}
			growing := tail && j == len(lines) || tail && j == len(lines)-1 && strings.TrimSpace(lines[j]) == ""
			if growing || tableWidth(header, rows) > width {
				out = append(out, tableAsList(header, rows)...)
			} else {
				out = append(out, lines[i:j]...)
			}
			i = j - 1
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

// cells splits a table row on unescaped pipes.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// tableWidth is the width glamour needs to draw the table without wrapping cells:
// the widest cell of each column, the separators, and the margins.
func tableWidth(header []string, rows [][]string) int {
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for c, v := range r {
			if c < len(widths) {
				widths[c] = max(widths[c], ansi.StringWidth(v))
			}
		}
	}
	total := 4 + 3*max(0, len(widths)-1) + 2
	for _, w := range widths {
		total += w
	}
	return total
}

// tableAsList writes rows as bullets: the first column in bold, then "header:
// value" for the others.
func tableAsList(header []string, rows [][]string) []string {
	out := []string{""}
	for _, r := range rows {
		var parts []string
		for c, v := range r {
			if v == "" {
				continue
			}
			switch {
			case c == 0:
				parts = append(parts, "**"+v+"**")
			case c < len(header) && header[c] != "":
				parts = append(parts, header[c]+": "+v)
			default:
				parts = append(parts, v)
			}
		}
		if len(parts) > 0 {
			out = append(out, "- "+strings.Join(parts, " · "))
		}
	}
	return append(out, "")
}

// trimBlankLines drops the empty lines glamour puts around a document, so blocks
// stack with spacing the transcript controls.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	start, end := 0, len(lines)
	for start < end && isBlank(lines[start]) {
		start++
	}
	for end > start && isBlank(lines[end-1]) {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

func isBlank(line string) bool {
	return strings.TrimSpace(stripANSI(line)) == ""
}
