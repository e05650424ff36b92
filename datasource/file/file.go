// Package file serves one graph JSON file (the `file:PATH` source; format in
// datasource.Document and docs/reference.md) through an in-memory memgraph.Store.
//
// Every change (each Mutable call, and each ApplyAction as a whole, batch included)
// is written back at once and atomically: the new file is written to a temporary file
// in the same directory, synced, given the original mode and renamed over the old
// one, so a crash leaves either the old graph or the new one, never half of either.
// Fields this client does not know are kept at every level. When the file changes on
// disk (another editor, git checkout), the next call reads it again.
package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Source is a graph file opened for reading and writing. It implements
// datasource.Source, Mutable, Snapshotter, ActionApplier, Describer and
// VectorSearcher. It is safe for concurrent use.
type Source struct {
	path  string // as given, for messages
	real  string // symlinks resolved: where we read and write
	store *memgraph.Store

	wmu sync.Mutex // serialises reloads and writes (taken before the store's locks)

	// LockWait bounds how long a write waits for another process writing the same
	// file (LockTimeout when zero). Set it before the first write.
	LockWait time.Duration

	// Secret decrypts a .ndex export (ndex.DefaultSecret when empty). Set it
	// before the first read (OpenWith does).
	Secret string

	// Notify, when set, is told each notice about the file once: that it is in
	// the earlier format, which node types' code is unknown. Set it before the
	// first read (OpenNotify does).
	Notify func(string)

	mu      sync.Mutex // guards the fields below; never held while calling the store
	key     string
	extra   map[string]json.RawMessage
	format  datasource.Format
	export  exportKind      // what kind of export the file is; "" for a graph file
	told    map[string]bool // notices already given
	mode    fs.FileMode
	modTime time.Time
	size    int64
	sum     [sha256.Size]byte // of the bytes last read or written
	// spans locate the nodes and edges in the file as last read; nil once the
	// graph was written (the store's order is no longer the file's).
	spans *datasource.Spans
}

// Open reads the graph file at path. A missing file, malformed JSON or a value of the
// wrong kind gives an error naming the file, and the line, column and field where it
// can. opts are passed on to the underlying memgraph.Store (WithOnChange, say); the
// commit hook is the file source's own.
func Open(ctx context.Context, path string, opts ...memgraph.Option) (*Source, error) {
	return OpenNotify(ctx, path, nil, opts...)
}

// OpenNotify is Open with notify told the notices about the file (see
// Source.Notify).
func OpenNotify(ctx context.Context, path string, notify func(string), opts ...memgraph.Option) (*Source, error) {
	return OpenWith(ctx, path, Options{Notify: notify}, opts...)
}

