// Package indexcache keeps the indexed form of `file:` graphs on disk, under the XDG
// cache directory, so that the next command over an unchanged large graph neither
// parses the file nor indexes it again: it reads the search index, the nodes' keys
// and the edges' ends, and reads in full only the few nodes a context shows.
//
// An entry is keyed by the file's real path and the graph key, and is used only
// while the file's size, modification time and content hash (xxhash64 of every
// byte) are those it was built from. Entries are written to a temporary file and
// renamed into place, so two processes filling the cache at once each leave a whole
// entry and readers never see half of one. The directory is kept under a size
// bound by removing the least recently used entries.
package indexcache

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
	"github.com/nodius/nodius-ai/rag"
)

// DefaultMaxBytes bounds the cache directory.
const DefaultMaxBytes = 2 << 30

// entryFormat numbers this package's file layout (the search index has its own).
const entryFormat = 2

const magic = "NODIUSIX"

// Cache is a directory of indexed graphs. It is safe for concurrent use, and
// several processes may share one directory.
type Cache struct {
	dir      string
	maxBytes int64
	// Logf reports what the cache could not do (nil: silent). Failures never
	// stop retrieval: they only cost the next process the indexing again.
	Logf func(format string, args ...any)

	mu sync.Mutex
	// missed records, per entry, the file as it was when Load missed, so Save
	// stores a snapshot only if the file did not change while it was read.
	missed map[string]fileID
}

// fileID is what ties an entry to the file it was built from.
type fileID struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Hash    uint64 `json:"xxhash"`
}

// Dir returns the default cache directory: $XDG_CACHE_HOME/nodius-ai/index, else
// ~/.cache/nodius-ai/index; empty when neither can be known.
func Dir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "nodius-ai", "index")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "nodius-ai", "index")
	}
	return ""
}

// New returns a cache in dir (created on first save, mode 0700), bounded to
// maxBytes (DefaultMaxBytes when <= 0).
func New(dir string, maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Cache{dir: dir, maxBytes: maxBytes, missed: map[string]fileID{}}
}

func (c *Cache) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// pather is a source backed by one file (the file source).
type pather interface{ Path() string }

// spanner is a file source that knows where each node and edge lies in its file
// (see file.Source.Spans).
type spanner interface {
	Spans() (datasource.Spans, int64, time.Time, bool)
}

// identify returns the file behind src and its entry's name; ok is false when src
// is not a file source or the file cannot be read.
func (c *Cache) identify(src datasource.Source, graphKey string) (entry string, id fileID, ok bool) {
	p, isFile := src.(pather)
	if !isFile || c.dir == "" {
		return "", fileID{}, false
	}
	real, err := filepath.EvalSymlinks(p.Path())
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return "", fileID{}, false
	}
	sum := sha256.Sum256([]byte(real + "\x00" + graphKey))
	entry = filepath.Join(c.dir, hex.EncodeToString(sum[:12])+".idx")
	return entry, fileID{Path: real}, true
}

// stamp fills size, modification time and content hash of the file.
func stamp(ctx context.Context, id *fileID) error {
	f, err := os.Open(id.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	id.Size, id.ModTime = st.Size(), st.ModTime().UnixNano()
	h := xxhash.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	id.Hash = h.Sum64()
	return nil
}

// header is the metadata section of an entry.
type header struct {
	Format   int                     `json:"format"`
	File     fileID                  `json:"file"`
	GraphKey string                  `json:"graph_key"`
	Graph    datasource.Graph        `json:"graph"`
	Configs  []datasource.NodeConfig `json:"configs"`
	// RecordsInGraph: the full nodes and edges are read from the graph file itself
	// (which the entry is only used with while its hash is unchanged), not from
	// copies in the entry.
	RecordsInGraph bool `json:"records_in_graph"`
}

// Load implements rag.IndexStore.
func (c *Cache) Load(ctx context.Context, src datasource.Source, graphKey string) (*rag.StoredGraph, bool) {
	entry, id, ok := c.identify(src, graphKey)
	if !ok {
		return nil, false
	}
	if err := stamp(ctx, &id); err != nil {
		return nil, false
	}
	g, err := c.read(entry, id, graphKey)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, errStale) {
			c.logf("index cache: %s unusable, rebuilding: %v", entry, err)
		}
		c.mu.Lock()
		c.missed[entry] = id
		c.mu.Unlock()
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(entry, now, now) // recently used: last to be evicted
	return g, true
}

