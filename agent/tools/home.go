package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag/toon"
)

// HomeGraphKey is the graph key of home mode, as on the Nodius server: no graph is
// open, and the assistant talks about the user's graphs (lists them, proposes a new
// one) instead of one graph's nodes.
const HomeGraphKey = "home"

// IsHome reports whether graphKey is home mode's. (The agent gives a question
// asked with no graph the key "home"; an empty key here is no graph, not home.)
func IsHome(graphKey string) bool { return graphKey == HomeGraphKey }

// Home mode tool names (the server's home tools: docs/protocol.md).
const (
	ListUserGraphs         = "list_user_graphs"
	ListUserHTMLClasses    = "list_user_html_classes"
	ListNodeConfigs        = "list_node_configs"
	ProposeCreateGraph     = "propose_create_graph"
	ProposeCreateHTMLClass = "propose_create_html_class"
)

var categoryParam = param{name: "category", kind: kString, desc: "Only this category (optional)."}

// homeReadSpecs is the table of home mode's read tools.
func homeReadSpecs() []spec {
	return []spec{
		{name: ListUserGraphs,
			desc:   "List all the user's graphs (workflows): name, key, description.",
			params: []param{categoryParam}},
		{name: ListUserHTMLClasses,
			desc:   "List all the user's HTML classes (pages/components): name, key, linked graph.",
			params: []param{categoryParam}},
		{name: ListNodeConfigs,
			desc:   "List every node type available (built-in and custom): key, name, description, category.",
			params: nil},
	}
}

// homeWriteSpecs is the table of home mode's proposals: each creates a graph.
func homeWriteSpecs() []spec {
	reason := param{name: "reason", kind: kString, required: true, desc: "Why: shown to the user who approves."}
	descr := param{name: "description", kind: kString, maxLen: 2000, desc: "Description (optional)."}
	return []spec{
		{name: ProposeCreateGraph, strict: true,
			desc:   "Propose creating a new workflow graph, with a Starter and a Return node. Needs the user's approval.",
			params: []param{{name: "name", kind: kString, required: true, maxLen: 200, desc: "Name of the graph."}, descr, reason}},
		{name: ProposeCreateHTMLClass, strict: true,
			desc:   "Propose creating a new HTML class (page/component), with a linked graph holding an HTML root node. Needs the user's approval.",
			params: []param{{name: "name", kind: kString, required: true, maxLen: 200, desc: "Name of the HTML class."}, descr, reason}},
	}
}

// HomeToolDefs is every tool offered in home mode to role: the three listings
// always, and for an editor or admin the two creations unless allowed refuses
// create_graph (nil allows it).
func HomeToolDefs(role string, allowed func(datasource.ActionType) bool) []convo.ToolDef {
	var out []convo.ToolDef
	for _, s := range homeReadSpecs() {
		out = append(out, s.def().convo())
	}
	if CanPropose(role) && (allowed == nil || allowed(datasource.CreateGraphAction)) {
		for _, s := range homeWriteSpecs() {
			out = append(out, s.def().convo())
		}
	}
	return out
}

// isHomeWriteTool reports whether name is one of home mode's proposals.
func isHomeWriteTool(name string) bool {
	return name == ProposeCreateGraph || name == ProposeCreateHTMLClass
}

// parseHomeProposal turns a home mode proposal into a create_graph action.
func parseHomeProposal(name, argsJSON string) (datasource.Action, string, error) {
	var sp spec
	for _, s := range homeWriteSpecs() {
		if s.name == name {
			sp = s
		}
	}
	a, err := parseArgs(name, argsJSON, sp.params, true)
	if err != nil {
		return datasource.Action{}, "", err
	}
	n := strings.TrimSpace(a.str("name"))
	if n == "" {
		return datasource.Action{}, "", argErr(name, "name must not be empty")
	}
	kind := "graph"
	if name == ProposeCreateHTMLClass {
		kind = "htmlClass"
	}
	act := datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: n, Type: kind, Description: strings.TrimSpace(a.str("description"))}}
	return act, strings.TrimSpace(a.str("reason")), nil
}

// ListGraphs lists the graphs src holds, sorted: an arango source lists its
// collection, a memgraph store its graphs, a file source its one graph. ok is false
// when src cannot list them (home mode is then not offered).
func ListGraphs(ctx context.Context, src datasource.Source) (keys []string, ok bool, err error) {
	switch s := src.(type) {
	case interface {
		ListGraphKeys(ctx context.Context) ([]string, error)
	}:
		keys, err = s.ListGraphKeys(ctx)
	case interface{ GraphKeys() []string }:
		keys = s.GraphKeys()
	case interface{ GraphKey() string }:
		keys = []string{s.GraphKey()}
	default:
		return nil, false, nil
	}
	keys = append([]string(nil), keys...)
	sort.Strings(keys)
	return keys, true, err
}

