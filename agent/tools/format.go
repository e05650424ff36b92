package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// Truncation limits of tool results, in characters (runes). read_node_detail is the
// tool the model calls to see a node in full, so it gets far more room than the
// retrieval context (500); list-like results show a one-line preview only.
const (
	DetailProcessMax = 4000
	DetailDataMax    = 2000
	PreviewMax       = 160
	ConfigDescMax    = 160
	// MaxListNodes and MaxListEdges bound the lists of explore_neighborhood and
	// list_node_edges on hub nodes of big graphs; the result says when it is cut.
	MaxListNodes = 50
	MaxListEdges = 100
)

// Builtin describes one built-in node type: always known, whatever the workspace.
type Builtin struct {
	Type        string
	Description string
	Handles     map[string]datasource.HandleGroup
}

// Builtins documents the built-in types (datasource.BuiltinTypes), with the handles a
// node of that type has when it is given none (datasource.DefaultHandles).
func Builtins() []Builtin {
	return []Builtin{
		{Type: "starter", Description: "Start of a sheet's flow: receives the entry data from an entryType form on its middle input \"1\" and starts the flow at its output \"0\" (right side).", Handles: datasource.DefaultHandles("starter", nil)},
		{Type: "return", Description: "End of the flow: the value it receives becomes the workflow's result.", Handles: datasource.DefaultHandles("return", nil)},
		{Type: "html", Description: "Renders HTML for the user; its data holds the HTML object. An entryType form may feed its middle input \"1\"; its middle output \"0\" sends the page's events (event[]) on.", Handles: datasource.DefaultHandles("html", nil)},
		{Type: "entryType", Description: "Entry form: describes the input the workflow expects (fields in data) and feeds it from its middle output \"0\" to input \"1\" of a starter or html node.", Handles: datasource.DefaultHandles("entryType", nil)},
	}
}

func builtin(t string) (Builtin, bool) {
	for _, b := range Builtins() {
		if b.Type == t {
			return b, true
		}
	}
	return Builtin{}, false
}

// HandlesSummary writes handles compactly as "L:0:in, R:0:out, R:1:out(json)": side,
// point id, direction and, when not "any", the accepted data type. Edges name handles
// by point id, so the id is what the model must see.
func HandlesSummary(h map[string]datasource.HandleGroup) string {
	var parts []string
	for _, side := range datasource.OrderedSides(h) {
		for _, p := range h[side].Point {
			s := side + ":" + p.ID + ":" + p.Type
			if p.Accept != "" && p.Accept != "any" {
				s += "(" + p.Accept + ")"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// truncate cuts s to max runes, saying how long it was so the model knows text is
// missing (and does not, say, propose code based on half a function).
func truncate(s string, max int) string {
	if len(s) <= max { // fast path: bytes ≥ runes
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + fmt.Sprintf("… [truncated, %d characters in all]", len(r))
}

// preview is a one-line excerpt: whitespace runs collapsed, then truncated.
func preview(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// dataText writes node data as compact JSON ("" for none), truncated.
func dataText(v any, max int) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(unencodable data: %v)", err)
	}
	s := string(b)
	if s == "{}" || s == "null" || s == `""` || s == "[]" {
		return ""
	}
	return truncate(s, max)
}

// endpoint writes one end of an edge as "node:handle".
func endpoint(node, handle string) string {
	if handle == "" {
		return node
	}
	return node + ":" + handle
}

// closeKeys suggests up to n keys near want: same letters in another case, contained
// one in the other, or a small edit distance. Models often misspell or shorten keys.
func closeKeys(want string, keys []string, n int) []string {
	type cand struct {
		key  string
		dist int
	}
	w := strings.ToLower(want)
	var cs []cand
	for _, k := range keys {
		l := strings.ToLower(k)
		d := editDistance(w, l)
		switch {
		case l == w:
			d = 0
		case w != "" && (strings.Contains(l, w) || strings.Contains(w, l)):
			if d > 2 {
				d = 2
			}
		}
		limit := len([]rune(w)) / 3
		if limit < 2 {
			limit = 2
		}
		if d <= limit {
			cs = append(cs, cand{k, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].key < cs[j].key
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].key)
	}
	return out
}

// editDistance is the Levenshtein distance over runes, capped for long inputs.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 {
		ra = ra[:64]
	}
	if len(rb) > 64 {
		rb = rb[:64]
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// notFoundNode is the error for a node key the graph does not have, with suggestions.
func notFoundNode(tool, key string, keys []string) error {
	msg := fmt.Sprintf("node %q does not exist in this graph", key)
	if near := closeKeys(key, keys, 3); len(near) > 0 {
		msg += "; did you mean " + quoteOr(near) + "?"
	} else {
		msg += "; use search_nodes to find node keys"
	}
	return &Error{Tool: tool, Code: CodeNotFound, Msg: msg}
}

func quoteOr(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
