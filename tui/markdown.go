package tui

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
)

// markdown renders markdown at a width, keeping one glamour renderer per width
// (building one parses a whole style sheet, far dearer than rendering a message).
type markdown struct {
	style     string
	renderers map[int]*glamour.TermRenderer
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

// Render returns text rendered at width, stripped of control sequences first; when
// glamour fails the plain text is returned (a message is never lost to a renderer).
func (md *markdown) Render(text string, width int) string {
	text = strip(text)
	if strings.TrimSpace(text) == "" {
		return ""
	}
	r := md.renderers[width]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(md.style), glamour.WithWordWrap(width))
		if err != nil {
			return wrapPlain(text, width)
		}
		md.renderers[width] = r
	}
	out, err := r.Render(text)
	if err != nil {
		return wrapPlain(text, width)
	}
	return trimBlankLines(out)
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
