package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Node types as things a local source writes. A configure_node_type proposal
// (create, or update of any field) becomes one node type config put in place, on
// a working copy that can hold configs (ConfigChanges: the in-memory store, the
// graph file, ArangoDB's nodius_node_config). Every node of the type runs the
// type's code, so a new process reaches all of them. Undo puts the config back as
// it was, or removes a type the change created.

// ConfigChanges is implemented by working copies (Changes) of sources that keep
// node type configs. PutConfig creates or replaces the config with c's key; where
// its code changed, every node of the type gets it (Node.Process). DeleteConfig
// removes a config no node uses any more.
type ConfigChanges interface {
	LookupNode(key string) (Node, bool)
	LookupConfig(key string) (NodeConfig, bool)
	PutConfig(c NodeConfig) (NodeConfig, error)
	DeleteConfig(key string) error
}

// ConfigWriter is ConfigChanges for a whole source, one atomic change per call.
type ConfigWriter interface {
	PutConfig(ctx context.Context, graphKey string, c NodeConfig) (NodeConfig, error)
	DeleteConfig(ctx context.Context, graphKey, key string) error
}

// builtinSize is the size a Nodius built-in node type gives a new node
// (node.size of NodeTypeStarterConfig, NodeTypeReturnConfig, NodeTypeHtmlConfig,
// NodeTypeEntryTypeConfig in the graph model: docs/protocol.md).
func builtinSize(typeKey string) (Size, bool) {
	switch typeKey {
	case "starter", "return":
		return Size{Width: 150, Height: 150, Dynamic: true}, true
	case "html":
		return Size{Width: 640, Height: 360, Dynamic: true}, true
	case "entryType":
		return Size{Width: 300, Height: 500, Dynamic: true}, true
	}
	return Size{}, false
}

// fallbackSize is the size of a new node whose type says none (the server's
// fallback in actionConverter.ts).
func fallbackSize() Size { return Size{Width: 200, Height: 100} }

// newTypeSize is the size a type created without one gives its nodes (the
// server's default in convertConfigureNodeType).
func newTypeSize() Size { return Size{Width: 200, Height: 100, Dynamic: true} }

// NodeSize is the config's node.size (a flat config of the earlier format keeps
// it beside its other members; it is read into NodeExtra all the same), and
// whether it has a usable one.
func (c NodeConfig) NodeSize() (Size, bool) {
	raw, ok := c.NodeExtra["size"]
	if !ok {
		return Size{}, false
	}
	var s Size
	if json.Unmarshal(raw, &s) != nil || !(s.Width > 0) || !(s.Height > 0) || math.IsInf(s.Width, 0) || math.IsInf(s.Height, 0) {
		return Size{}, false
	}
	return s, true
}

// DefaultSize is the size a new node of typeKey gets: its config's node.size,
// else a built-in type's, else the server's fallback, 200x100.
func DefaultSize(typeKey string, configs []NodeConfig) Size {
	for _, c := range configs {
		if c.Key == typeKey {
			if s, ok := c.NodeSize(); ok {
				return s
			}
		}
	}
	if s, ok := builtinSize(typeKey); ok {
		return s
	}
	return fallbackSize()
}

// member decodes the JSON member k of m (nil when absent).
func member(m map[string]json.RawMessage, k string) any {
	raw, ok := m[k]
	if !ok {
		return nil
	}
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// TypeFields are the fields of a node type a configure_node_type changes, as plain
// JSON values: what a proposal shows before and after, and what a change checks
// is still as it was shown. Absent members are nil.
func TypeFields(c NodeConfig) map[string]any {
	f := map[string]any{
		"displayName": c.DisplayName, "description": c.Description, "category": c.Category, "icon": c.Icon,
		"process": c.Process, "border": member(c.Extra, "border"), "content": member(c.Extra, "content"),
		"size": member(c.NodeExtra, "size"), "handles": nil,
	}
	if len(c.Handles) > 0 {
		f["handles"] = plainJSON(c.Handles)
	}
	return f
}

func plainJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if d.Decode(&out) != nil {
		return nil
	}
	return out
}

