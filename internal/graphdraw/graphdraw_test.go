package graphdraw

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/nodius/nodius-ai/internal/goldentest"
)

func chain(keys ...string) []Edge {
	var es []Edge
	for i := 0; i+1 < len(keys); i++ {
		es = append(es, Edge{From: keys[i], To: keys[i+1]})
	}
	return es
}

func nodes(keys ...string) []Node {
	var ns []Node
	for _, k := range keys {
		ns = append(ns, Node{Key: k, Type: "step"})
	}
	return ns
}

// generated are small graphs built to exercise each part of the layout.
var generated = map[string]Graph{
	// Every left node feeds every right node, listed so the first order crosses.
	"crossings": {
		Nodes: nodes("a1", "a2", "a3", "b1", "b2", "b3"),
		Edges: []Edge{{From: "a1", To: "b3"}, {From: "a2", To: "b1"}, {From: "a3", To: "b2"}, {From: "a1", To: "b2"}, {From: "a3", To: "b1"}},
	},
	"cycle": {
		Nodes: nodes("start", "retry", "call", "done"),
		Edges: append(chain("start", "call", "retry", "call"), Edge{From: "call", To: "done", Label: "ok"}, Edge{From: "retry", To: "start", Label: "give up"}),
	},
	"selfloop": {
		Nodes: nodes("poll", "next"),
		Edges: []Edge{{From: "poll", To: "poll"}, {From: "poll", To: "next"}, {From: "next", To: "next", Mark: Added}},
	},
	"parallel": {
		Nodes: nodes("src", "dst", "other"),
		Edges: []Edge{{From: "src", To: "dst"}, {From: "src", To: "dst"}, {From: "src", To: "dst", Label: "error"}, {From: "dst", To: "other"}, {From: "dst", To: "other"}},
	},
	"long-edge": {
		Nodes: nodes("a", "b", "c", "d", "e"),
		Edges: append(chain("a", "b", "c", "d"), Edge{From: "a", To: "d", Label: "skip"}, Edge{From: "e", To: "d"}),
	},
	"marks": {
		Nodes: []Node{{Key: "keep", Type: "filter", Focus: true}, {Key: "new-step", Type: "transform", Label: "sort by pts", Mark: Added}, {Key: "old-step", Type: "log-node", Mark: Removed}, {Key: "edited", Type: "html", Mark: Changed}},
		Edges: []Edge{{From: "keep", To: "new-step", Mark: Added}, {From: "keep", To: "old-step", Mark: Removed, Label: "error"}, {From: "new-step", To: "edited", Mark: Added}, {From: "keep", To: "edited", Mark: Removed}},
	},
}

func TestGolden(t *testing.T) {
	for name, g := range generated {
		for _, width := range []int{0, 60, 40, 24} {
			for _, ascii := range []bool{false, true} {
				file := fmt.Sprintf("%s-w%d", name, width)
				if ascii {
					file += "-ascii"
				}
				got := Draw(g, Options{Width: width, ASCII: ascii})
				for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
					if width > 0 && len([]rune(line)) > width {
						t.Errorf("%s: line %d is %d wide, more than %d: %q", file, i+1, len([]rune(line)), width, line)
					}
				}
				if ascii && strings.IndexFunc(got, func(r rune) bool { return r > 0x7f }) >= 0 {
					t.Errorf("%s: the ASCII drawing has other characters:\n%s", file, got)
				}
				goldentest.Check(t, file, got)
			}
		}
	}
}

// TestCrossingReduction checks the ordering step on its own: the input order of
// "crossings" makes crossings, the layout's order makes none.
func TestCrossingReduction(t *testing.T) {
	l := newLayout(generated["crossings"])
	pos := make([]int, len(l.nodes))
	for _, layer := range l.layers {
		for i, v := range layer {
			pos[v] = i
		}
	}
	if c := l.crossings(pos); c != 0 {
		t.Errorf("%d crossings left after ordering: layers %v", c, l.layers)
	}
	for v := range pos {
		pos[v] = v % 3 // the input order: a1 a2 a3 / b1 b2 b3
	}
	if c := l.crossings(pos); c == 0 {
		t.Error("the input order has no crossings: the test graph no longer tests anything")
	}
}

// TestCyclesAreDrawnBack checks that an edge closing a cycle points back (◀) and
// every node still gets drawn once.
func TestCyclesAreDrawnBack(t *testing.T) {
	got := Draw(generated["cycle"], Options{})
	if strings.Count(got, "◀") != 2 {
		t.Errorf("want 2 back arrows (retry→call, retry→start):\n%s", got)
	}
	for _, k := range []string{"start", "retry", "call", "done"} {
		if strings.Count(got, "│ "+k+" ") != 1 {
			t.Errorf("%s drawn %d times:\n%s", k, strings.Count(got, "│ "+k+" "), got)
		}
	}
}

// TestRandomGraphs draws random graphs (cycles, self-loops, parallel edges, wide
// runes, marks) at several widths: never a panic, never wider than asked, every
// node key present (whole or cut) in some form.
func TestRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"fetch", "filter-active", "表示-html", "x", "error-handler-with-a-long-name", "sort", "ret", "n7", "日本語キー", "audit"}
	for i := 0; i < 100; i++ {
		n := 1 + rng.IntN(len(keys))
		var g Graph
		for j := 0; j < n; j++ {
			g.Nodes = append(g.Nodes, Node{Key: keys[j], Type: "t", Label: "label", Mark: Mark(rng.IntN(4)), Focus: j == 0})
		}
		for j := rng.IntN(3 * n); j > 0; j-- {
			g.Edges = append(g.Edges, Edge{From: keys[rng.IntN(n)], To: keys[rng.IntN(n)], Label: []string{"", "ok", "error"}[rng.IntN(3)], Mark: Mark(rng.IntN(4))})
		}
		g.Edges = append(g.Edges, Edge{From: "nowhere", To: keys[0]})
		for _, width := range []int{0, 120, 60, 30, 20} {
			for _, ascii := range []bool{false, true} {
				out := Draw(g, Options{Width: width, ASCII: ascii, Color: i%2 == 0})
				plainOut := Draw(g, Options{Width: width, ASCII: ascii})
				for _, line := range strings.Split(strings.TrimSuffix(plainOut, "\n"), "\n") {
					if w := runewidth.StringWidth(line); width > 0 && w > width {
						t.Fatalf("graph %d width %d: line %d wide: %q\n%s", i, width, w, line, plainOut)
					}
				}
				if !strings.Contains(out, keys[0][:1]) {
					t.Fatalf("graph %d: first key missing:\n%s", i, out)
				}
			}
		}
	}
}