// Options of a graph file source.
type Options struct {
	Notify func(string) // see Source.Notify
	Secret string       // see Source.Secret
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options, opts ...memgraph.Option) (*Source, error) {
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
	s := &Source{path: path, real: real, Notify: o.Notify, Secret: o.Secret}
	doc, spans, st, err := s.read()
	if err != nil {
		return nil, err
	}
	all := append(append([]memgraph.Option{}, opts...),
		memgraph.WithDescription("file:"+path),
		memgraph.WithCommit(s.persist))
	store, err := memgraph.New([]datasource.Snapshot{doc.Snapshot()}, all...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.store = store
	s.setLoaded(doc, spans, st)
	s.cleanOnOpen()
	return s, nil
}

// cleanOnOpen removes the temporary files a killed writer left, when no other
// process is writing the graph now (the lock is free); otherwise the next write
// does it.
func (s *Source) cleanOnOpen() {
	dir, base := filepath.Split(s.real)
	if dir == "" {
		dir = "."
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".tmp-*")); len(left) == 0 {
		return // nothing to clean: reading a graph leaves no lock file behind
	}
	fl := flock.New(s.lockPath(), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	if ok, err := fl.TryLock(); err == nil && ok {
		s.removeStaleTemps()
		_ = fl.Unlock()
	}
}

// Path returns the file's path as given to Open.
func (s *Source) Path() string { return s.path }

// GraphKey returns the key of the graph the file holds.
func (s *Source) GraphKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// Store returns the underlying store (its Version tells when the graph changed).
func (s *Source) Store() *memgraph.Store { return s.store }

// Describe says "file:PATH".
func (s *Source) Describe() string { return "file:" + s.path }

// read loads and checks the file.
func (s *Source) read() (datasource.Document, *datasource.Spans, fs.FileInfo, error) {
	fail := func(err error) (datasource.Document, *datasource.Spans, fs.FileInfo, error) {
		return datasource.Document{}, nil, nil, err
	}
	data, st, err := readRegular(s.path, s.real)
	if err != nil {
		return fail(err)
	}
	limitMemory(st.Size())
	sum := make(chan [sha256.Size]byte, 1)
	go func() { sum <- sha256.Sum256(data) }() // on the other CPU while the parse runs
	doc, spans, kind, err := s.decode(data)
	if err != nil {
		<-sum
		return fail(err)
	}
	s.mu.Lock()
	s.sum = <-sum
	s.export = kind
	s.mu.Unlock()
	return doc, spans, st, nil
}

// limitMemory gives the Go runtime a soft memory limit in proportion to a large
// graph file about to be parsed, unless one is set already (GOMEMLIMIT, or an
// earlier, larger file). Parsing and indexing a graph keeps about 2.4 bytes live
// per byte of file, and by default the collector lets the heap grow to twice what
// is live: a 136 MB file peaked at 650 MB. With the limit the collector runs
// earlier instead; the same file peaks under 400 MB for about 10 % more CPU. The
// limit is soft: a graph that needs more still gets it, at the cost of more
// collection. Small files are left alone: there the default costs little.
func limitMemory(size int64) {
	const minSize, base = 32 << 20, 48 << 20
	if size < minSize || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	want := base + size*22/10
	if cur := debug.SetMemoryLimit(-1); cur < math.MaxInt64 && cur >= want {
		return
	}
	debug.SetMemoryLimit(want)
}

// decode reads a graph file, a .ndex export or an export's payload.
func (s *Source) decode(data []byte) (datasource.Document, *datasource.Spans, exportKind, error) {
	if ndex.IsExport(data) {
		payload, err := decodeNdex(s.path, data, s.Secret)
		if err != nil {
			return datasource.Document{}, nil, notExport, err
		}
		doc, err := payloadDocument(s.path, ExportKey(s.path), payload)
		return doc, nil, ndexExport, err
	}
	doc, spans, err := parse(s.path, data)
	if err != nil && isPayload(err) {
		if doc, perr := payloadDocument(s.path, ExportKey(s.path), data); perr == nil {
			return doc, nil, payloadExport, nil
		}
	}
	if err != nil {
		return datasource.Document{}, nil, notExport, err
	}
	return doc, &spans, notExport, nil
}

func (s *Source) setLoaded(doc datasource.Document, spans *datasource.Spans, st fs.FileInfo) {
	s.mu.Lock()
	kind := s.export
	s.mu.Unlock()
	if kind != notExport {
		s.notify(exportNotice(s.path, kind, doc.Graph.Key))
	}
	s.notify(Notices(s.path, doc)...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if doc.Format != datasource.FormatEarlier {
		// The file's node records hold no code (a node's code is its type's):
		// a reader of one record alone (the index cache) would miss it.
		spans = nil
	}
	s.spans = spans
	s.key = doc.Graph.Key
	s.extra = doc.Extra
	s.format = doc.Format
	s.mode = st.Mode().Perm()
	s.modTime = st.ModTime()
	s.size = st.Size()
}

// Format is the format the file was read in, and is written in.
func (s *Source) Format() datasource.Format {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.format
}

// Notices says what a user of the graph file at path should know about doc: that
// it is in the earlier format (read and written as it is; the convert command
// converts it), and which node types' code is unknown.
func Notices(path string, doc datasource.Document) []string {
	var out []string
	if doc.Format == datasource.FormatEarlier {
		out = append(out, fmt.Sprintf("graph file %s is in nodius-ai's earlier format (code on nodes, sheets): it is read, and written back, as it is; `nodius-ai graph convert %s NEW.json` makes a copy in Nodius's own format", path, path))
	}
	if n := datasource.MissingTypesNotice(doc.MissingTypes()); n != "" {
		out = append(out, fmt.Sprintf("graph file %s: %s", path, n))
	}
	return out
}

// notify gives each notice not given yet.
func (s *Source) notify(notices ...string) {
	if s.Notify == nil || len(notices) == 0 {
		return
	}
	s.mu.Lock()
	var fresh []string
	for _, n := range notices {
		if !s.told[n] {
			if s.told == nil {
				s.told = map[string]bool{}
			}
			s.told[n] = true
			fresh = append(fresh, n)
		}
	}
	s.mu.Unlock()
	for _, n := range fresh {
		s.Notify(n)
	}
}

// changedOnDisk reports whether the file is not the one last read or written.
// A file that cannot be stat'ed counts as unchanged: reads keep serving the graph in
// memory, and the next write says what is wrong.
func (s *Source) changedOnDisk() bool {
	st, err := os.Stat(s.real)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !st.ModTime().Equal(s.modTime) || st.Size() != s.size
}

// refresh reads the file again when it changed on disk since it was last read or
// written. A cheap stat when nothing changed.
func (s *Source) refresh(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.changedOnDisk() {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.reloadLocked()
}

// Version is the graph's change counter (see memgraph.Store.Version), after picking
// up an edit made to the file on disk, so a cache keyed by it sees outside edits too.
func (s *Source) Version(graphKey string) (uint64, error) {
	if err := s.refresh(context.Background()); err != nil {
		return 0, err
	}
	return s.store.Version(graphKey)
}

// Reload reads the file again now, whether or not it looks changed.
func (s *Source) Reload(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	s.modTime = time.Time{}
	s.mu.Unlock()
	return s.reloadLocked()
}

// reloadLocked reloads when the file changed; s.wmu is held.
func (s *Source) reloadLocked() error {
	if !s.changedOnDisk() {
		return nil // another goroutine reloaded it first
	}
	doc, spans, st, err := s.read()
	if err != nil {
		return err
	}
	if k := s.GraphKey(); doc.Graph.Key != k {
		return fmt.Errorf("graph file %s now holds graph %q instead of %q; start again to switch graphs", s.path, doc.Graph.Key, k)
	}
	if err := s.store.Replace(doc.Snapshot()); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	s.setLoaded(doc, spans, st)
	return nil
}

// Spans says where each node and edge of the graph lies in the file (in the order
// Snapshot gives them), so that one can be read again alone, without parsing the
// whole file: the index cache keeps these instead of a copy of every record. size
// and modTime are the file's when it was read; ok is false when the graph was
// written since by this source.
func (s *Source) Spans() (spans datasource.Spans, size int64, modTime time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spans == nil {
		return datasource.Spans{}, 0, time.Time{}, false
	}
	return *s.spans, s.size, s.modTime, true
}

// LockTimeout is how long a write waits, by default, for another process writing the
// same graph file (see Source.LockWait).
const LockTimeout = 10 * time.Second

// ErrLocked is wrapped by the error of a write that gave up waiting for another
// process writing the same file.
var ErrLocked = datasource.ErrLocked

// write runs one change under the graph file's lock, with the file read again first,
// so a change never drops one another process (or an editor) made meanwhile.
//
// Writers of one file, in this process and in others, are serialised by an advisory
// lock on a sidecar file (.NAME.lock next to it, there only while a write holds
// it); the kernel releases it when its process dies, so a crash never leaves the
// graph locked. Temporary files a crashed
// writer left (.NAME.tmp-*) are removed under the lock.
func (s *Source) write(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	kind := s.export
	s.mu.Unlock()
	if kind != notExport {
		// Classified here, so the person approving reads how to get a writable
		// copy rather than a bare "read-only".
		roe := &ReadOnlyError{Path: s.path, Kind: string(kind)}
		return &fault.Error{Code: fault.Config, Message: roe.Error() + "; nothing was applied", Err: roe}
	}
	if _, err := os.Stat(s.real); err != nil {
		return fmt.Errorf("graph file %s cannot be written: %w", s.path, err)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s.removeStaleTemps()
	if err := s.reloadIfDifferent(); err != nil {
		return err
	}
	return fn()
}

// reloadIfDifferent reads the file and loads it when its bytes are not the ones
// last read or written: time and size alone can miss a quick same-size rewrite by
// another process. s.wmu and the file lock are held.
func (s *Source) reloadIfDifferent() error {
	data, _, err := readRegular(s.path, s.real)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	s.mu.Lock()
	same := sum == s.sum
	s.mu.Unlock()
	if same {
		return nil
	}
	s.mu.Lock()
	s.modTime = time.Time{}
	s.mu.Unlock()
	return s.reloadLocked()
}

// lockPath is the sidecar lock file of the graph file.
func (s *Source) lockPath() string {
	dir, base := filepath.Split(s.real)
	return filepath.Join(dir, "."+base+".lock")
}

// lock takes the graph file's lock across processes, waiting at most LockWait.
// The sidecar lock file is removed again before the lock is released, so none is
// left beside the graph. A writer that waited on a file removed meanwhile holds the
// lock of a name no longer there: it sees that (the path is not the file it
// locked) and locks again, on the file now at the path.
func (s *Source) lock(ctx context.Context) (func(), error) {
	wait := s.LockWait
	if wait <= 0 {
		wait = LockTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		fl := flock.New(s.lockPath(), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
		ok, err := fl.TryLockContext(wctx, 20*time.Millisecond)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("graph file %s: cannot take its lock %s: %w", s.path, s.lockPath(), err)
		}
		if !ok {
			return nil, &lockedError{path: s.path, wait: wait, lockFile: s.lockPath()}
		}
		held, herr := fl.Stat()
		now, nerr := os.Stat(s.lockPath())
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return func() {
				_ = os.Remove(s.lockPath()) // while still held: see above
				_ = fl.Unlock()
			}, nil
		}
		_ = fl.Unlock()
	}
}

// lockedError: another process kept the graph file locked longer than a write waits.
type lockedError struct {
	path, lockFile string
	wait           time.Duration
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("graph file %s stayed locked by another process for %s (lock file %s)", e.path, e.wait, e.lockFile)
}

func (e *lockedError) Unwrap() error { return datasource.ErrLocked }

// removeStaleTemps deletes the temporary files a writer killed mid-write left behind;
// the lock is held, so none of them belongs to a live writer.
func (s *Source) removeStaleTemps() {
	dir, base := filepath.Split(s.real)
	if dir == "" {
		dir = "."
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".tmp-*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		if r == '*' || r == '?' || r == '[' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// persist is the store's commit hook: it writes the changed graph atomically.
func (s *Source) persist(ctx context.Context, graphKey string, next datasource.Snapshot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	extra, mode, format := s.extra, s.mode, s.format
	s.mu.Unlock()
	doc := datasource.DocumentFromSnapshot(next, extra)
	doc.Format = format
	typesChanged := false
	if format == datasource.FormatNodius {
		var err error
		if typesChanged, err = CodeToTypes(&doc); err != nil {
			return fmt.Errorf("graph file %s: %w", s.path, err)
		}
		fillNodiusFields(&doc)
	}
	// Streamed to the temporary file (and the hash that tells our own write from
	// another's), never held whole: a 100,000-node graph is ~140 MB.
	h := sha256.New()
	err := writeAtomic(s.real, mode, func(f io.Writer) error {
		return datasource.WriteDocument(io.MultiWriter(f, h), doc)
	})
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("graph file %s: encoding: %w", s.path, err)
	}
	if err != nil {
		return fmt.Errorf("graph file %s: %w", s.path, err)
	}
	s.mu.Lock()
	h.Sum(s.sum[:0])
	s.spans = nil
	s.mu.Unlock()
	st, err := os.Stat(s.real)
	if err != nil {
		return fmt.Errorf("graph file %s: %w", s.path, err)
	}
	s.mu.Lock()
	s.modTime, s.size = st.ModTime(), st.Size()
	if typesChanged {
		// Every node of a changed type runs the new code: the next read loads
		// the file again, which gives it to them.
		s.modTime = time.Time{}
	}
	s.mu.Unlock()
	return nil
}

// fillNodiusFields gives nodes and edges made by nodius-ai the fields Nodius puts
// on every one, when the file's others have them: graphKey, and a node's
// typeVersion (its type's version, else 1).
func fillNodiusFields(doc *datasource.Document) {
	has := func(extra map[string]json.RawMessage, k string) bool { _, ok := extra[k]; return ok }
	var nodeKey, nodeVersion, edgeKey bool
	for _, n := range doc.Nodes {
		nodeKey = nodeKey || has(n.Extra, "graphKey")
		nodeVersion = nodeVersion || has(n.Extra, "typeVersion")
	}
	for _, e := range doc.Edges {
		edgeKey = edgeKey || has(e.Extra, "graphKey")
	}
	key, _ := json.Marshal(doc.Graph.Key)
	versions := map[string]json.RawMessage{}
	for _, c := range doc.NodeConfigs {
		if v, ok := c.Extra["version"]; ok {
			versions[c.Key] = v
		}
	}
	with := func(extra map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
		out := make(map[string]json.RawMessage, len(extra)+1)
		for ek, ev := range extra {
			out[ek] = ev
		}
		out[k] = v
		return out
	}
	nodesCopied := false
	for i, n := range doc.Nodes {
		needKey := nodeKey && !has(n.Extra, "graphKey")
		needVersion := nodeVersion && !has(n.Extra, "typeVersion")
		if !needKey && !needVersion {
			continue
		}
		if !nodesCopied {
			doc.Nodes, nodesCopied = append([]datasource.Node(nil), doc.Nodes...), true
		}
		if needKey {
			doc.Nodes[i].Extra = with(doc.Nodes[i].Extra, "graphKey", key)
		}
		if needVersion {
			v, ok := versions[n.Type]
			if !ok {
				v = json.RawMessage("1")
			}
			doc.Nodes[i].Extra = with(doc.Nodes[i].Extra, "typeVersion", v)
		}
	}
	edgesCopied := false
	for i, e := range doc.Edges {
		if !edgeKey || has(e.Extra, "graphKey") {
			continue
		}
		if !edgesCopied {
			doc.Edges, edgesCopied = append([]datasource.Edge(nil), doc.Edges...), true
		}
		doc.Edges[i].Extra = with(e.Extra, "graphKey", key)
	}
}

// CodeToTypes moves code changes made through nodes of a document in Nodius's
// format to their types, where Nodius keeps a node's code: the type gets the code
// (so every node of the type does), and a non-built-in type without a config gets
// one holding it. changed says whether a type's code changed. Two nodes of one
// type given different code, or code given to a built-in type's node, is an error.
func CodeToTypes(doc *datasource.Document) (changed bool, err error) {
	// A type without config, given code: a config to hold it.
	idx := make(map[string]int, len(doc.NodeConfigs))
	for i, c := range doc.NodeConfigs {
		idx[c.Key] = i
	}
	configs := doc.NodeConfigs
	copied := false
	for _, n := range doc.Nodes {
		if _, ok := idx[n.Type]; ok || n.Process == "" || n.Type == "" || datasource.IsBuiltinType(n.Type) {
			continue
		}
		if !copied {
			configs, copied = append([]datasource.NodeConfig(nil), configs...), true
		}
		configs = append(configs, datasource.NodeConfig{Key: n.Type, DisplayName: n.Type, Handles: n.Handles})
		idx[n.Type] = len(configs) - 1
	}
	doc.NodeConfigs = configs
	// A node converted from the earlier format whose type has no config (a
	// built-in one) keeps its code as its own process member.
	nodesCopied := false
	for i, n := range doc.Nodes {
		if _, ok := idx[n.Type]; ok {
			continue
		}
		if _, own := n.Extra["process"]; !own || n.Process == datasource.OwnProcess(n) {
			continue
		}
		if !nodesCopied {
			doc.Nodes, nodesCopied = append([]datasource.Node(nil), doc.Nodes...), true
		}
		extra := make(map[string]json.RawMessage, len(n.Extra))
		for k, v := range n.Extra {
			extra[k] = v
		}
		extra["process"], _ = json.Marshal(n.Process)
		doc.Nodes[i].Extra = extra
	}
	changes, err := doc.TypeCodeChanges()
	if err != nil {
		return false, err
	}
	if len(changes) == 0 {
		return false, nil
	}
	if !copied { // the store's configs are shared: never written in place
		doc.NodeConfigs = append([]datasource.NodeConfig(nil), doc.NodeConfigs...)
	}
	for t, code := range changes {
		doc.NodeConfigs[idx[t]].Process = code
	}
	return true, nil
}

// Encode writes a graph document the way the file source saves it: two-space
// indentation, no HTML escaping (process code stays readable), a final newline
// (datasource.EncodeDocument: the bytes encoding/json would write, in one pass).
func Encode(doc datasource.Document) ([]byte, error) {
	return datasource.EncodeDocument(doc)
}

// writeAtomic replaces path with what write writes: temp file in the same
// directory, fsync, chmod to mode, rename, fsync of the directory. The temp file is
// removed on failure.
func writeAtomic(path string, mode fs.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort: makes the rename itself durable
		_ = d.Close()
	}
	return nil
}

// --- datasource.Source -----------------------------------------------------

// Graph returns the graph's metadata.
func (s *Source) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	if err := s.refresh(ctx); err != nil {
		return datasource.Graph{}, err
	}
	return s.store.Graph(ctx, graphKey)
}

// Nodes lists the nodes, of one sheet when sheet is not empty.
func (s *Source) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.store.Nodes(ctx, graphKey, sheet)
}

// Edges lists the edges, of one sheet when sheet is not empty.
func (s *Source) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.store.Edges(ctx, graphKey, sheet)
}

