// Command gengraph writes a generated graph (package gen) as a graph file, for the
// retrieval benchmark script and for trying nodius-ai on a large graph:
//
//	go run ./datasource/gen/cmd/gengraph -nodes 100000 -edges 200000 -o /tmp/big.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/gen"
)

func main() {
	nodes := flag.Int("nodes", 10000, "number of nodes")
	edges := flag.Int("edges", 0, "number of edges (default twice the nodes)")
	seed := flag.Int64("seed", 1, "generator seed; the graph key is gen-SEED")
	out := flag.String("o", "", "output file (default stdout)")
	flag.Parse()
	if *edges == 0 {
		*edges = 2 * *nodes
	}
	s := gen.Graph(*seed, *nodes, *edges)
	data, err := file.Encode(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gengraph:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(data)
	} else {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gengraph:", err)
		os.Exit(1)
	}
}
