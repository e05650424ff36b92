package graphdraw

import (
	"slices"
	"sort"
)

// lnode is a node of the layered graph: a real node (real >= 0) or a dummy stop of
// a long edge (real == -1).
type lnode struct {
	real       int
	layer      int
	ins, outs  []int  // indices into layout.edges
	loops      []Mark // self-loops of a real node, one per edge
	w, h, y, x int    // placement, set for each level of detail
	pad        int
	bary       float64
}

// ledge joins two lnodes of adjacent layers, left to right.
type ledge struct {
	from, to int
	grp      int
	reversed bool // the group's edge points right to left (it closed a cycle)
}

// group is the set of parallel edges between two real nodes, in their own direction.
type group struct {
	from, to int // indices into Graph.Nodes
	labels   []edgeLabel
	mark     Mark
}

type edgeLabel struct {
	text string
	mark Mark
}

// layout is a graph with layers and an order within each layer; positions are
// computed from it for each level of detail (see draw).
type layout struct {
	g      Graph
	nodes  []lnode
	edges  []ledge
	groups []group
	chains [][]int // per group, its ledges left to right
	layers [][]int
	back   []bool // per real node: an edge drawn pointing back touches it
}

func newLayout(g Graph) *layout {
	l := &layout{g: g}
	idx := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if _, dup := idx[n.Key]; !dup {
			idx[n.Key] = i
		}
		l.nodes = append(l.nodes, lnode{real: i})
	}

	// Parallel edges become one group; self-loops are kept on their node.
	byPair := map[[2]int]int{}
	for _, e := range g.Edges {
		a, okA := idx[e.From]
		b, okB := idx[e.To]
		if !okA || !okB {
			continue
		}
		if a == b {
			l.nodes[a].loops = append(l.nodes[a].loops, e.Mark)
			continue
		}
		gi, ok := byPair[[2]int{a, b}]
		if !ok {
			gi = len(l.groups)
			byPair[[2]int{a, b}] = gi
			l.groups = append(l.groups, group{from: a, to: b, mark: e.Mark})
		}
		grp := &l.groups[gi]
		grp.labels = append(grp.labels, edgeLabel{text: e.Label, mark: e.Mark})
		if grp.mark != e.Mark {
			grp.mark = Same
		}
	}

	reversed := l.breakCycles(len(g.Nodes))
	layer := l.assignLayers(len(g.Nodes), reversed)
	l.buildLayers(layer, reversed)
	l.order()
	return l
}

// breakCycles marks the groups that close a cycle in a depth-first search started
// from the sources (then from every node left, in input order). Reversing them
// leaves a graph without cycles.
func (l *layout) breakCycles(n int) []bool {
	out := make([][]int, n)
	indeg := make([]int, n)
	for gi, gr := range l.groups {
		out[gr.from] = append(out[gr.from], gi)
		indeg[gr.to]++
	}
	reversed := make([]bool, len(l.groups))
	state := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	type frame struct{ v, next int }
	visit := func(root int) {
		if state[root] != 0 {
			return
		}
		stack := []frame{{root, 0}}
		state[root] = 1
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(out[top.v]) {
				state[top.v] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			gi := out[top.v][top.next]
			top.next++
			w := l.groups[gi].to
			switch state[w] {
			case 1:
				reversed[gi] = true
			case 0:
				state[w] = 1
				stack = append(stack, frame{w, 0})
			}
		}
	}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			visit(v)
		}
	}
	for v := 0; v < n; v++ {
		visit(v)
	}
	return reversed
}

// dagEnds gives a group's ends in the direction the layout uses.
func (l *layout) dagEnds(gi int, reversed []bool) (int, int) {
	gr := l.groups[gi]
	if reversed[gi] {
		return gr.to, gr.from
	}
	return gr.from, gr.to
}