var errStale = errors.New("entry built from another version of the file")

// sectionReader reads an entry's sections, buffered.
type sectionReader struct{ r *bufio.Reader }

func (c *sectionReader) ReadByte() (byte, error)    { return c.r.ReadByte() }
func (c *sectionReader) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *Cache) read(entry string, want fileID, graphKey string) (_ *rag.StoredGraph, err error) {
	f, err := os.Open(entry)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	var fixed [16]byte
	if _, err := io.ReadFull(f, fixed[:]); err != nil {
		return nil, err
	}
	if string(fixed[:8]) != magic {
		return nil, errors.New("not an index cache entry")
	}
	metaOff := int64(binary.LittleEndian.Uint64(fixed[8:]))
	if _, err := f.Seek(metaOff, io.SeekStart); err != nil {
		return nil, err
	}
	cr := &sectionReader{r: bufio.NewReaderSize(f, 1<<16)}
	var h header
	if err := readJSON(cr, &h); err != nil {
		return nil, err
	}
	if h.Format != entryFormat || h.File != want || h.GraphKey != graphKey {
		return nil, errStale
	}
	g := &rag.StoredGraph{Graph: h.Graph, Configs: h.Configs}
	n, err := readCount(cr, 1<<31)
	if err != nil {
		return nil, err
	}
	g.Keys, g.Types, g.Sheets = make([]string, n), make([]string, n), make([]string, n)
	for i := 0; i < n; i++ {
		for _, dst := range []*string{&g.Keys[i], &g.Types[i], &g.Sheets[i]} {
			if *dst, err = readString(cr); err != nil {
				return nil, err
			}
		}
	}
	m, err := readCount(cr, 1<<31)
	if err != nil {
		return nil, err
	}
	g.Ends = make([][2]int32, m)
	for i := range g.Ends {
		for j := 0; j < 2; j++ {
			v, err := binary.ReadVarint(cr)
			if err != nil {
				return nil, err
			}
			g.Ends[i][j] = int32(v)
		}
	}
	dims, err := readCount(cr, 1<<16)
	if err != nil {
		return nil, err
	}
	if dims > 0 {
		g.Vectors = make([][]float32, n)
		for i := 0; i < n; i++ {
			has, err := cr.ReadByte()
			if err != nil {
				return nil, err
			}
			if has == 0 {
				continue
			}
			v := make([]float32, dims)
			var b [4]byte
			for j := range v {
				if _, err := io.ReadFull(cr, b[:]); err != nil {
					return nil, err
				}
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
			}
			g.Vectors[i] = v
		}
	}
	rec := &records{f: f, keys: g.Keys, ends: g.Ends, nodes: make([]datasource.Span, n), edges: make([]datasource.Span, m)}
	limit := metaOff
	if h.RecordsInGraph {
		limit = h.File.Size
	}
	for _, spans := range [][]datasource.Span{rec.nodes, rec.edges} {
		for i := range spans {
			start, err := binary.ReadUvarint(cr)
			if err != nil {
				return nil, err
			}
			length, err := binary.ReadUvarint(cr)
			if err != nil {
				return nil, err
			}
			spans[i] = datasource.Span{Start: int64(start), End: int64(start + length)}
			if start > uint64(limit) || length > uint64(limit)-start {
				return nil, errors.New("corrupt record offsets")
			}
		}
	}
	rest, err := io.ReadAll(cr)
	if err != nil {
		return nil, err
	}
	if g.Index, err = search.Decode(rest); err != nil {
		return nil, err
	}
	if g.Index.Len() != n {
		return nil, errors.New("index and nodes disagree")
	}
	if h.RecordsInGraph {
		// The graph file as it is now was just hashed: it is the one the spans
		// were taken from. Kept open, it stays readable if a new version is
		// renamed over it.
		gf, err := os.Open(want.Path)
		if err != nil {
			return nil, err
		}
		f.Close()
		rec.f = gf
	}
	g.Records = rec
	keep = true // the records are read from rec.f for as long as the graph is used
	return g, nil
}