// setRaw sets member k of m to v as JSON, without escaping HTML characters (a
// type's CSS selectors and HTML are full of them), as graph files write text.
func setRaw(m *map[string]json.RawMessage, k string, v any) error {
	b, err := encodeNoEscape(v)
	if err != nil {
		return fmt.Errorf("%s: %w", k, err)
	}
	setExtra(m, k, b)
	return nil
}

// defaultContent is the HtmlObject a type created without content shows (the
// server's default in convertConfigureNodeType).
func defaultContent() map[string]any {
	return map[string]any{"type": "list", "identifier": "root", "tag": "div", "name": "Container",
		"css":       []any{map[string]any{"selector": "&", "rules": []any{[]any{"height", "100%"}, []any{"width", "100%"}}}},
		"domEvents": []any{}, "content": []any{}}
}

// borderOf turns the proposal's flat border ({radius, width, type, normalColor,
// hoverColor}) into the config's ({radius, width, type, normal: {color}, hover:
// {color}}), over base (the type's border now; the server's defaults for a new
// type).
func borderOf(p map[string]any, base map[string]any) map[string]any {
	b := map[string]any{"radius": 10, "width": 1, "type": "solid",
		"normal": map[string]any{"color": "var(--nodius-primary-dark)"},
		"hover":  map[string]any{"color": "var(--nodius-primary-light)"}}
	if base != nil {
		b = maps.Clone(base)
	}
	for _, k := range []string{"radius", "width", "type"} {
		if v, ok := p[k]; ok {
			b[k] = v
		}
	}
	for k, side := range map[string]string{"normalColor": "normal", "hoverColor": "hover"} {
		if v, ok := p[k]; ok {
			s, _ := b[side].(map[string]any)
			s = maps.Clone(s)
			if s == nil {
				s = map[string]any{}
			}
			s["color"] = v
			b[side] = s
		}
	}
	return b
}

// ConfigFromPayload is the node type config a configure_node_type proposal makes:
// for mode "create" (cur nil) a new config with the server's defaults for what the
// proposal leaves out (convertConfigureNodeType: category "custom", L in / R out
// handles, 200x100 dynamic size, a container as content, the default border); for
// "update", cur with the fields the proposal gives replaced and the others kept.
// (The server's own converter replaces an updated type whole, the fields left out
// taking those defaults; here an update changes only what it names, which is what
// the tool's description promises.) now stamps lastUpdatedTime (and createdTime).
func ConfigFromPayload(cur *NodeConfig, p ConfigureNodeTypePayload, workspace string, now time.Time) (NodeConfig, error) {
	var c NodeConfig
	ms := now.UnixMilli()
	if cur == nil {
		c = NodeConfig{Key: p.TypeKey, Workspace: workspace, Category: "custom"}
		for k, v := range map[string]any{"type": p.TypeKey, "posX": 0, "posY": 0} { // node as the server's
			if err := setRaw(&c.NodeExtra, k, v); err != nil {
				return c, err
			}
		}
		for k, v := range map[string]any{"version": 1, "alwaysRendered": false, "createdTime": ms, "border": borderOf(nil, nil), "content": defaultContent()} {
			if err := setRaw(&c.Extra, k, v); err != nil {
				return c, err
			}
		}
		c.Handles = DefaultHandles("", nil) // a custom type's: L:0:in, R:0:out
		if err := setRaw(&c.NodeExtra, "size", newTypeSize()); err != nil {
			return c, err
		}
	} else {
		c = *cur
		c.Extra, c.NodeExtra = maps.Clone(cur.Extra), maps.Clone(cur.NodeExtra)
		c.Handles = CloneHandles(cur.Handles)
	}
	if p.DisplayName != "" {
		c.DisplayName = p.DisplayName
	}
	if p.Description != "" {
		c.Description = p.Description
	}
	if p.Category != "" {
		c.Category = p.Category
	}
	if p.Icon != "" {
		c.Icon = p.Icon
	}
	if p.Process != "" || (cur == nil && len(p.ProcessPatches) == 0) {
		c.Process = p.Process
	}
	if p.Border != nil {
		var base map[string]any
		if cur != nil {
			base, _ = member(c.Extra, "border").(map[string]any)
		}
		if err := setRaw(&c.Extra, "border", borderOf(p.Border, base)); err != nil {
			return c, err
		}
	}
	if p.Content != nil {
		if err := setRaw(&c.Extra, "content", p.Content); err != nil {
			return c, err
		}
	}
	if p.Size != nil {
		if err := setRaw(&c.NodeExtra, "size", p.Size); err != nil {
			return c, err
		}
	}
	if p.Handles != nil {
		h, err := handlesOf(p.Handles)
		if err != nil {
			return c, err
		}
		c.Handles = h
	}
	if err := setRaw(&c.Extra, "lastUpdatedTime", ms); err != nil {
		return c, err
	}
	return c, nil
}