// GraphSummaries is a source that lists its graphs with their names and
// descriptions in one read (the server: source, whose single-graph reads load
// the whole graph and register on it).
type GraphSummaries interface {
	ListGraphs(ctx context.Context) ([]datasource.Graph, error)
}

// workspaceConfigs is a source that lists the node types of the user's
// workspaces without reading a graph (the server: source, whose graph reads load
// the graph and register on it).
type workspaceConfigs interface {
	WorkspaceConfigs(ctx context.Context) ([]datasource.NodeConfig, error)
}

// runHome runs one of home mode's read tools.
func (x *Executor) runHome(ctx context.Context, name string) (any, error) {
	if name == ListUserHTMLClasses {
		return toon.Object{{Key: "htmlClasses", Value: []toon.Object{}},
			{Key: "note", Value: "this source holds workflow graphs only, no HTML classes"}}, nil
	}
	if lister, ok := x.src.(GraphSummaries); ok && name == ListUserGraphs {
		// A remote source lists names with keys: reading each graph would load it.
		gs, err := lister.ListGraphs(ctx)
		if err != nil {
			return nil, x.srcErr(name, "listing graphs", err)
		}
		gs = append([]datasource.Graph(nil), gs...)
		sort.Slice(gs, func(i, j int) bool { return gs[i].Key < gs[j].Key })
		rows := make([]toon.Object, 0, len(gs))
		for _, g := range gs {
			rows = append(rows, toon.Object{{Key: "key", Value: g.Key}, {Key: "name", Value: g.Name},
				{Key: "description", Value: preview(g.Description, ConfigDescMax)}})
		}
		return toon.Object{{Key: "graphs", Value: rows}}, nil
	}
	keys, ok, err := ListGraphs(ctx, x.src)
	if err != nil {
		return nil, x.srcErr(name, "listing graphs", err)
	}
	if name == ListUserGraphs {
		if !ok {
			return toon.Object{{Key: "graphs", Value: []toon.Object{}}, {Key: "note", Value: "this source cannot list its graphs"}}, nil
		}
		// Local graphs carry no category: the filter is accepted and lists all.
		rows := make([]toon.Object, 0, len(keys))
		for _, k := range keys {
			g, err := x.src.Graph(ctx, k)
			if err != nil {
				continue // listed but unreadable: left out rather than failing the list
			}
			rows = append(rows, toon.Object{{Key: "key", Value: k}, {Key: "name", Value: g.Name},
				{Key: "description", Value: preview(g.Description, ConfigDescMax)}})
		}
		return toon.Object{{Key: "graphs", Value: rows}}, nil
	}
	// list_node_configs: the built-in types and the custom types of the workspace,
	// read through its first graph (a source's configs are per workspace).
	var cfgs []datasource.NodeConfig
	if wc, ok := x.src.(workspaceConfigs); ok {
		if cfgs, err = wc.WorkspaceConfigs(ctx); err != nil {
			return nil, x.srcErr(name, "listing node types", err)
		}
	} else if len(keys) > 0 {
		if cfgs, err = x.src.Configs(ctx, keys[0]); err != nil {
			return nil, x.srcErr(name, "listing node types", err)
		}
	}
	out := make([]toon.Object, 0, len(cfgs)+4)
	for _, b := range Builtins() {
		out = append(out, toon.Object{{Key: "key", Value: b.Type}, {Key: "name", Value: b.Type},
			{Key: "description", Value: b.Description}, {Key: "category", Value: "built-in"}})
	}
	cfgs = append([]datasource.NodeConfig(nil), cfgs...)
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Key < cfgs[j].Key })
	for _, c := range cfgs {
		out = append(out, toon.Object{{Key: "key", Value: c.Key}, {Key: "name", Value: c.DisplayName},
			{Key: "description", Value: preview(c.Description, ConfigDescMax)}, {Key: "category", Value: c.Category}})
	}
	return toon.Object{{Key: "nodeConfigs", Value: out}}, nil
}

// homeUnknown is the message of a graph tool called in home mode.
func homeUnknown(name string) string {
	return fmt.Sprintf("%q is not available in home mode (no graph is open); the tools are: %s, %s, %s, %s, %s",
		name, ListUserGraphs, ListUserHTMLClasses, ListNodeConfigs, ProposeCreateGraph, ProposeCreateHTMLClass)
}
