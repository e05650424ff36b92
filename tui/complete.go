package tui

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// completion is the node list @ completion searches. It is prepared once, off the
// UI loop (in the command that loads the nodes): keys and types stripped of
// control sequences and lower-cased, keys in order, so that a keystroke over a
// 100,000-node graph costs a scan of plain strings, not a sort of the graph.
type completion struct {
	refs   []NodeRef // stripped: drawn in the menu and inserted into the question
	keys   []string  // lower-cased keys, by node
	typeOf []int32   // by node, its type in types
	types  []string  // lower-cased types, each once (a graph has few): scored once a query
	sorted []int32   // nodes by key, for the empty query
	known  map[string]bool

	// The queries just typed, each longer than the one before, with the nodes
	// each matched: a query typed further only matches among the nodes the
	// shorter one did (a subsequence of the longer text is one of the shorter), and
	// erasing a letter goes back to the list of the query before.
	typed []typedQuery
}

type typedQuery struct {
	q       string
	matched []int32
}

func newCompletion(nodes []NodeRef) *completion {
	c := &completion{refs: make([]NodeRef, len(nodes)), keys: make([]string, len(nodes)),
		typeOf: make([]int32, len(nodes)), sorted: make([]int32, len(nodes)), known: make(map[string]bool, len(nodes))}
	typeIDs := map[string]int32{}
	for i, n := range nodes {
		c.refs[i] = NodeRef{Key: strip(n.Key), Type: strip(n.Type)}
		c.keys[i] = strings.ToLower(c.refs[i].Key)
		t := strings.ToLower(c.refs[i].Type)
		id, ok := typeIDs[t]
		if !ok {
			id = int32(len(c.types))
			typeIDs[t] = id
			c.types = append(c.types, t)
		}
		c.typeOf[i] = id
		c.sorted[i] = int32(i)
		c.known[c.refs[i].Key] = true
	}
	sort.SliceStable(c.sorted, func(a, b int) bool { return c.refs[c.sorted[a]].Key < c.refs[c.sorted[b]].Key })
	return c
}

func (c *completion) len() int {
	if c == nil {
		return 0
	}
	return len(c.refs)
}

// find ranks the nodes whose key (or type) holds q as a subsequence: prefix
// matches first, then contiguous, then by how tightly the letters cluster; ties by
// key. At most limit.
func (c *completion) find(q string, limit int) []NodeRef {
	q = strings.ToLower(q)
	if q == "" { // everything matches equally: the first keys
		out := make([]NodeRef, 0, min(limit, len(c.sorted)))
		for _, i := range c.sorted[:min(limit, len(c.sorted))] {
			out = append(out, c.refs[i])
		}
		c.typed = c.typed[:0]
		return out
	}
	type scored struct {
		i int32
		s int
	}
	before := func(a, b scored) bool {
		if a.s != b.s {
			return a.s > b.s
		}
		if ka, kb := c.refs[a.i].Key, c.refs[b.i].Key; ka != kb {
			return ka < kb
		}
		return a.i < b.i
	}
	best := make([]scored, 0, limit+1)
	var matched []int32
	typeScore := make([]int, len(c.types)) // a type's score, -1 when it does not match
	for t, name := range c.types {
		typeScore[t] = -1
		if s, ok := fuzzyScore(name, q); ok {
			typeScore[t] = s - 50 + 1<<20 // kept positive: scores can be negative
		}
	}
	try := func(i int32) {
		s, ok := fuzzyScore(c.keys[i], q)
		if !ok {
			ts := typeScore[c.typeOf[i]]
			if ts < 0 {
				return
			}
			s = ts - 1<<20
		}
		matched = append(matched, i)
		cand := scored{i, s}
		if len(best) == limit && !before(cand, best[limit-1]) {
			return
		}
		pos := sort.Search(len(best), func(j int) bool { return before(cand, best[j]) })
		best = slices.Insert(best, pos, cand)
		if len(best) > limit {
			best = best[:limit]
		}
	}
	for len(c.typed) > 0 && !strings.HasPrefix(q, c.typed[len(c.typed)-1].q) {
		c.typed = c.typed[:len(c.typed)-1]
	}
	if n := len(c.typed); n > 0 && c.typed[n-1].q == q {
		c.typed = c.typed[:n-1] // the same query again: from the one before it
	}
	if n := len(c.typed); n > 0 {
		for _, i := range c.typed[n-1].matched {
			try(i)
		}
	} else {
		for i := range c.keys {
			try(int32(i))
		}
	}
	c.typed = append(c.typed, typedQuery{q, matched})
	out := make([]NodeRef, len(best))
	for j, b := range best {
		out[j] = c.refs[b.i]
	}
	return out
}

func fuzzyScore(s, q string) (int, bool) {
	if q == "" {
		return 0, true
	}
	if strings.HasPrefix(s, q) {
		return 1000 - len(s), true
	}
	if strings.Contains(s, q) {
		return 500 - len(s), true
	}
	if len(q) == 1 {
		return 0, false // one letter in order is one letter anywhere
	}
	score, si, last := 0, 0, -1
	for _, qr := range q {
		found := false
		for si < len(s) {
			r, n := utf8.DecodeRuneInString(s[si:])
			si += n
			if r == qr {
				if last >= 0 && si-n == last {
					score += 5
				}
				last = si
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return score - len(s), true
}
