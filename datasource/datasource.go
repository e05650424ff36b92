// Package datasource holds the Nodius graph model (graphs, nodes, edges, node type
// configs), the proposed actions that change a graph, and the interfaces every data
// source implements: Source to read a graph and Mutable to change it.
//
// It is the bottom of the import graph: everything else (rag, agent, threads, tui)
// may import it, and it imports none of them.
package datasource

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by every "no such graph / node / edge / type" error so callers
// can branch with errors.Is without parsing messages.
var ErrNotFound = errors.New("not found")

// ErrReadOnly is returned by sources that cannot apply changes.
var ErrReadOnly = errors.New("data source is read-only")

// ErrLocked is wrapped by the error of a change that gave up waiting for another
// writer of the same graph: nothing was changed, and trying again later may work.
var ErrLocked = errors.New("graph is locked by another writer")

// NotFoundError names what was missing; it wraps ErrNotFound.
type NotFoundError struct {
	Kind string // "graph", "node", "edge", "node type"
	Key  string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s not found: %s", e.Kind, e.Key) }
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Direction of a traversal over edges.
type Direction string

const (
	Any      Direction = "any"
	Inbound  Direction = "inbound"
	Outbound Direction = "outbound"
)

// ParseDirection accepts "any", "inbound", "outbound" (and "" as any).
func ParseDirection(s string) (Direction, error) {
	switch Direction(s) {
	case "", Any:
		return Any, nil
	case Inbound, Outbound:
		return Direction(s), nil
	}
	return "", fmt.Errorf("direction must be one of any, inbound, outbound (got %q)", s)
}

// Neighborhood is what a traversal from one node reaches: the nodes (start node
// included) and the edges walked.
type Neighborhood struct {
	Nodes []Node
	Edges []Edge
}

// ScoredNode is one search hit, best first in result slices.
type ScoredNode struct {
	Node  Node
	Score float64
}

// Snapshot is a whole graph at one moment: what retrieval indexes.
type Snapshot struct {
	Graph   Graph
	Nodes   []Node
	Edges   []Edge
	Configs []NodeConfig
}

// Source reads one workspace's graphs. It mirrors the Nodius server's GraphDataSource,
// so every source answers the tools the same way.
// Every method returns an error wrapping ErrNotFound when the graph (or node) is
// unknown. Keys are always local keys, never storage-specific composite keys.
type Source interface {
	Graph(ctx context.Context, graphKey string) (Graph, error)
	// Nodes lists the nodes of a graph, of one sheet when sheet is not empty.
	Nodes(ctx context.Context, graphKey, sheet string) ([]Node, error)
	// Edges lists the edges of a graph, of one sheet when sheet is not empty.
	Edges(ctx context.Context, graphKey, sheet string) ([]Edge, error)
	Node(ctx context.Context, graphKey, nodeKey string) (Node, error)
	// Configs lists the custom node type configs visible to the graph's workspace.
	Configs(ctx context.Context, graphKey string) ([]NodeConfig, error)
	// Search ranks nodes against a free-text query, best first, at most limit.
	// queryEmbedding may be nil; sources that store embeddings may use it.
	Search(ctx context.Context, graphKey, query string, limit int, queryEmbedding []float32) ([]ScoredNode, error)
	// Neighborhood walks edges from nodeKey up to depth hops in the given direction.
	Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir Direction) (Neighborhood, error)
}

// Snapshotter is implemented by sources that can hand over a whole graph in one
// call (cheaper than Graph+Nodes+Edges+Configs). Retrieval uses it when present.
type Snapshotter interface {
	Snapshot(ctx context.Context, graphKey string) (Snapshot, error)
}

// LoadSnapshot returns the whole graph, through Snapshotter when the source has it.
func LoadSnapshot(ctx context.Context, src Source, graphKey string) (Snapshot, error) {
	if s, ok := src.(Snapshotter); ok {
		return s.Snapshot(ctx, graphKey)
	}
	g, err := src.Graph(ctx, graphKey)
	if err != nil {
		return Snapshot{}, err
	}
	nodes, err := src.Nodes(ctx, graphKey, "")
	if err != nil {
		return Snapshot{}, err
	}
	edges, err := src.Edges(ctx, graphKey, "")
	if err != nil {
		return Snapshot{}, err
	}
	configs, err := src.Configs(ctx, graphKey)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Graph: g, Nodes: nodes, Edges: edges, Configs: configs}, nil
}

// Mutable is a Source that can change a graph. Created nodes and edges get a key
// from the source when the given key is empty; the returned value carries it.
type Mutable interface {
	Source
	CreateNode(ctx context.Context, graphKey string, n Node) (Node, error)
	// UpdateNode applies field changes; keys are field paths such as "process",
	// "type", "data" or nested "data.url".
	UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (Node, error)
	MoveNode(ctx context.Context, graphKey, nodeKey string, posX, posY float64) error
	// DeleteNode removes the node and the edges attached to it, and returns those edges.
	DeleteNode(ctx context.Context, graphKey, nodeKey string) ([]Edge, error)
	CreateEdge(ctx context.Context, graphKey string, e Edge) (Edge, error)
	DeleteEdge(ctx context.Context, graphKey, edgeKey string) error
}

// ActionApplier is implemented by sources that apply a whole ProposedAction at once
// (the Nodius server's apply endpoint; the file source, to write a batch atomically).
// Apply prefers it to the per-change Mutable methods. An implementation honours the
// options it is given (ApplyOptionsOf): Expect is checked in the same step as the
// change where the source can, else right before it.
type ActionApplier interface {
	ApplyAction(ctx context.Context, graphKey string, a Action, opts ...ApplyOption) (ApplyResult, error)
}

// Releaser is implemented by sources that hold something open between reads (the
// Nodius server's editing socket, registered on the graph like a web editor).
// Release lets it go; the next read takes it again. The agent releases at the end
// of each run, so it is held while a question is answered, not while the person
// types the next one.
type Releaser interface {
	Release()
}

// Describer is implemented by sources that can say in a few words what they are
// ("demo (embedded)", "file:/tmp/g.json") for headers and messages.
type Describer interface {
	Describe() string
}

// VectorSearcher is implemented by sources that rank nodes by embedding similarity
// on their side (ArangoDB's COSINE_SIMILARITY). Retrieval falls back to in-memory
// similarity, then to text ranking, when it is absent or fails.
type VectorSearcher interface {
	VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]ScoredNode, error)
}