// Node returns one node.
func (s *Source) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	if err := s.refresh(ctx); err != nil {
		return datasource.Node{}, err
	}
	return s.store.Node(ctx, graphKey, nodeKey)
}

// Configs lists the node type configs of the file.
func (s *Source) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.store.Configs(ctx, graphKey)
}

// Search ranks nodes against query, best first.
func (s *Source) Search(ctx context.Context, graphKey, query string, limit int, queryEmbedding []float32) ([]datasource.ScoredNode, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.store.Search(ctx, graphKey, query, limit, queryEmbedding)
}

// VectorSearch ranks nodes with embeddings by cosine similarity.
func (s *Source) VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]datasource.ScoredNode, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.store.VectorSearch(ctx, graphKey, queryEmbedding, limit)
}

// Neighborhood walks edges from nodeKey.
func (s *Source) Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	if err := s.refresh(ctx); err != nil {
		return datasource.Neighborhood{}, err
	}
	return s.store.Neighborhood(ctx, graphKey, nodeKey, depth, dir)
}

// Snapshot hands over the whole graph (shared, read-only slices; see memgraph).
func (s *Source) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	if err := s.refresh(ctx); err != nil {
		return datasource.Snapshot{}, err
	}
	return s.store.Snapshot(ctx, graphKey)
}

