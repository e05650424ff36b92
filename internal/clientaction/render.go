package clientaction

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nodius/nodius-ai/internal/termtext"
)

// Names resolves keys to what a person reads: a node's type name, a sheet's or a
// graph's name. A nil function, or "" from one, shows the key alone. They are
// functions so that only the keys an answer names are looked up.
type Names struct {
	NodeType func(nodeKey string) string // the node's type, by display name
	Sheet    func(sheetKey string) string
	Graph    func(graphKey string) string
}

func lookup(f func(string) string, key string) string {
	if f == nil {
		return ""
	}
	return f(key)
}

// Options of Render.
type Options struct {
	Names Names
	// Hyperlinks writes links as OSC 8 hyperlinks (a terminal that knows them shows
	// the label and opens the URL on click); otherwise as "label (url)".
	Hyperlinks bool
	// Style decorates the text that stands for a tag (nil: none). It gets the
	// already safe text.
	Style func(k Kind, text string) string
}

// Render writes segments as terminal text: every tag becomes its readable form,
// the tagged key itself kept in the text. Text segments are returned as they are
// (sanitising them is the caller's, as for any model output); what a tag
// contributes is stripped of control sequences here.
func Render(segs []Segment, o Options) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Action == nil {
			b.WriteString(s.Text)
			continue
		}
		t := Text(*s.Action, o.Names)
		if s.Action.Kind == Link && o.Hyperlinks && linkable(s.Action.URL) {
			label := termtext.Strip(s.Action.Label)
			if o.Style != nil {
				label = o.Style(Link, label)
			}
			b.WriteString("\x1b]8;;" + termtext.Strip(s.Action.URL) + "\x1b\\" + label + "\x1b]8;;\x1b\\")
			continue
		}
		if o.Style != nil {
			t = o.Style(s.Action.Kind, t)
		}
		b.WriteString(t)
	}
	return b.String()
}

// RenderString parses and renders s.
func RenderString(s string, o Options) string { return Render(Parse(s), o) }

// Text is the plain, safe text that stands for a tag.
func Text(a Action, n Names) string {
	key := ""
	if len(a.Keys) > 0 {
		key = termtext.Strip(a.Keys[0])
	}
	switch a.Kind {
	case Node:
		if t := lookup(n.NodeType, a.Keys[0]); t != "" {
			return key + " (" + termtext.Strip(t) + ")"
		}
		return key
	case Sheet:
		if name := lookup(n.Sheet, a.Keys[0]); name != "" && name != a.Keys[0] {
			return termtext.Strip(name) + " (sheet " + key + ")"
		}
		return "sheet " + key
	case Graph:
		if name := lookup(n.Graph, a.Keys[0]); name != "" && name != a.Keys[0] {
			return key + " (" + termtext.Strip(name) + ")"
		}
		return key
	case HTML, NodeConfig:
		return key
	case Select, Highlight:
		keys := make([]string, len(a.Keys))
		for i, k := range a.Keys {
			keys[i] = termtext.Strip(k)
		}
		return strings.Join(keys, ", ")
	case FitArea:
		if a.Area == nil {
			return "an area of the canvas"
		}
		return fmt.Sprintf("the area (%s, %s)–(%s, %s)", num(a.Area.MinX), num(a.Area.MinY), num(a.Area.MaxX), num(a.Area.MaxY))
	case Link:
		label, url := termtext.Strip(a.Label), termtext.Strip(a.URL)
		if label == "" || label == url {
			return url
		}
		return label + " (" + url + ")"
	}
	return termtext.Strip(unbraced(a.Raw))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// linkable reports whether a URL may become a terminal hyperlink: web and mail
// addresses only, never file: or a scheme a terminal might run.
func linkable(u string) bool {
	l := strings.ToLower(u)
	return (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "mailto:")) &&
		termtext.Strip(u) == u && !strings.ContainsAny(u, " \t\n")
}

// Notes turns the select and highlight actions of an answer into lines a terminal
// user can act on: the command that draws those nodes (other tags need no note:
// their text already says what they name). graphFlag is the --graph (and
// --source) part of the command, e.g. "--graph demo".
func Notes(actions []Action, graphFlag string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range actions {
		if a.Kind != Select && a.Kind != Highlight {
			continue
		}
		cmd := "nodius-ai inspect graph"
		if graphFlag != "" {
			cmd += " " + graphFlag
		}
		safe := make([]string, len(a.Keys))
		for i, k := range a.Keys {
			safe[i] = termtext.Strip(k)
		}
		cmd += " --around " + shellWord(safe[0])
		if seen[cmd] {
			continue
		}
		seen[cmd] = true
		verb := "selected"
		if a.Kind == Highlight {
			verb = "highlighted"
		}
		out = append(out, fmt.Sprintf("The assistant %s %s — to see them: %s", verb, strings.Join(safe, ", "), cmd))
	}
	return out
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
