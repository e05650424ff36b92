// Package graphdraw draws a small directed graph as text for a terminal: nodes as
// boxes, edges as lines with arrows, laid out left to right in layers, the direction
// a workflow reads.
//
// The layout is the classic layered (Sugiyama) one, in four steps: cycles are broken
// by reversing the back edges of a depth-first search (they are drawn pointing back,
// ◀); nodes get a layer by longest path; long edges are cut into one-row "dummy"
// stops, one per layer crossed, and the nodes of each layer are ordered by repeated
// barycentre sweeps, keeping the order with the fewest crossings; finally rows are
// chosen so each node sits as close as it can to the average of its neighbours
// (least squares under the layer's stacking order, solved by pool-adjacent-
// violators), and each gap between layers gets one vertical track per fanning node.
//
// No maintained Go library does this for a character grid (the Go layered-layout
// modules either compute float coordinates for SVG, bind Graphviz, or are not
// served by the module proxy here), so it is written here, kept small.
//
// The package knows nothing of Nodius graphs or of the TUI: callers build a Graph
// of keys, types and labels, already stripped of terminal control sequences.
package graphdraw

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Mark says how a node or edge figures in a change: drawn in colour, and with a
// marker that survives without colour (+ added, − removed, ~ changed).
type Mark uint8

const (
	Same Mark = iota
	Added
	Removed
	Changed
)

// Node is one box. Key is its identity and first line; Type and Label make up the
// second line when there is room.
type Node struct {
	Key   string
	Type  string
	Label string
	Mark  Mark
	Focus bool // the node a neighbourhood is drawn around: heavy border
}

// Edge joins two node keys. Edges naming an unknown key are ignored.
type Edge struct {
	From, To string
	Label    string
	Mark     Mark
}

// Graph is what Draw draws. Node order is kept where the layout leaves a choice,
// so the same graph always gives the same drawing.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Options of a drawing.
type Options struct {
	// Width is the number of columns available; 0 means no limit. The drawing
	// gets fewer details (shorter texts, one-line boxes, no edge labels) until it
	// fits, and becomes a list when even the plainest drawing does not.
	Width int
	// ASCII draws with plain ASCII characters instead of box drawing.
	ASCII bool
	// Color adds ANSI colours (marks, focus, keys). Markers do not depend on it.
	Color bool
}

// detail is one level of detail, from richest to plainest.
type detail struct {
	info     bool // second line: type · label
	wrap     bool // no second line; a long key goes on two
	maxText  int  // widest text in a box
	maxLabel int  // widest edge label (0: none, markers only)
	pad      int  // blank columns inside the border on each side
	minGap   int  // narrowest gap between layers
}

var details = []detail{
	{info: true, maxText: 26, maxLabel: 12, pad: 1, minGap: 3},
	{info: true, maxText: 18, maxLabel: 8, pad: 1, minGap: 3},
	{info: true, maxText: 14, maxLabel: 7, pad: 1, minGap: 3},
	{info: true, maxText: 12, maxLabel: 7, pad: 0, minGap: 2},
	{wrap: true, maxText: 10, maxLabel: 7, pad: 0, minGap: 2},
	{wrap: true, maxText: 10, pad: 1, minGap: 3},
	{wrap: true, maxText: 8, pad: 0, minGap: 2},
	// No plainer level: a box that shows a few letters of a key ("filte…") no
	// longer says which node it is, and the list, with every key whole, does.
}

// Draw lays g out and draws it, as wide as opts.Width allows. The result ends with
// a newline; an empty graph gives "(no nodes)\n".
func Draw(g Graph, opts Options) string {
	if len(g.Nodes) == 0 {
		return "(no nodes)\n"
	}
	gl := &unicodeGlyphs
	if opts.ASCII {
		gl = &asciiGlyphs
	}
	l := newLayout(g)
	for _, d := range details {
		c := l.draw(d, gl)
		if opts.Width <= 0 || c.w <= opts.Width {
			return c.render(opts.Color)
		}
	}
	return drawList(l, gl, opts)
}

// fit shortens s to at most max columns, ending it with the ellipsis when cut.
func fit(s string, max int, ellipsis string) string {
	if max <= 0 {
		return ""
	}
	if runewidth.StringWidth(s) <= max {
		return s
	}
	ew := runewidth.StringWidth(ellipsis)
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := runewidth.RuneWidth(r)
		if w+rw > max-ew {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteString(ellipsis)
	return b.String()
}

// wrapKey splits a key over two lines of at most max columns, after a '-', '_' or
// '.' when there is one in the first line's reach; the second line is cut when
// still too long.
func wrapKey(s string, max int, ellipsis string) (string, string) {
	if runewidth.StringWidth(s) <= max {
		return s, ""
	}
	cut, w := 0, 0
	soft := -1
	for i, r := range s {
		rw := runewidth.RuneWidth(r)
		if w+rw > max {
			break
		}
		w += rw
		cut = i + utf8.RuneLen(r)
		if r == '-' || r == '_' || r == '.' {
			soft = cut
		}
	}
	if soft > 0 {
		cut = soft
	}
	return s[:cut], fit(s[cut:], max, ellipsis)
}

// markStyle is the colour of a mark (plain for Same).
func markStyle(m Mark) style {
	switch m {
	case Added:
		return styleAdded
	case Removed:
		return styleRemoved
	case Changed:
		return styleChanged
	}
	return plain
}

// marker is the text that says a mark without colour.
func (g *glyphs) marker(m Mark) string {
	switch m {
	case Added:
		return g.added
	case Removed:
		return g.removed
	case Changed:
		return g.changed
	}
	return ""
}