// --- datasource.Mutable: each call is one atomic file write -------------------

// CreateNode adds a node and saves the file.
func (s *Source) CreateNode(ctx context.Context, graphKey string, n datasource.Node) (out datasource.Node, err error) {
	err = s.write(ctx, func() error { out, err = s.store.CreateNode(ctx, graphKey, n); return err })
	return out, err
}

// UpdateNode changes fields of a node and saves the file.
func (s *Source) UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (out datasource.Node, err error) {
	err = s.write(ctx, func() error { out, err = s.store.UpdateNode(ctx, graphKey, nodeKey, changes); return err })
	return out, err
}

// MoveNode moves a node and saves the file.
func (s *Source) MoveNode(ctx context.Context, graphKey, nodeKey string, posX, posY float64) error {
	return s.write(ctx, func() error { return s.store.MoveNode(ctx, graphKey, nodeKey, posX, posY) })
}

// DeleteNode removes a node and its edges, saves the file, and returns the edges.
func (s *Source) DeleteNode(ctx context.Context, graphKey, nodeKey string) (out []datasource.Edge, err error) {
	err = s.write(ctx, func() error { out, err = s.store.DeleteNode(ctx, graphKey, nodeKey); return err })
	return out, err
}

// CreateEdge adds an edge and saves the file.
func (s *Source) CreateEdge(ctx context.Context, graphKey string, e datasource.Edge) (out datasource.Edge, err error) {
	err = s.write(ctx, func() error { out, err = s.store.CreateEdge(ctx, graphKey, e); return err })
	return out, err
}

// DeleteEdge removes an edge and saves the file.
func (s *Source) DeleteEdge(ctx context.Context, graphKey, edgeKey string) error {
	return s.write(ctx, func() error { return s.store.DeleteEdge(ctx, graphKey, edgeKey) })
}

// ApplyAction applies a whole action (a batch included) and saves the file once:
// all of it or, on any error, none of it. An expectation (datasource.Expect) is
// checked under the file's lock, on the file as it is then.
func (s *Source) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (out datasource.ApplyResult, err error) {
	if err := s.refuseEarlierTypeCode(a); err != nil {
		return out, err
	}
	err = s.write(ctx, func() error { out, err = s.store.ApplyAction(ctx, graphKey, a, opts...); return err })
	return out, err
}
