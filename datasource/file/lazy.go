package file

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/ndex"
)

// Lazy is a graph file that is parsed only when something reads or changes the
// graph. Retrieval with a persistent index (rag/indexcache) needs only the file's
// path, size and modification time, so a command over an unchanged large graph can
// answer without parsing it at all. Lazy has the methods of Source, each opening
// the file first when needed; it is safe for concurrent use.
type Lazy struct {
	path string
	opts []memgraph.Option
	// WrapErr, when set, wraps the error of parsing the file (the caller's way of
	// classifying it, as it would have an error of Open).
	WrapErr func(error) error
	// LockWait is passed on to the Source (see Source.LockWait).
	LockWait time.Duration
	// Notify and Secret are passed on to the Source (see Source.Notify and
	// Source.Secret).
	Notify func(string)
	Secret string

	mu     sync.Mutex
	src    *Source
	writes uint64 // changes made through this value, folded into Version
}

// OpenLazy checks that path names a file and returns it unparsed. A malformed file
// gives its error at the first read.
func OpenLazy(ctx context.Context, path string, opts ...memgraph.Option) (*Lazy, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("file source: no path given (use file:PATH)")
	}
	real, err := realPath(path)
	if err != nil {
		return nil, err
	}
	if _, err := checkRegular(path, real); err != nil {
		return nil, err
	}
	return &Lazy{path: path, opts: opts}, nil
}

// OpenLazyWith is OpenLazy with options. A .ndex export is opened at once: it is
// small (the server exports at most 10,000 nodes), and a wrong secret must fail
// here, not be hidden by an index of the graph kept from an earlier run.
func OpenLazyWith(ctx context.Context, path string, o Options, opts ...memgraph.Option) (*Lazy, error) {
	l, err := OpenLazy(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	l.Notify, l.Secret = o.Notify, o.Secret
	if isNdexFile(path) {
		if _, err := l.open(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// isNdexFile reports whether the file at path starts as a .ndex export.
func isNdexFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	return ndex.IsExport(head[:n]) && n == 4
}

// open parses the file on first use.
func (l *Lazy) open(ctx context.Context) (*Source, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src != nil {
		return l.src, nil
	}
	src, err := OpenWith(ctx, l.path, Options{Notify: l.Notify, Secret: l.Secret}, l.opts...)
	if err != nil {
		if l.WrapErr != nil && ctx.Err() == nil {
			err = l.WrapErr(err)
		}
		return nil, err
	}
	src.LockWait = l.LockWait
	l.src = src
	return src, nil
}

// Opened reports whether the file has been parsed.
func (l *Lazy) Opened() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src != nil
}

func (l *Lazy) wrote() {
	l.mu.Lock()
	l.writes++
	l.mu.Unlock()
}

// Spans is Source.Spans of the parsed file; ok is false when it has not been parsed.
func (l *Lazy) Spans() (spans datasource.Spans, size int64, modTime time.Time, ok bool) {
	l.mu.Lock()
	src := l.src
	l.mu.Unlock()
	if src == nil {
		return datasource.Spans{}, 0, time.Time{}, false
	}
	return src.Spans()
}

// Path returns the file's path as given.
func (l *Lazy) Path() string { return l.path }

// Describe says "file:PATH".
func (l *Lazy) Describe() string { return "file:" + l.path }

// GraphKey returns the key of the graph the file holds. Before the file is parsed
// it reads only the graph object at its start (see Graph).
func (l *Lazy) GraphKey() string {
	l.mu.Lock()
	src := l.src
	l.mu.Unlock()
	if src != nil {
		return src.GraphKey()
	}
	if g, ok := l.peek(); ok {
		return g.Key
	}
	s, err := l.open(context.Background()) // the file's start says nothing: the parse decides
	if err != nil {
		return ""
	}
	return s.GraphKey()
}

// peek reads the graph object from the start of the file.
func (l *Lazy) peek() (datasource.Graph, bool) {
	if _, err := checkRegular(l.path, l.path); err != nil {
		return datasource.Graph{}, false // never open a FIFO or a device: it could block
	}
	f, err := os.Open(l.path)
	if err != nil {
		return datasource.Graph{}, false
	}
	defer f.Close()
	g, ok, err := datasource.PeekGraph(bufio.NewReaderSize(f, 64<<10))
	return g, ok && err == nil && g.Key != ""
}

// Version changes whenever the file does (its size or modification time) and with
// every change made through l, without parsing the file: every change is written
// to the file at once, so the file's stamp is the graph's version.
func (l *Lazy) Version(graphKey string) (uint64, error) {
	st, err := os.Stat(l.path)
	if err != nil {
		return 0, fmt.Errorf("graph file %s: %w", l.path, err)
	}
	l.mu.Lock()
	writes := l.writes
	l.mu.Unlock()
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d", graphKey, st.Size(), st.ModTime().UnixNano(), writes)
	return h.Sum64(), nil
}

// Reload reads the file again now.
func (l *Lazy) Reload(ctx context.Context) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.Reload(ctx)
}

// Graph returns the graph's metadata. Before the file is parsed it is read from the
// graph object at the start of the file: every command checks that its graph
// exists, and over a large graph the index cache answers, that check must not
// parse the whole file. The nodes and edges are checked when first read.
func (l *Lazy) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	if !l.Opened() {
		if g, ok := l.peek(); ok && g.Key == graphKey {
			return g, nil
		}
	}
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Graph{}, err
	}
	return s.Graph(ctx, graphKey)
}