func handlesOf(v map[string]map[string]any) (map[string]HandleGroup, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var h map[string]HandleGroup
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("handles: %w", err)
	}
	return CheckHandles(h)
}

// ErrTypeChanged is wrapped by the error of a node type change whose type is no
// longer what the proposal showed.
var ErrTypeChanged = errors.New("the node type changed since the proposal was shown")

// typeDiffs names the fields of c that are not as before says.
func typeDiffs(c NodeConfig, before map[string]any) []string {
	now := TypeFields(c)
	var out []string
	for _, k := range sortedKeys(before) {
		if !SameJSON(now[k], before[k]) {
			out = append(out, k)
		}
	}
	return out
}

// applyConfigure carries out a configure_node_type on c. On a working copy that
// keeps configs, the config is put in place (create, or every field an update
// names); where the type's code lives on its nodes (a file of the earlier format:
// the config has none, the nodes do), a new process is written to each node of the
// type instead, as before. Elsewhere only a code change of a type with nodes can be
// made, node by node (Lower).
func applyConfigure(c Changes, a Action, res *ApplyResult, depth int) error {
	p := a.ConfigureNodeType
	cc, ok := c.(ConfigChanges)
	if !ok {
		l, ok := Lower(a, func() string { return "" })
		if !ok {
			return notLocal(a)
		}
		return applyChanges(c, l, res, depth+1)
	}
	if p.TypeKey == "" {
		return errors.New("configure_node_type: the type has no key")
	}
	cur, exists := cc.LookupConfig(p.TypeKey)
	switch p.Mode {
	case "create":
		if exists || IsBuiltinType(p.TypeKey) {
			return fmt.Errorf("a node type %q already exists", p.TypeKey)
		}
		next, err := ConfigFromPayload(nil, *p, "", time.Now())
		if err != nil {
			return err
		}
		_, err = cc.PutConfig(next)
		return err
	case "update":
	default:
		return fmt.Errorf("configure_node_type: unknown mode %q (create or update)", p.Mode)
	}
	if !exists {
		return &NotFoundError{Kind: "node type", Key: p.TypeKey}
	}
	if p.Before != nil {
		if diffs := typeDiffs(cur, p.Before); len(diffs) > 0 {
			return fmt.Errorf("%w: %s of %s", ErrTypeChanged, strings.Join(diffs, ", "), p.TypeKey)
		}
	}
	next, err := ConfigFromPayload(&cur, *p, cur.Workspace, time.Now())
	if err != nil {
		return err
	}
	codeOnNodes := false
	if p.Process != "" && cur.Process == "" {
		for _, k := range p.Nodes {
			if node, found := cc.LookupNode(k); found && node.Process != "" {
				codeOnNodes = true
			}
		}
	}
	if codeOnNodes {
		next.Process = cur.Process
	}
	if !sameConfig(cur, next) {
		if _, err := cc.PutConfig(next); err != nil {
			return err
		}
	}
	if codeOnNodes {
		for _, k := range p.Nodes {
			if _, err := c.UpdateNode(k, map[string]any{"process": p.Process}); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameConfig reports whether two configs differ only in lastUpdatedTime.
func sameConfig(a, b NodeConfig) bool {
	a.Extra, b.Extra = maps.Clone(a.Extra), maps.Clone(b.Extra)
	delete(a.Extra, "lastUpdatedTime")
	delete(b.Extra, "lastUpdatedTime")
	return SameJSON(a, b)
}

// typeLanded reports whether snap holds the type as p makes it (Landed): a created
// type exists; an updated one has every field p sets, so that applying p again
// would change none of them (a change of the look alone is not taken as made).
// Where the type's code lives on its nodes (applyConfigure), the new code is looked
// for on them.
func typeLanded(snap Snapshot, p *ConfigureNodeTypePayload) bool {
	for _, c := range snap.Configs {
		if c.Key != p.TypeKey {
			continue
		}
		if p.Mode == "create" {
			return true
		}
		next, err := ConfigFromPayload(&c, *p, c.Workspace, time.Time{})
		if err != nil {
			return false
		}
		want := TypeFields(next)
		if p.Process != "" && c.Process == "" && nodesKeepCode(snap.Nodes, p.Nodes) {
			want["process"] = ""
			for _, n := range snap.Nodes {
				if slices.Contains(p.Nodes, n.Key) && n.Process != p.Process {
					return false
				}
			}
		}
		return len(typeDiffs(c, want)) == 0
	}
	return false
}

// nodesKeepCode reports whether any of the nodes named keeps code of its own.
func nodesKeepCode(nodes []Node, keys []string) bool {
	for _, n := range nodes {
		if n.Process != "" && slices.Contains(keys, n.Key) {
			return true
		}
	}
	return false
}

// NodesOfType lists, sorted, the keys of the nodes of type t.
func NodesOfType(nodes []Node, t string) []string {
	var out []string
	for _, n := range nodes {
		if n.Type == t {
			out = append(out, n.Key)
		}
	}
	sort.Strings(out)
	return out
}

// sizedByType gives a new node without a size the one its type gives
// (DefaultSize), read on c when c keeps configs.
func sizedByType(c Changes, n Node) Node {
	if n.Size.Width > 0 && n.Size.Height > 0 {
		return n
	}
	var cfgs []NodeConfig
	if l, ok := c.(interface {
		LookupConfig(key string) (NodeConfig, bool)
	}); ok {
		if cfg, ok := l.LookupConfig(n.Type); ok {
			cfgs = []NodeConfig{cfg}
		}
	}
	n.Size = DefaultSize(n.Type, cfgs)
	return n
}

// flatNodeMembers are the node members (NodeExtra) of a config written in the
// earlier, flat format, where they sit beside the others: a size a type change
// gave it. A member the config also has at the top is left to that one.
func flatNodeMembers(c *NodeConfig) map[string]json.RawMessage {
	if len(c.NodeExtra) == 0 {
		return nil
	}
	flat := map[string]json.RawMessage{}
	for k, v := range c.NodeExtra {
		if _, dup := c.Extra[k]; !dup {
			flat[k] = v
		}
	}
	return flat
}

// FieldChange is one field of a node type a proposal changes: its value before
// (nil for a new type or a field it lacked) and after.
type FieldChange struct {
	Field         string
	Before, After any
}

// TypeChanges lists the fields a configure_node_type changes, code aside (its
// line diff is CodeDiffs), in a fixed order: what the person approving reads.
func TypeChanges(p ConfigureNodeTypePayload) []FieldChange {
	before := p.Before
	if before == nil {
		before = map[string]any{}
	}
	var out []FieldChange
	add := func(f string, after any) {
		if after == nil || SameJSON(before[f], after) {
			return
		}
		out = append(out, FieldChange{Field: f, Before: before[f], After: after})
	}
	for _, f := range []struct {
		name, v string
	}{{"displayName", p.DisplayName}, {"description", p.Description}, {"category", p.Category}, {"icon", p.Icon}} {
		if f.v != "" {
			add(f.name, f.v)
		}
	}
	if p.Border != nil {
		base, _ := before["border"].(map[string]any)
		add("border", plainJSON(borderOf(p.Border, base)))
	}
	if p.Handles != nil {
		add("handles", plainJSON(p.Handles))
	}
	if p.Size != nil {
		add("size", plainJSON(p.Size))
	}
	if p.Content != nil {
		add("content", plainJSON(p.Content))
	}
	return out
}
