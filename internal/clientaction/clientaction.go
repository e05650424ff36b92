// Package clientaction reads the tags the Nodius assistant writes into its answers.
// The server's prompt asks the model to name what it mentions with tags the web
// client turns into links ({{node:KEY}}, {{sheet:KEY}}, {{graph:KEY}}) and actions
// on the canvas ({{select:a,b}}, {{highlight:a,b}}, {{fitArea:x1,y1,x2,y2}},
// {{link:url|text}}). A terminal has no canvas: the tags become readable names, a
// hyperlink, or a note the user can act on — never raw braces. The tag grammar is the
// web client's: {{word:params}} with no '}' inside params.
package clientaction

import (
	"strconv"
	"strings"
)

// Kind is what a tag asks for.
type Kind string

const (
	Node       Kind = "node"       // a node, by key
	Sheet      Kind = "sheet"      // a sheet, by key
	Graph      Kind = "graph"      // another graph, by key
	HTML       Kind = "html"       // an HTML class, by key
	NodeConfig Kind = "nodeConfig" // a node type, by key
	Select     Kind = "select"     // several nodes to select
	Highlight  Kind = "highlight"  // several nodes to select and zoom to
	FitArea    Kind = "fitArea"    // an area of the canvas to zoom to
	Link       Kind = "link"       // an external link
)

// Area is a rectangle of the canvas.
type Area struct {
	MinX float64 `json:"minX"`
	MinY float64 `json:"minY"`
	MaxX float64 `json:"maxX"`
	MaxY float64 `json:"maxY"`
}

// Action is one tag, read. Keys holds the key of node, sheet, graph, html and
// nodeConfig tags and the keys of select and highlight; URL and Label a link's.
type Action struct {
	Kind  Kind     `json:"kind"`
	Keys  []string `json:"keys,omitempty"`
	Area  *Area    `json:"area,omitempty"`
	URL   string   `json:"url,omitempty"`
	Label string   `json:"label,omitempty"`
	// Raw is the tag as the model wrote it.
	Raw string `json:"raw"`
}

// Segment is a run of plain text or one tag: exactly one of Text and Action is set
// (Text may be empty only when Action is not nil).
type Segment struct {
	Text   string
	Action *Action
}

// Parse splits s into text and tags. A tag whose kind is unknown or whose
// parameters do not read (an empty key, a fitArea without four numbers) stays text
// without its braces, so nothing the model wrote is lost and no brace is shown.
// Code is left as written, as the web client leaves it: a tag inside an inline code
// span (`…`, closed within maxHeld bytes) or a fenced block (```…```, to its
// closing fence or the end) is text the model is quoting. A Splitter fed s in any
// pieces returns the same.
func Parse(s string) []Segment {
	segs, _, _ := scan(s, "", true)
	return segs
}

// isWord is JavaScript's \w: ASCII letters, digits and underscore.
func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// read interprets one tag ("{{kind:params}}").
func read(raw string) (Action, bool) {
	body := raw[2 : len(raw)-2]
	kind, params, _ := strings.Cut(body, ":")
	a := Action{Kind: Kind(kind), Raw: raw}
	switch a.Kind {
	case Node, Sheet, Graph, HTML, NodeConfig:
		k := strings.TrimSpace(params)
		if k == "" {
			return a, false
		}
		a.Keys = []string{k}
	case Select, Highlight:
		for _, k := range strings.Split(params, ",") {
			if k = strings.TrimSpace(k); k != "" {
				a.Keys = append(a.Keys, k)
			}
		}
		if len(a.Keys) == 0 {
			return a, false
		}
	case FitArea:
		parts := strings.Split(params, ",")
		if len(parts) != 4 {
			return a, false
		}
		var n [4]float64
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return a, false
			}
			n[i] = f
		}
		a.Area = &Area{MinX: n[0], MinY: n[1], MaxX: n[2], MaxY: n[3]}
	case Link:
		u, label, has := strings.Cut(params, "|")
		a.URL = strings.TrimSpace(u)
		a.Label = strings.TrimSpace(label)
		if !has || a.Label == "" {
			a.Label = a.URL
		}
		if a.URL == "" {
			return a, false
		}
	default:
		return a, false
	}
	return a, true
}

// unbraced is a tag that does not read, as text: its parameters, or its body when
// it has none.
func unbraced(raw string) string {
	kind, params, _ := strings.Cut(raw[2:len(raw)-2], ":")
	if strings.TrimSpace(params) != "" {
		return params
	}
	return kind
}

// Actions returns the tags of s, in order.
func Actions(s string) []Action {
	var out []Action
	for _, seg := range Parse(s) {
		if seg.Action != nil {
			out = append(out, *seg.Action)
		}
	}
	return out
}