func (l *Lazy) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Nodes(ctx, graphKey, sheet)
}

func (l *Lazy) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Edges(ctx, graphKey, sheet)
}

func (l *Lazy) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Node{}, err
	}
	return s.Node(ctx, graphKey, nodeKey)
}

func (l *Lazy) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Configs(ctx, graphKey)
}

func (l *Lazy) Search(ctx context.Context, graphKey, query string, limit int, queryEmbedding []float32) ([]datasource.ScoredNode, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Search(ctx, graphKey, query, limit, queryEmbedding)
}

func (l *Lazy) VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]datasource.ScoredNode, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.VectorSearch(ctx, graphKey, queryEmbedding, limit)
}

func (l *Lazy) Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Neighborhood{}, err
	}
	return s.Neighborhood(ctx, graphKey, nodeKey, depth, dir)
}

func (l *Lazy) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	return s.Snapshot(ctx, graphKey)
}

func (l *Lazy) CreateNode(ctx context.Context, graphKey string, n datasource.Node) (datasource.Node, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Node{}, err
	}
	defer l.wrote()
	return s.CreateNode(ctx, graphKey, n)
}

func (l *Lazy) UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (datasource.Node, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Node{}, err
	}
	defer l.wrote()
	return s.UpdateNode(ctx, graphKey, nodeKey, changes)
}

func (l *Lazy) MoveNode(ctx context.Context, graphKey, nodeKey string, posX, posY float64) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer l.wrote()
	return s.MoveNode(ctx, graphKey, nodeKey, posX, posY)
}

func (l *Lazy) DeleteNode(ctx context.Context, graphKey, nodeKey string) ([]datasource.Edge, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	defer l.wrote()
	return s.DeleteNode(ctx, graphKey, nodeKey)
}

func (l *Lazy) CreateEdge(ctx context.Context, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.Edge{}, err
	}
	defer l.wrote()
	return s.CreateEdge(ctx, graphKey, e)
}

func (l *Lazy) DeleteEdge(ctx context.Context, graphKey, edgeKey string) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer l.wrote()
	return s.DeleteEdge(ctx, graphKey, edgeKey)
}

func (l *Lazy) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	defer l.wrote()
	return s.ApplyAction(ctx, graphKey, a, opts...)
}

func (l *Lazy) SetEmbeddings(ctx context.Context, graphKey string, updates map[string]embedding.Update) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer l.wrote()
	return s.SetEmbeddings(ctx, graphKey, updates)
}

var (
	_ datasource.Mutable        = (*Lazy)(nil)
	_ datasource.Snapshotter    = (*Lazy)(nil)
	_ datasource.ActionApplier  = (*Lazy)(nil)
	_ datasource.Describer      = (*Lazy)(nil)
	_ datasource.VectorSearcher = (*Lazy)(nil)
	_ embedding.Source          = (*Lazy)(nil)
)