// records reads full nodes and edges, stored as JSON at known places of a file
// kept open: the graph file itself, or the entry.
type records struct {
	f     *os.File
	keys  []string   // node keys, to check what is read
	ends  [][2]int32 // edge ends, likewise
	nodes []datasource.Span
	edges []datasource.Span
}

func (r *records) read(spans []datasource.Span, i int, v json.Unmarshaler) error {
	if i < 0 || i >= len(spans) {
		return fmt.Errorf("record %d out of range", i)
	}
	sp := spans[i]
	buf := make([]byte, sp.End-sp.Start)
	if _, err := r.f.ReadAt(buf, sp.Start); err != nil {
		return err
	}
	return v.UnmarshalJSON(buf)
}

// errMoved: a file edited in place since it was hashed holds something else at a
// record's place.
var errMoved = errors.New("index cache: the record is not where it was (file edited in place?)")

func (r *records) Node(i int) (datasource.Node, error) {
	var n datasource.Node
	if err := r.read(r.nodes, i, &n); err != nil {
		return datasource.Node{}, err
	}
	if n.Key != r.keys[i] {
		return datasource.Node{}, errMoved
	}
	return n, nil
}

func (r *records) Edge(i int) (datasource.Edge, error) {
	var e datasource.Edge
	if err := r.read(r.edges, i, &e); err != nil {
		return datasource.Edge{}, err
	}
	if s, t := r.ends[i][0], r.ends[i][1]; s >= 0 && t >= 0 && (e.Source != r.keys[s] || e.Target != r.keys[t]) {
		return datasource.Edge{}, errMoved
	}
	return e, nil
}

// Save implements rag.IndexStore.
func (c *Cache) Save(ctx context.Context, src datasource.Source, graphKey string, g *rag.StoredGraph) {
	entry, id, ok := c.identify(src, graphKey)
	if !ok {
		return
	}
	c.mu.Lock()
	before, missed := c.missed[entry]
	delete(c.missed, entry)
	c.mu.Unlock()
	if !missed {
		return // not loaded through Load: the snapshot's file version is unknown
	}
	if err := stamp(ctx, &id); err != nil || id != before {
		return // the file changed while it was read: the snapshot may be either
	}
	var spans *datasource.Spans
	if sp, ok := src.(spanner); ok {
		s, size, mod, ok := sp.Spans()
		if ok && size == id.Size && mod.UnixNano() == id.ModTime && len(s.Nodes) == len(g.Keys) && len(s.Edges) == len(g.Ends) {
			spans = &s
		}
	}
	if err := c.write(entry, id, graphKey, g, spans); err != nil {
		c.logf("index cache: cannot save %s: %v", entry, err)
		return
	}
	c.evict(entry)
}

