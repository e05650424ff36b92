package graphdraw

import "strings"

// drawList is the last resort when no drawing fits the width: one line per node,
// then one indented line per edge leaving it, each cut to the width.
func drawList(l *layout, gl *glyphs, opts Options) string {
	var b strings.Builder
	arrow := "→"
	if opts.ASCII {
		arrow = "->"
	}
	line := func(s string, st style) {
		s = fit(s, opts.Width, gl.ellipsis)
		if opts.Color && st != plain {
			s = sgr[st] + s + "\x1b[0m"
		}
		b.WriteString(s)
		b.WriteByte('\n')
	}
	out := make([][]int, len(l.g.Nodes))
	for gi, gr := range l.groups {
		out[gr.from] = append(out[gr.from], gi)
	}
	for i, n := range l.g.Nodes {
		s := n.Key
		if m := gl.marker(n.Mark); m != "" {
			s = m + " " + s
		}
		if n.Focus {
			s = "* " + s
		}
		if n.Type != "" {
			s += " (" + n.Type + ")"
		}
		st := markStyle(n.Mark)
		if st == plain {
			st = styleKey
		}
		line(s, st)
		for _, lm := range l.nodes[i].loops {
			line("  "+gl.marker(lm)+arrow+" "+n.Key+" "+gl.loop, markStyle(lm))
		}
		for _, gi := range out[i] {
			gr := l.groups[gi]
			s := "  " + gl.marker(gr.mark) + arrow + " " + l.g.Nodes[gr.to].Key
			if lb := groupLabel(gr, gl); lb != "" {
				s += " [" + lb + "]"
			}
			line(s, markStyle(gr.mark))
		}
	}
	return b.String()
}
