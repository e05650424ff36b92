package rag

import (
	"context"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// IndexStore keeps indexed graphs between processes (package rag/indexcache keeps
// them on disk), so that a large unchanged graph is neither parsed nor indexed again
// by the next command. Retrieval works the same without one.
type IndexStore interface {
	// Load returns the stored graph when src still holds exactly that graph; false
	// on a miss, whatever the reason (nothing stored, the graph changed, a bad file).
	Load(ctx context.Context, src datasource.Source, graphKey string) (*StoredGraph, bool)
	// Save stores a graph just indexed from src. A failure only costs the next
	// process the indexing again; the store reports it itself if it wants to.
	Save(ctx context.Context, src datasource.Source, graphKey string, g *StoredGraph)
}

// StoredGraph is what retrieval needs of an indexed graph, in a form that can be
// written and read back quickly: the search index, the nodes' keys, types and
// sheets, the edges' ends, and the full nodes and edges on demand (only the few a
// context shows are ever read).
type StoredGraph struct {
	Graph   datasource.Graph
	Configs []datasource.NodeConfig
	Index   *search.Index
	Keys    []string
	Types   []string
	Sheets  []string
	Ends    [][2]int32  // per edge: source and target node index, -1 when dangling
	Vectors [][]float32 // unit-length node embeddings, nil when the graph has none
	Records Records
}

// Records reads full nodes and edges by index.
type Records interface {
	Node(i int) (datasource.Node, error)
	Edge(i int) (datasource.Edge, error)
}

// snapshotRecords serves records from a snapshot in memory.
type snapshotRecords struct{ snap *datasource.Snapshot }

func (s snapshotRecords) Node(i int) (datasource.Node, error) { return s.snap.Nodes[i], nil }
func (s snapshotRecords) Edge(i int) (datasource.Edge, error) { return s.snap.Edges[i], nil }

// stored describes the state's graph for an IndexStore.
func (st *graphState) stored() *StoredGraph {
	n := len(st.snap.Nodes)
	g := &StoredGraph{
		Graph: st.snap.Graph, Configs: st.snap.Configs, Index: st.index,
		Keys: make([]string, n), Types: make([]string, n), Sheets: make([]string, n),
		Ends: make([][2]int32, len(st.snap.Edges)), Vectors: st.vecs,
		Records: snapshotRecords{&st.snap},
	}
	for i, nd := range st.snap.Nodes {
		g.Keys[i], g.Types[i], g.Sheets[i] = nd.Key, nd.Type, nd.Sheet
	}
	for i, e := range st.snap.Edges {
		s, ok1 := st.byKey[e.Source]
		t, ok2 := st.byKey[e.Target]
		if !ok1 || !ok2 {
			s, t = -1, -1
		}
		g.Ends[i] = [2]int32{int32(s), int32(t)}
	}
	return g
}

// fromStored fills the state from a stored graph: the nodes of st.snap carry only
// key, type and sheet; the rest is read through records when a context needs it.
func (st *graphState) fromStored(g *StoredGraph) {
	st.snap = datasource.Snapshot{Graph: g.Graph, Configs: g.Configs, Nodes: make([]datasource.Node, len(g.Keys))}
	for i := range g.Keys {
		st.snap.Nodes[i] = datasource.Node{Key: g.Keys[i], Type: g.Types[i], Sheet: g.Sheets[i]}
	}
	st.records = g.Records
	st.index = g.Index
	st.vecs = g.Vectors
	st.indexMaps()
	st.adj = make([][]neighbor, len(g.Keys))
	for ei, e := range g.Ends {
		s, t := int(e[0]), int(e[1])
		if s < 0 || t < 0 || s >= len(g.Keys) || t >= len(g.Keys) {
			continue
		}
		st.adj[s] = append(st.adj[s], neighbor{node: int32(t), edge: int32(ei)})
		if s != t {
			st.adj[t] = append(st.adj[t], neighbor{node: int32(s), edge: int32(ei)})
		}
	}
	st.edgeEnds = g.Ends
}

// node returns node i in full.
func (st *graphState) node(i int) datasource.Node {
	if st.records == nil {
		return st.snap.Nodes[i]
	}
	n, err := st.records.Node(i)
	if err != nil {
		return st.snap.Nodes[i] // what is known: key, type, sheet
	}
	return n
}

// edge returns edge i in full.
func (st *graphState) edge(i int) datasource.Edge {
	if st.records == nil {
		return st.snap.Edges[i]
	}
	e, err := st.records.Edge(i)
	if err != nil && i < len(st.edgeEnds) {
		ends := st.edgeEnds[i]
		return datasource.Edge{Source: st.snap.Nodes[ends[0]].Key, Target: st.snap.Nodes[ends[1]].Key}
	}
	return e
}

// outgoing reports whether, for neighbour nb of node i, the edge goes from i to it.
// Loops go both ways; ok is false for them.
func (st *graphState) outgoing(i int, nb neighbor) (out, ok bool) {
	var s, t int
	if st.records == nil {
		e := st.snap.Edges[nb.edge]
		s, t = st.byKey[e.Source], st.byKey[e.Target]
	} else {
		ends := st.edgeEnds[nb.edge]
		s, t = int(ends[0]), int(ends[1])
	}
	if s == t {
		return false, false
	}
	return s == i, true
}
