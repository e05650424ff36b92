package rag

import (
	"bytes"
	"encoding/json"
	"maps"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/datasource"
)

// assemble condenses the kept nodes (seeds first), the edges between them and the
// configs of their custom types. Nodes in full are the mentioned ones: their code
// and data are not truncated.
func (r *Retriever) assemble(st *graphState, query string, hits []Hit, kept []int, full map[int]bool) *Context {
	g := st.snap.Graph
	c := &Context{
		Graph: GraphInfo{
			Key:         g.Key,
			Name:        g.Name,
			Description: g.Description,
			Workspace:   g.Workspace,
			Sheets:      maps.Clone(g.Sheets),
			Metadata:    maps.Clone(g.Metadata),
		},
		Query:   query,
		Hits:    hits,
		Nodes:   make([]ContextNode, 0, len(kept)),
		Edges:   []ContextEdge{},
		Configs: []ConfigSummary{},
	}
	if c.Graph.Sheets == nil {
		c.Graph.Sheets = map[string]string{}
	}

	in := make(map[int]bool, len(kept))
	for _, i := range kept {
		in[i] = true
	}
	var edgeIdx []int
	seenEdge := make(map[int32]bool)
	seenCfg := make(map[string]bool)
	for _, i := range kept {
		n := st.node(i)
		c.Nodes = append(c.Nodes, r.contextNode(st, n, full[i]))
		for _, nb := range st.adj[i] {
			if in[int(nb.node)] && !seenEdge[nb.edge] {
				seenEdge[nb.edge] = true
				edgeIdx = append(edgeIdx, int(nb.edge))
			}
		}
		if datasource.IsBuiltinType(n.Type) || seenCfg[n.Type] {
			continue
		}
		if ci, ok := st.configs[n.Type]; ok {
			seenCfg[n.Type] = true
			c.Configs = append(c.Configs, configSummary(st.snap.Configs[ci]))
		}
	}
	sort.Ints(edgeIdx) // the graph's own edge order
	for _, ei := range edgeIdx {
		e := st.edge(ei)
		c.Edges = append(c.Edges, ContextEdge{
			Key: e.Key, Source: e.Source, SourceHandle: e.SourceHandle,
			Target: e.Target, TargetHandle: e.TargetHandle, Label: e.Label,
		})
	}
	return c
}

func (r *Retriever) contextNode(st *graphState, n datasource.Node, full bool) ContextNode {
	typeName := n.Type
	typeCode, unknown := false, false
	ci, hasConfig := st.configs[n.Type]
	if hasConfig {
		typeCode = n.Process != "" && n.Process == st.snap.Configs[ci].Process
	}
	if !datasource.IsBuiltinType(n.Type) {
		if hasConfig && st.snap.Configs[ci].DisplayName != "" {
			typeName = st.snap.Configs[ci].DisplayName
		}
		unknown = !hasConfig && n.Type != "" && n.Process == ""
	}
	process, data := n.Process, compactJSON(n.Data)
	if !full {
		process = truncate(process, r.opts.TruncateProcess)
		data = truncate(data, r.opts.TruncateData)
	}
	return ContextNode{
		Key:         n.Key,
		Type:        n.Type,
		TypeName:    typeName,
		Sheet:       n.Sheet,
		SheetName:   st.snap.Graph.SheetName(n.Sheet),
		Process:     process,
		Handles:     summarizeHandles(n.Handles),
		DataSummary: data,
		TypeCode:    typeCode,
		CodeUnknown: unknown,
	}
}

// truncate keeps the first max characters (runes, never a split UTF-8 sequence)
// and marks the cut with "...".
func truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// compactJSON serializes node data the way the prompt shows it: compact, HTML
// characters left alone (the model reads them, no browser does). No data is "".
func compactJSON(v any) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// sideOrder puts the usual sides first (left in, right out, then top, bottom).
func sideOrder(handles map[string]datasource.HandleGroup) []string {
	rank := map[string]int{"L": 0, "R": 1, "T": 2, "B": 3}
	sides := make([]string, 0, len(handles))
	for s := range handles {
		sides = append(sides, s)
	}
	sort.Slice(sides, func(i, j int) bool {
		ri, iok := rank[sides[i]]
		rj, jok := rank[sides[j]]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return sides[i] < sides[j]
	})
	return sides
}

func pointString(p datasource.HandlePoint) string {
	accept := p.Accept
	if accept == "" {
		accept = "any"
	}
	return p.Type + "(" + accept + ")"
}

// summarizeHandles turns handles into one entry per side with "id:type(accept)"
// points, e.g. L → ["0:in(any)"].
func summarizeHandles(handles map[string]datasource.HandleGroup) []HandleSummary {
	out := make([]HandleSummary, 0, len(handles))
	for _, side := range sideOrder(handles) {
		g := handles[side]
		pts := make([]string, 0, len(g.Point))
		for _, p := range g.Point {
			pts = append(pts, p.ID+":"+pointString(p))
		}
		out = append(out, HandleSummary{Side: side, Points: pts})
	}
	return out
}

// configSummary condenses a type config; its handles read "L:in(any), R:out(any)".
func configSummary(c datasource.NodeConfig) ConfigSummary {
	var parts []string
	for _, side := range sideOrder(c.Handles) {
		for _, p := range c.Handles[side].Point {
			parts = append(parts, side+":"+pointString(p))
		}
	}
	return ConfigSummary{
		Key:         c.Key,
		DisplayName: c.DisplayName,
		Description: c.Description,
		Category:    c.Category,
		Icon:        c.Icon,
		Handles:     strings.Join(parts, ", "),
	}
}

// clone deep-copies a context so the cache and callers never share slices.
func (c *Context) clone() *Context {
	d := *c
	d.Graph.Sheets = maps.Clone(c.Graph.Sheets)
	d.Graph.Metadata = maps.Clone(c.Graph.Metadata)
	d.Hits = append([]Hit{}, c.Hits...)
	d.Nodes = make([]ContextNode, len(c.Nodes))
	for i, n := range c.Nodes {
		n.Handles = append([]HandleSummary{}, n.Handles...)
		for j := range n.Handles {
			n.Handles[j].Points = append([]string{}, n.Handles[j].Points...)
		}
		d.Nodes[i] = n
	}
	d.Edges = append([]ContextEdge{}, c.Edges...)
	d.Configs = append([]ConfigSummary{}, c.Configs...)
	return &d
}
