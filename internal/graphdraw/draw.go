package graphdraw

import (
	"math"
	"sort"
	"strings"

	"github.com/mattn/go-runewidth"
)

// gap is the number of blank rows between two stacked nodes of a layer.
const gap = 1

// boxText is what one box shows at a level of detail.
type boxText struct {
	key, info string
	infoIsKey bool // the second line is the rest of a wrapped key
}

// texts computes each real node's box lines and sets its size.
func (l *layout) texts(d detail, gl *glyphs) []boxText {
	out := make([]boxText, len(l.g.Nodes))
	for i := range l.g.Nodes {
		n := &l.g.Nodes[i]
		ln := &l.nodes[i]
		key, key2 := fit(n.Key, d.maxText, gl.ellipsis), ""
		if d.wrap {
			key, key2 = wrapKey(n.Key, d.maxText, gl.ellipsis)
		}
		if m := gl.marker(n.Mark); m != "" {
			key = m + " " + key
		}
		for _, lm := range ln.loops {
			key += " " + gl.marker(lm) + gl.loop
		}
		info := ""
		if d.info {
			info = n.Type
			if n.Label != "" {
				if info != "" {
					info += gl.sep
				}
				info += n.Label
			}
			info = fit(info, d.maxText, gl.ellipsis)
		}
		if key2 != "" {
			info = key2
		}
		out[i] = boxText{key: key, info: info, infoIsKey: key2 != ""}
		ln.w = max(runewidth.StringWidth(key), runewidth.StringWidth(info), 3) + 2 + 2*d.pad
		ln.pad = d.pad
		ln.h = 3
		if d.info || key2 != "" || l.back[i] {
			ln.h = 4 // a back edge needs its own row, below the key's
		}
	}
	for i := len(l.g.Nodes); i < len(l.nodes); i++ {
		l.nodes[i].w, l.nodes[i].h = 1, 1
	}
	return out
}

// portRow is the row where edge e meets node v: the key row for edges read left to
// right, the row below it (when the box has one) for edges drawn pointing back, so
// a back arrow never sits on a forward line.
func (l *layout) portRow(v int, e ledge) int {
	n := &l.nodes[v]
	if n.real < 0 {
		return n.y
	}
	if e.reversed && n.h >= 4 {
		return n.y + 2
	}
	return n.y + 1
}

// placeRows chooses each node's row: close to the mean port row of its neighbours,
// keeping the layer's order and gaps. Passes alternate predecessors and successors
// and end with both.
func (l *layout) placeRows() {
	for _, layer := range l.layers {
		y := 0
		for _, v := range layer {
			l.nodes[v].y = y
			y += l.nodes[v].h + gap
		}
	}
	const (
		preds = 1 << iota
		succs
	)
	passes := []int{preds, succs, preds, succs, preds | succs}
	want := make([]float64, 0, 16)
	for _, p := range passes {
		for k := range l.layers {
			if p == succs {
				k = len(l.layers) - 1 - k
			}
			layer := l.layers[k]
			want = want[:0]
			for _, v := range layer {
				n := &l.nodes[v]
				sum, cnt := 0.0, 0
				if p&preds != 0 {
					for _, ei := range n.ins {
						e := l.edges[ei]
						sum += float64(l.portRow(e.from, e) - (l.portRow(v, e) - n.y))
						cnt++
					}
				}
				if p&succs != 0 {
					for _, ei := range n.outs {
						e := l.edges[ei]
						sum += float64(l.portRow(e.to, e) - (l.portRow(v, e) - n.y))
						cnt++
					}
				}
				if cnt == 0 {
					want = append(want, float64(n.y))
				} else {
					want = append(want, sum/float64(cnt))
				}
			}
			l.stack(layer, want)
		}
	}
	minY := math.MaxInt
	for i := range l.nodes {
		minY = min(minY, l.nodes[i].y)
	}
	for i := range l.nodes {
		l.nodes[i].y -= minY
	}
}

