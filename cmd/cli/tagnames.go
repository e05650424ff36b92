package cli

import (
	"context"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/clientaction"
)

// tagNames resolves the keys the assistant tags in an answer ({{node:K}},
// {{sheet:K}}, {{graph:K}}) through the source: a node's type by its display name,
// a sheet's and the graph's names. Only the keys an answer names are looked up, and
// each key, type list and graph document is read once: the lookups run as tokens
// stream, and a model names the same node many times. A failed read shows the key
// alone.
func tagNames(ctx context.Context, src datasource.Source, graph string) clientaction.Names {
	if src == nil || graph == "" {
		return clientaction.Names{}
	}
	var (
		g       *datasource.Graph
		configs map[string]string
		types   = map[string]string{} // node key → type name, "" when unknown
		graphs  = map[string]string{} // graph key → name (home mode)
		listed  bool                  // graphs holds the source's listing
	)
	graphDoc := func() *datasource.Graph {
		if g == nil {
			gr, err := src.Graph(ctx, graph)
			if err != nil {
				gr = datasource.Graph{}
			}
			g = &gr
		}
		return g
	}
	nodeType := func(key string) string {
		n, err := src.Node(ctx, graph, key)
		if err != nil || n.Type == "" {
			return ""
		}
		if configs == nil {
			configs = map[string]string{}
			if cs, err := src.Configs(ctx, graph); err == nil {
				for _, c := range cs {
					configs[c.Key] = c.DisplayName
				}
			}
		}
		if name := configs[n.Type]; name != "" {
			return name
		}
		return n.Type
	}
	return clientaction.Names{
		NodeType: func(key string) string {
			if t, ok := types[key]; ok {
				return t
			}
			t := nodeType(key)
			types[key] = t
			return t
		},
		Sheet: func(key string) string { return graphDoc().Sheets[key] },
		Graph: func(key string) string {
			if graph == tools.HomeGraphKey {
				// Home mode names the user's graphs, any of them.
				name, ok := graphs[key]
				if ok {
					return name
				}
				// A source that lists its graphs with their names (a Nodius server,
				// where reading one graph loads it live) is asked once for all.
				if l, ok := src.(tools.GraphSummaries); ok {
					if listed {
						return ""
					}
					listed = true
					if gs, err := l.ListGraphs(ctx); err == nil {
						for _, gr := range gs {
							graphs[gr.Key] = gr.Name
						}
					}
					name = graphs[key]
				} else if gr, err := src.Graph(ctx, key); err == nil {
					name = gr.Name
				}
				graphs[key] = name
				return name
			}
			if key != graph {
				return ""
			}
			return graphDoc().Name
		},
	}
}