// write stores g. With spans, the records are those of the graph file, read from
// it when needed; without, a copy of each is written into the entry.
func (c *Cache) write(entry string, id fileID, graphKey string, g *rag.StoredGraph, spans *datasource.Spans) (err error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, ".tmp-*.idx")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	inGraph := false
	var fixed [16]byte
	copy(fixed[:], magic)
	bw.Write(fixed[:])
	off := int64(16)
	if spans == nil {
		// Records first, each at a place kept for the index section.
		spans = &datasource.Spans{Nodes: make([]datasource.Span, len(g.Keys)), Edges: make([]datasource.Span, len(g.Ends))}
		for i := range g.Keys {
			n, err := g.Records.Node(i)
			if err != nil {
				return err
			}
			n.Embedding = nil // kept apart, as unit vectors
			b, err := json.Marshal(n)
			if err != nil {
				return err
			}
			bw.Write(b)
			spans.Nodes[i] = datasource.Span{Start: off, End: off + int64(len(b))}
			off += int64(len(b))
		}
		for i := range g.Ends {
			e, err := g.Records.Edge(i)
			if err != nil {
				return err
			}
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			bw.Write(b)
			spans.Edges[i] = datasource.Span{Start: off, End: off + int64(len(b))}
			off += int64(len(b))
		}
	} else {
		inGraph = true
	}
	metaOff := off

	var vb [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(vb[:binary.PutUvarint(vb[:], v)]) }
	sv := func(v int64) { bw.Write(vb[:binary.PutVarint(vb[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); bw.WriteString(s) }
	meta, err := json.Marshal(header{Format: entryFormat, File: id, GraphKey: graphKey, Graph: g.Graph, Configs: g.Configs, RecordsInGraph: inGraph})
	if err != nil {
		return err
	}
	uv(uint64(len(meta)))
	bw.Write(meta)
	uv(uint64(len(g.Keys)))
	for i := range g.Keys {
		str(g.Keys[i])
		str(g.Types[i])
		str(g.Sheets[i])
	}
	uv(uint64(len(g.Ends)))
	for _, e := range g.Ends {
		sv(int64(e[0]))
		sv(int64(e[1]))
	}
	dims := 0
	for _, v := range g.Vectors {
		if len(v) > 0 {
			dims = len(v)
			break
		}
	}
	uv(uint64(dims))
	if dims > 0 {
		var b [4]byte
		for i := range g.Keys {
			var v []float32
			if i < len(g.Vectors) {
				v = g.Vectors[i]
			}
			if len(v) != dims {
				bw.WriteByte(0)
				continue
			}
			bw.WriteByte(1)
			for _, x := range v {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				bw.Write(b[:])
			}
		}
	}
	for _, list := range [][]datasource.Span{spans.Nodes, spans.Edges} {
		for _, sp := range list {
			uv(uint64(sp.Start))
			uv(uint64(sp.End - sp.Start))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := g.Index.Encode(f); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(fixed[8:], uint64(metaOff))
	if _, err := f.WriteAt(fixed[:], 0); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), entry)
}

// staleTemp is how long a temporary file may go unwritten before it is taken for
// one left by a writer that died: a live writer writes its entry in seconds.
const staleTemp = 10 * time.Minute

// evict removes the least recently used entries until the directory fits its
// bound; keep is never removed. Temporary files count toward the bound (they fill
// the disk like entries); those left by writers that died are removed.
func (c *Cache) evict(keep string) {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, de := range des {
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		p := filepath.Join(c.dir, de.Name())
		if strings.HasPrefix(de.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > staleTemp && os.Remove(p) == nil {
				continue // a writer that died
			}
			total += info.Size() // another process writing its entry
			continue
		}
		if !strings.HasSuffix(de.Name(), ".idx") {
			continue
		}
		files = append(files, file{p, info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for _, f := range files {
		if total <= c.maxBytes {
			return
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

func readCount(r io.ByteReader, limit int) (int, error) {
	v, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, err
	}
	if v > uint64(limit) {
		return 0, fmt.Errorf("corrupt entry: length %d", v)
	}
	return int(v), nil
}

func readString(r *sectionReader) (string, error) {
	n, err := readCount(r, 1<<24)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

func readJSON(r *sectionReader, v any) error {
	n, err := readCount(r, 1<<30)
	if err != nil {
		return err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
