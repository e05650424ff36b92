// Package htmlobject turns raw HTML into a Nodius HtmlObject, the tree an html
// node's data holds, as the Nodius server does when its assistant proposes
// updates.html (its HTML converter, docs/protocol.md, then
// normalizeHtmlObject in aiAgent.ts): <style> class rules and inline styles become
// css blocks, on* and data-event-* attributes dom events, img/a/lucide icons their
// own kinds, text-only elements text, and an element with one child a block, with
// several a list. The server gives each element a random 4-character identifier;
// here they are derived from the HTML, so the same HTML gives the same object (a
// proposal checked again before it is applied must be the one shown).
package htmlobject

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultLanguage is the language key of text content, as the server's default.
const DefaultLanguage = "en"

// textOnlyTags are the tags whose content is text when all their children are.
var textOnlyTags = map[string]bool{
	"span": true, "p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"label": true, "strong": true, "em": true, "b": true, "i": true, "u": true, "small": true, "mark": true,
}

var classRule = regexp.MustCompile(`\.([a-zA-Z0-9_-]+)\s*\{([^}]+)\}`)

// Convert turns html into an HtmlObject (plain JSON values: maps, slices,
// strings). It fails only on HTML the parser cannot read.
func Convert(src string) (map[string]any, error) {
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(src), body)
	if err != nil {
		return nil, fmt.Errorf("reading the HTML: %w", err)
	}
	c := &converter{ids: map[string]bool{}, classes: map[string][]any{}}
	h := fnv.New64a()
	_, _ = h.Write([]byte(src))
	c.seed = h.Sum64()
	var kept []*html.Node
	for _, n := range nodes {
		if c.styles(n) {
			kept = append(kept, n)
		}
	}
	var children []any
	for _, n := range kept {
		if o := c.convert(n); o != nil {
			children = append(children, o)
		}
	}
	var out map[string]any
	if len(children) == 1 {
		out = children[0].(map[string]any)
	} else {
		if children == nil {
			children = []any{}
		}
		out = map[string]any{"identifier": c.id(), "tag": "div", "name": "RootContainer", "type": "list",
			"css": []any{}, "domEvents": []any{}, "content": children}
	}
	normalize(out)
	return out, nil
}

type converter struct {
	seed    uint64
	n       uint64
	ids     map[string]bool
	classes map[string][]any // class name → its rules from <style>
}

// id is the next identifier: 4 base-36 characters, unique in the object.
func (c *converter) id() string {
	for {
		c.n++
		v := (c.seed ^ (c.n * 0x9e3779b97f4a7c15)) % (36 * 36 * 36 * 36)
		s := strconv.FormatUint(v, 36)
		s = strings.Repeat("0", 4-len(s)) + s
		if !c.ids[s] {
			c.ids[s] = true
			return s
		}
	}
}

// styles reads the class rules of every <style> under n (n included) and removes
// those elements; it reports whether n itself stays.
func (c *converter) styles(n *html.Node) bool {
	if n.Type == html.ElementNode && n.DataAtom == atom.Style {
		for _, m := range classRule.FindAllStringSubmatch(textContent(n), -1) {
			rules, ok := c.classes[m[1]]
			if !ok {
				// A rule with no declarations still gives its class a css block,
				// whose rules are [] as the server's, never null.
				rules = []any{}
			}
			c.classes[m[1]] = append(rules, inlineStyle(m[2])...)
		}
		return false
	}
	for ch := n.FirstChild; ch != nil; {
		next := ch.NextSibling
		if !c.styles(ch) {
			n.RemoveChild(ch)
		}
		ch = next
	}
	return true
}

// inlineStyle splits "a: b; c: d" into [["a","b"],["c","d"]], dropping empty rules.
func inlineStyle(s string) []any {
	var out []any
	for _, rule := range strings.Split(s, ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		prop, val, _ := strings.Cut(rule, ":")
		prop, val = strings.TrimSpace(prop), strings.TrimSpace(val)
		if prop != "" && val != "" {
			out = append(out, []any{prop, val})
		}
	}
	return out
}

func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		b.WriteString(textContent(ch))
	}
	return b.String()
}

func innerHTML(n *html.Node) string {
	var b strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		_ = html.Render(&b, ch)
	}
	return b.String()
}

