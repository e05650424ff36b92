package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// writeAligned writes rows in columns two spaces apart, each line after indent; with
// width > 0 every line is cut to width (with "…") rather than left to wrap. Cells
// may hold SGR sequences: widths are measured on what shows.
func writeAligned(w io.Writer, indent string, rows [][]string, width int) {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r[:max(len(r)-1, 0)] { // the last column is not padded
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
			}
		}
		line := strings.TrimRight(b.String(), " ")
		if width > 0 && ansi.StringWidth(line) > width {
			line = ansi.Truncate(line, width, "…")
			if strings.Contains(line, "\x1b[") {
				line += "\x1b[0m"
			}
		}
		fmt.Fprintln(w, line)
	}
}

// termWidth is the width tables are cut to: the terminal's columns, 0 (no cut) when
// standard output is not a terminal.
func (f *Factory) termWidth() int {
	w, _ := f.IO.Size()
	return w
}