// stack sets the rows of a layer's nodes as close as possible (least squares) to
// want, keeping their order and at least gap rows between them: with offsets
// taken out the rows must not decrease, which is isotonic regression, solved by
// pooling adjacent violators.
func (l *layout) stack(layer []int, want []float64) {
	type block struct {
		sum   float64
		count int
	}
	offset := make([]int, len(layer))
	off := 0
	for i, v := range layer {
		offset[i] = off
		off += l.nodes[v].h + gap
	}
	blocks := make([]block, 0, len(layer))
	for i := range layer {
		blocks = append(blocks, block{want[i] - float64(offset[i]), 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/float64(a.count) <= b.sum/float64(b.count) {
				break
			}
			blocks = blocks[:len(blocks)-2]
			blocks = append(blocks, block{a.sum + b.sum, a.count + b.count})
		}
	}
	i := 0
	for _, b := range blocks {
		z := int(math.Round(b.sum / float64(b.count)))
		for j := 0; j < b.count; j++ {
			l.nodes[layer[i]].y = z + offset[i]
			i++
		}
	}
}

// bus is everything that leaves one node at one row into the next gap: one line
// out, a vertical track when the targets are on other rows, one line to each.
type bus struct {
	from    int // lnode
	row     int
	targets []busTarget
	st      style
	dashed  bool
	back    bool // an edge pointing back into `from`: arrow at this end
	track   int  // column within the gap, -1 when every target is on row
	lo, hi  int  // rows the track spans
}

type busTarget struct {
	to    int
	row   int
	arrow bool
	label string
	st    style
}

// channel is the gap between layer k and k+1.
type channel struct {
	buses  []*bus
	tracks int
	labelW int
	width  int
}

// draw places the layout at one level of detail and draws it.
func (l *layout) draw(d detail, gl *glyphs) *canvas {
	txt := l.texts(d, gl)
	l.placeRows()

	layerW := make([]int, len(l.layers))
	for k, layer := range l.layers {
		layerW[k] = 1
		for _, v := range layer {
			layerW[k] = max(layerW[k], l.nodes[v].w)
		}
	}
	carrier := l.labelCarriers()
	chans := make([]channel, max(len(l.layers)-1, 0))
	for k := range chans {
		chans[k] = l.channel(k, d, gl, carrier)
	}
	x := 0
	layerX := make([]int, len(l.layers))
	for k := range l.layers {
		layerX[k] = x
		x += layerW[k]
		if k < len(chans) {
			x += chans[k].width
		}
	}
	height := 0
	for i := range l.nodes {
		n := &l.nodes[i]
		n.x = layerX[n.layer]
		height = max(height, n.y+n.h)
	}
	c := newCanvas(x, height, gl)

	// Lines first, then boxes over them, then what sits on top: attachment
	// points, arrows, labels.
	for k := range chans {
		x0 := layerX[k] + layerW[k]
		for _, b := range chans[k].buses {
			l.drawBus(c, b, x0, chans[k])
		}
	}
	for i := range l.g.Nodes {
		l.drawBox(c, i, txt[i])
	}
	for k := range chans {
		x0 := layerX[k] + layerW[k]
		ch := chans[k]
		for _, b := range ch.buses {
			from := &l.nodes[b.from]
			if from.real >= 0 {
				if b.back {
					c.put(from.x+from.w, b.row, gl.arrowL, b.st)
				} else {
					c.put(from.x+from.w-1, b.row, gl.attachR, c.at(from.x+from.w-1, b.row).st)
				}
			}
			for _, t := range b.targets {
				to := &l.nodes[t.to]
				if t.arrow {
					c.put(x0+ch.width-1, t.row, gl.arrowR, t.st)
				} else if to.real >= 0 {
					c.put(to.x, t.row, gl.attachL, c.at(to.x, t.row).st)
				}
				if t.label != "" {
					c.text(x0+1+2*ch.tracks, t.row, t.label, ch.labelW, t.st)
				}
			}
		}
	}
	return c
}

// labelCarriers chooses, for each group of edges, the one segment that shows its
// label: the rightmost whose arrival row in its gap no other group shares, so a
// label is never read as belonging to a neighbour merging into the same line; the
// last segment when every row is shared.
func (l *layout) labelCarriers() []bool {
	type slot struct{ layer, row int }
	arrivals := map[slot]map[int]bool{}
	for _, e := range l.edges {
		s := slot{l.nodes[e.from].layer, l.portRow(e.to, e)}
		if arrivals[s] == nil {
			arrivals[s] = map[int]bool{}
		}
		arrivals[s][e.grp] = true
	}
	carrier := make([]bool, len(l.edges))
	for _, chain := range l.chains {
		pick := chain[len(chain)-1]
		for i := len(chain) - 1; i >= 0; i-- {
			e := l.edges[chain[i]]
			if len(arrivals[slot{l.nodes[e.from].layer, l.portRow(e.to, e)}]) == 1 {
				pick = chain[i]
				break
			}
		}
		carrier[pick] = true
	}
	return carrier
}

// channel gathers the buses of gap k, gives each fanning bus a track and sizes the gap.
func (l *layout) channel(k int, d detail, gl *glyphs, carrier []bool) channel {
	var ch channel
	index := map[[2]int]*bus{}
	labels := map[int][]string{} // target row -> labels
	for _, v := range l.layers[k] {
		for _, ei := range l.nodes[v].outs {
			e := l.edges[ei]
			row := l.portRow(v, e)
			b := index[[2]int{v, row}]
			gr := l.groups[e.grp]
			st := markStyle(gr.mark)
			if b == nil {
				b = &bus{from: v, row: row, st: st, dashed: gr.mark == Removed, track: -1}
				index[[2]int{v, row}] = b
				ch.buses = append(ch.buses, b)
			} else if b.st != st {
				b.st, b.dashed = plain, false
			}
			t := busTarget{to: e.to, row: l.portRow(e.to, e), st: st}
			to := &l.nodes[e.to]
			if to.real >= 0 && !e.reversed {
				t.arrow = true
			}
			if l.nodes[v].real >= 0 && e.reversed {
				b.back = true
			}
			if carrier[ei] && d.maxLabel > 0 {
				if s := groupLabel(gr, gl); s != "" {
					labels[t.row] = append(labels[t.row], s)
				}
			} else if carrier[ei] && gr.mark != Same {
				// No room for labels: the marker alone still says what changed.
				labels[t.row] = append(labels[t.row], gl.marker(gr.mark))
			}
			b.targets = append(b.targets, t)
		}
	}
	// A label goes on the first target at its row; several edges into one row share it.
	done := map[int]bool{}
	for _, b := range ch.buses {
		for i := range b.targets {
			t := &b.targets[i]
			if done[t.row] || len(labels[t.row]) == 0 {
				continue
			}
			done[t.row] = true
			limit := d.maxLabel
			if limit == 0 {
				limit = 1 // the marker alone
			}
			t.label = fit(strings.Join(dedup(labels[t.row]), ","), limit, gl.ellipsis)
		}
	}
	for _, b := range ch.buses {
		b.lo, b.hi = b.row, b.row
		for _, t := range b.targets {
			b.lo, b.hi = min(b.lo, t.row), max(b.hi, t.row)
			if t.label != "" {
				ch.labelW = max(ch.labelW, runewidth.StringWidth(t.label)+1)
			}
		}
	}
	var fanning []*bus
	for _, b := range ch.buses {
		if b.lo != b.hi {
			fanning = append(fanning, b)
		}
	}
	orderTracks(fanning)
	for i, b := range fanning {
		b.track = i
	}
	ch.tracks = len(fanning)
	ch.width = max(d.minGap, 2+2*ch.tracks+ch.labelW)
	return ch
}

// groupLabel is the text for a group of parallel edges: their labels with markers,
// or "×N" for several unlabelled ones.
func groupLabel(gr group, gl *glyphs) string {
	var parts []string
	plainCount := 0
	for _, lb := range gr.labels {
		m := gl.marker(lb.mark)
		if lb.text == "" && m == "" {
			plainCount++
			continue
		}
		parts = append(parts, m+lb.text)
	}
	if plainCount > 1 || (plainCount == 1 && len(parts) > 0) {
		x := "×"
		if gl == &asciiGlyphs {
			x = "x"
		}
		parts = append(parts, x+itoa(plainCount))
	}
	return strings.Join(dedup(parts), ",")
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func dedup(ss []string) []string {
	out := ss[:0:0]
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// orderTracks puts the buses of a gap in the left-to-right order of their tracks
// that makes fewer crossings, pair by pair (an insertion sort on the comparison
// "a left of b crosses less than b left of a").
func orderTracks(bs []*bus) {
	sort.SliceStable(bs, func(i, j int) bool {
		return trackCost(bs[i], bs[j]) < trackCost(bs[j], bs[i])
	})
}

// trackCost counts the crossings between a and b when a's track is left of b's:
// b's incoming line crosses a's track, a's outgoing lines cross b's track.
func trackCost(a, b *bus) int {
	c := 0
	if b.row > a.lo && b.row < a.hi && !a.hasRow(b.row) {
		c++
	}
	for _, t := range a.targets {
		if t.row > b.lo && t.row < b.hi && !b.hasRow(t.row) {
			c++
		}
	}
	return c
}

func (b *bus) hasRow(r int) bool {
	if b.row == r {
		return true
	}
	for _, t := range b.targets {
		if t.row == r {
			return true
		}
	}
	return false
}

// drawBus draws one bus's lines into gap starting at column x0.
func (l *layout) drawBus(c *canvas, b *bus, x0 int, ch channel) {
	from := &l.nodes[b.from]
	sx := from.x // a dummy's line crosses its whole layer
	if from.real >= 0 {
		sx = from.x + from.w - 1
	}
	end := x0 + ch.width - 1
	if b.track < 0 {
		c.hline(b.row, sx, end, b.st, b.dashed)
		return
	}
	tx := x0 + 1 + 2*b.track
	c.hline(b.row, sx, tx, b.st, b.dashed)
	c.vline(tx, b.lo, b.hi, b.st, b.dashed)
	for _, t := range b.targets {
		c.hline(t.row, tx, end, t.st, t.st == styleRemoved)
	}
}

// drawBox draws real node i with its two lines of text.
func (l *layout) drawBox(c *canvas, i int, t boxText) {
	n := &l.g.Nodes[i]
	ln := &l.nodes[i]
	gl := c.glyph
	kind, border := boxPlain, plain
	switch {
	case n.Mark == Removed:
		kind = boxRemoved
	case n.Mark == Added:
		kind = boxAdded
	case n.Focus:
		kind = boxFocus
	}
	border = markStyle(n.Mark)
	if n.Focus && n.Mark == Same {
		border = styleFocus
	}
	bs := gl.box[kind]
	x1, y1, x2, y2 := ln.x, ln.y, ln.x+ln.w-1, ln.y+ln.h-1
	for x := x1; x <= x2; x++ {
		for y := y1; y <= y2; y++ {
			c.put(x, y, ' ', plain)
		}
	}
	for x := x1 + 1; x < x2; x++ {
		c.put(x, y1, bs.h, border)
		c.put(x, y2, bs.h, border)
	}
	for y := y1 + 1; y < y2; y++ {
		c.put(x1, y, bs.v, border)
		c.put(x2, y, bs.v, border)
	}
	c.put(x1, y1, bs.tl, border)
	c.put(x2, y1, bs.tr, border)
	c.put(x1, y2, bs.bl, border)
	c.put(x2, y2, bs.br, border)
	keySt := styleKey
	if n.Mark != Same {
		keySt = markStyle(n.Mark)
	}
	inner := ln.w - 2 - 2*ln.pad
	c.text(x1+1+ln.pad, y1+1, t.key, inner, keySt)
	if ln.h >= 4 {
		st := styleDim
		if t.infoIsKey {
			st = keySt
		}
		c.text(x1+1+ln.pad, y1+2, t.info, inner, st)
	}
}