func classList(n *html.Node) []string {
	for _, a := range n.Attr {
		if a.Key == "class" {
			return strings.Fields(a.Val)
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func lang(s string) map[string]any { return map[string]any{DefaultLanguage: s} }

// convert turns one parsed node into an HtmlObject, or nil (blank text, comments).
func (c *converter) convert(n *html.Node) map[string]any {
	switch n.Type {
	case html.TextNode:
		t := strings.TrimSpace(n.Data)
		if t == "" {
			return nil
		}
		return map[string]any{"identifier": c.id(), "tag": "span", "name": "Text", "type": "text",
			"css": []any{}, "domEvents": []any{}, "content": lang(t)}
	case html.ElementNode:
	default:
		return nil
	}
	tag := strings.ToLower(n.Data)
	css, events := []any{}, []any{}
	attrs := map[string]any{}
	for _, a := range n.Attr {
		switch {
		case a.Key == "id" || a.Key == "class":
		case a.Key == "style":
			if rules := inlineStyle(a.Val); len(rules) > 0 {
				css = append(css, map[string]any{"selector": "&", "rules": rules})
			}
		case strings.HasPrefix(a.Key, "on"):
			events = append(events, map[string]any{"name": a.Key[2:], "call": a.Val})
		case strings.HasPrefix(a.Key, "data-event-"):
			events = append(events, map[string]any{"name": a.Key[len("data-event-"):], "call": a.Val})
		default:
			attrs[a.Key] = a.Val
		}
	}
	classes := classList(n)
	for _, cl := range classes {
		if rules, ok := c.classes[cl]; ok {
			css = append(css, map[string]any{"selector": "&", "rules": rules})
		}
	}
	name := attr(n, "id")
	if name == "" && len(classes) > 0 {
		name = classes[0]
	}
	if name == "" && tag != "" {
		name = strings.ToUpper(tag[:1]) + tag[1:]
	}
	o := map[string]any{"identifier": c.id(), "tag": tag, "name": name, "css": css, "domEvents": events}
	if id := attr(n, "id"); id != "" {
		o["id"] = id
	}
	if len(attrs) > 0 {
		o["attribute"] = attrs
	}
	switch {
	case tag == "img":
		o["type"], o["content"] = "image", []any{attr(n, "alt"), attr(n, "src")}
		return o
	case tag == "a":
		url := attr(n, "href")
		if url == "" {
			url = "#"
		}
		o["type"], o["content"] = "link", map[string]any{"url": url, "text": lang(textContent(n))}
		return o
	case tag == "i" && hasLucide(classes):
		icon := "circle"
		for _, cl := range classes {
			if cl != "lucide" {
				icon = cl
				break
			}
		}
		o["type"], o["content"] = "icon", icon
		return o
	}
	var children []any
	allText := true
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if co := c.convert(ch); co != nil {
			children = append(children, co)
			allText = allText && co["type"] == "text"
		}
	}
	switch {
	case textOnlyTags[tag] && allText:
		o["type"], o["content"] = "text", lang(innerHTML(n))
	case len(children) == 0:
		o["type"] = "block"
	case len(children) == 1:
		o["type"], o["content"] = "block", children[0]
	default:
		o["type"], o["content"] = "list", children
	}
	return o
}

func hasLucide(classes []string) bool {
	for _, c := range classes {
		if strings.Contains(strings.ToLower(c), "lucide") {
			return true
		}
	}
	return false
}

// normalize fixes what the server's normalizeHtmlObject fixes: css and domEvents
// always arrays, a block holding several children a list, a list holding one a
// block.
func normalize(o map[string]any) {
	if _, ok := o["css"].([]any); !ok {
		o["css"] = []any{}
	}
	if _, ok := o["domEvents"].([]any); !ok {
		o["domEvents"] = []any{}
	}
	content, isList := o["content"].([]any)
	switch {
	case o["type"] == "block" && isList:
		o["type"] = "list"
	case o["type"] == "list" && o["content"] != nil && !isList:
		o["type"] = "block"
	}
	if isList {
		for _, ch := range content {
			if m, ok := ch.(map[string]any); ok {
				normalize(m)
			}
		}
	} else if m, ok := o["content"].(map[string]any); ok {
		if _, typed := m["type"]; typed {
			normalize(m)
		}
	}
}