// assignLayers gives each node the length of the longest path reaching it, then
// moves each source right next to its nearest successor, so that an input feeding
// a late step does not sit far to the left with a long edge.
func (l *layout) assignLayers(n int, reversed []bool) []int {
	out := make([][]int, n)
	indeg := make([]int, n)
	for gi := range l.groups {
		a, b := l.dagEnds(gi, reversed)
		out[a] = append(out[a], b)
		indeg[b]++
	}
	layer := make([]int, n)
	queue := make([]int, 0, n)
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	isSource := make([]bool, n)
	for _, v := range queue {
		isSource[v] = true
	}
	for i := 0; i < len(queue); i++ {
		v := queue[i]
		for _, w := range out[v] {
			layer[w] = max(layer[w], layer[v]+1)
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	for v := 0; v < n; v++ {
		if !isSource[v] || len(out[v]) == 0 {
			continue
		}
		nearest := -1
		for _, w := range out[v] {
			if nearest < 0 || layer[w] < nearest {
				nearest = layer[w]
			}
		}
		layer[v] = max(layer[v], nearest-1)
	}
	return layer
}

// buildLayers cuts edges longer than one layer into chains through dummy nodes and
// fills the layers in a first order: input order for real nodes, dummies after.
func (l *layout) buildLayers(layer []int, reversed []bool) {
	top := 0
	for v := range layer {
		l.nodes[v].layer = layer[v]
		top = max(top, layer[v])
	}
	l.back = make([]bool, len(layer))
	for gi := range l.groups {
		a, b := l.dagEnds(gi, reversed)
		if reversed[gi] {
			l.back[a], l.back[b] = true, true
		}
		prev := a
		for k := layer[a] + 1; k < layer[b]; k++ {
			d := len(l.nodes)
			l.nodes = append(l.nodes, lnode{real: -1, layer: k})
			l.link(prev, d, gi, reversed[gi])
			prev = d
		}
		l.link(prev, b, gi, reversed[gi])
	}
	l.layers = make([][]int, top+1)
	for i := range l.nodes {
		k := l.nodes[i].layer
		l.layers[k] = append(l.layers[k], i)
	}
}

func (l *layout) link(a, b, gi int, rev bool) {
	ei := len(l.edges)
	for len(l.chains) <= gi {
		l.chains = append(l.chains, nil)
	}
	l.chains[gi] = append(l.chains[gi], ei)
	l.edges = append(l.edges, ledge{from: a, to: b, grp: gi, reversed: rev})
	l.nodes[a].outs = append(l.nodes[a].outs, ei)
	l.nodes[b].ins = append(l.nodes[b].ins, ei)
}

// sweeps bounds the barycentre passes of crossing reduction.
const sweeps = 16

// order reduces crossings: alternate sweeps right (each layer sorted by the mean
// position of its predecessors) and left (of its successors), keeping the best
// order seen. A node with no neighbour on the side looked at keeps its place.
func (l *layout) order() {
	pos := make([]int, len(l.nodes))
	setPos := func() {
		for _, layer := range l.layers {
			for i, v := range layer {
				pos[v] = i
			}
		}
	}
	setPos()
	best := l.saveOrder()
	bestC := l.crossings(pos)
	for it := 0; it < sweeps && bestC > 0; it++ {
		forward := it%2 == 0
		for k := range l.layers {
			if !forward {
				k = len(l.layers) - 1 - k
			}
			layer := l.layers[k]
			for i, v := range layer {
				sum, cnt := 0.0, 0
				if forward {
					for _, ei := range l.nodes[v].ins {
						sum += float64(pos[l.edges[ei].from])
						cnt++
					}
				} else {
					for _, ei := range l.nodes[v].outs {
						sum += float64(pos[l.edges[ei].to])
						cnt++
					}
				}
				if cnt == 0 {
					l.nodes[v].bary = float64(i)
				} else {
					l.nodes[v].bary = sum / float64(cnt)
				}
			}
			sort.SliceStable(layer, func(i, j int) bool { return l.nodes[layer[i]].bary < l.nodes[layer[j]].bary })
			for i, v := range layer {
				pos[v] = i
			}
		}
		if c := l.crossings(pos); c < bestC {
			best, bestC = l.saveOrder(), c
		}
	}
	l.layers = best
}

func (l *layout) saveOrder() [][]int {
	s := make([][]int, len(l.layers))
	for i, layer := range l.layers {
		s[i] = slices.Clone(layer)
	}
	return s
}

// crossings counts pairs of edges between the same two layers that cross.
func (l *layout) crossings(pos []int) int {
	byLayer := make([][]ledge, len(l.layers))
	for _, e := range l.edges {
		k := l.nodes[e.from].layer
		byLayer[k] = append(byLayer[k], e)
	}
	c := 0
	for _, es := range byLayer {
		for i := range es {
			a1, b1 := pos[es[i].from], pos[es[i].to]
			for j := i + 1; j < len(es); j++ {
				a2, b2 := pos[es[j].from], pos[es[j].to]
				if (a1 < a2 && b1 > b2) || (a1 > a2 && b1 < b2) {
					c++
				}
			}
		}
	}
	return c
}
