package indexcache

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/rag"
)

var questions = []string{"fetch orders retry", "filter active users", "what runs after sort-invoices-12", "Quel nœud écrit dans le journal ?"}

// writeGraph writes a generated graph to a file and returns its path.
func writeGraph(t *testing.T, dir string, seed int64, nodes int) string {
	t.Helper()
	s := gen.Graph(seed, nodes, 2*nodes)
	data, err := file.Encode(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// answer asks the questions as a new process would: a fresh source and cache.
func answer(t *testing.T, path, cacheDir, graphKey string) ([]*rag.Context, *file.Lazy) {
	t.Helper()
	src, err := file.OpenLazy(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	if cacheDir != "" {
		opts.Store = New(cacheDir, 0)
	}
	r := rag.New(src, opts, nil)
	var out []*rag.Context
	for _, q := range questions {
		c, err := r.Retrieve(context.Background(), graphKey, q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out, src
}

func TestCachedGraphAnswersLikeTheFileWithoutParsingIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeGraph(t, dir, 5, 1500)
	cache := filepath.Join(dir, "cache")
	want, _ := answer(t, path, "", "gen-5")
	first, src := answer(t, path, cache, "gen-5")
	if !src.Opened() {
		t.Fatal("first run: the file was not parsed, yet nothing was cached")
	}
	second, src := answer(t, path, cache, "gen-5")
	if src.Opened() {
		t.Fatal("second run parsed the file: the cache was not used")
	}
	for i := range questions {
		if !reflect.DeepEqual(want[i], first[i]) || !reflect.DeepEqual(want[i], second[i]) {
			t.Fatalf("%q: cached context differs\nwant %+v\ngot  %+v", questions[i], want[i], second[i])
		}
	}
}

func TestChangedFileIsNotServedFromTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeGraph(t, dir, 6, 300)
	cache := filepath.Join(dir, "cache")
	answer(t, path, cache, "gen-6")
	st, _ := os.Stat(path)

	// Same size, same modification time, one byte of a key changed: only the
	// content hash can tell.
	data, _ := os.ReadFile(path)
	s := string(data)
	old, renamed := "\"_key\": \"gen-6\"", "\"_key\": \"gen-7\""
	if !strings.Contains(s, old) {
		t.Fatal("graph key not found in the file")
	}
	s = strings.Replace(s, old, renamed, 1)
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if _, src := answer(t, path, cache, "gen-7"); !src.Opened() {
		t.Fatal("a changed file was answered from the cache")
	}
	if _, src := answer(t, path, cache, "gen-7"); src.Opened() {
		t.Fatal("the changed file was not cached in turn")
	}
}

func TestConcurrentWritersLeaveOneWholeEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeGraph(t, dir, 8, 800)
	cache := filepath.Join(dir, "cache")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { // each a separate "process": its own source and cache value
			defer wg.Done()
			answer(t, path, cache, "gen-8")
		}()
	}
	wg.Wait()
	des, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(des) != 1 {
		names := []string{}
		for _, de := range des {
			names = append(names, de.Name())
		}
		t.Fatalf("cache holds %v, want one entry and no temporary file", names)
	}
	want, _ := answer(t, path, "", "gen-8")
	got, src := answer(t, path, cache, "gen-8")
	if src.Opened() || !reflect.DeepEqual(want, got) {
		t.Fatal("the entry left by racing writers is not usable")
	}
}

func TestCorruptEntryIsRebuilt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeGraph(t, dir, 9, 200)
	cache := filepath.Join(dir, "cache")
	answer(t, path, cache, "gen-9")
	des, _ := os.ReadDir(cache)
	entry := filepath.Join(cache, des[0].Name())
	info, _ := os.Stat(entry)
	for _, size := range []int64{info.Size() - 7, info.Size() / 2, 20, 3} {
		if err := os.Truncate(entry, size); err != nil {
			t.Fatal(err)
		}
		if _, src := answer(t, path, cache, "gen-9"); !src.Opened() {
			t.Fatalf("entry cut to %d bytes was used", size)
		}
		info, _ = os.Stat(entry)
	}
}

// graphFiles writes n graph files of 10 nodes (key gen-10), each in a directory of
// its own under dir, and returns their paths.
func graphFiles(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		d := filepath.Join(dir, string(rune('a'+i)))
		os.Mkdir(d, 0o700)
		paths = append(paths, writeGraph(t, d, 10, 400))
	}
	return paths
}

// fillCache retrieves from the graph at path with the cache at dir bounded to
// bound bytes (0: the default), which saves the graph's entry.
func fillCache(t *testing.T, dir, path string, bound int64) {
	t.Helper()
	src, _ := file.OpenLazy(context.Background(), path)
	opts := rag.DefaultOptions()
	opts.Store = New(dir, bound)
	if _, err := rag.New(src, opts, nil).Retrieve(context.Background(), "gen-10", "fetch"); err != nil {
		t.Fatal(err)
	}
}

func TestCacheStaysUnderItsBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	// The first entry tells an entry's size; a bound of one and a half entries
	// keeps only the newest.
	bound := int64(0)
	for _, p := range graphFiles(t, dir, 3) {
		fillCache(t, cache, p, bound) // 0 at first: the default bound
		if bound == 0 {
			des, _ := os.ReadDir(cache)
			info, _ := des[0].Info()
			bound = info.Size() * 3 / 2
		}
		time.Sleep(10 * time.Millisecond) // distinct modification times
	}
	des, _ := os.ReadDir(cache)
	var total int64
	for _, de := range des {
		info, _ := de.Info()
		total += info.Size()
	}
	if len(des) != 1 || total > bound {
		t.Fatalf("%d entries, %d bytes, want 1 under the bound of %d", len(des), total, bound)
	}
}

// The entry keeps where each record lies in the graph file, not a copy of it: a
// cached 100,000-node graph costs the index, not a second copy of the file.
func TestEntryReadsRecordsFromTheGraphFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeGraph(t, dir, 11, 600)
	cache := filepath.Join(dir, "cache")
	answer(t, path, cache, "gen-11")
	des, _ := os.ReadDir(cache)
	entry, _ := des[0].Info()
	graph, _ := os.Stat(path)
	if entry.Size() > graph.Size()/2 {
		t.Fatalf("entry %d bytes for a %d-byte graph: the records were copied", entry.Size(), graph.Size())
	}

	src, err := file.OpenLazy(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := New(cache, 0).Load(context.Background(), src, "gen-11")
	if !ok {
		t.Fatal("entry not used")
	}
	parsed, err := file.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := parsed.Snapshot(context.Background(), "gen-11")
	for _, i := range []int{0, 1, 299, 599} {
		n, err := g.Records.Node(i)
		if err != nil || !reflect.DeepEqual(n, snap.Nodes[i]) {
			t.Fatalf("node %d from the graph file: %+v, %v\nwant %+v", i, n, err, snap.Nodes[i])
		}
	}
	for _, i := range []int{0, 1199} {
		e, err := g.Records.Edge(i)
		if err != nil || !reflect.DeepEqual(e, snap.Edges[i]) {
			t.Fatalf("edge %d from the graph file: %+v, %v\nwant %+v", i, e, err, snap.Edges[i])
		}
	}

	// The file edited in place (same inode, same size) after the entry was
	// loaded, node 1's key changed: what lies at its place now is refused, not
	// shown as node 1.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := snap.Nodes[1].Key
	edited := strings.Replace(string(data), `"_key": "`+key+`"`, `"_key": "`+key[:len(key)-1]+`~"`, 1)
	if edited == string(data) {
		t.Fatal("node 1's key not found in the file")
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Records.Node(1); err == nil {
		t.Fatalf("node 1 read from a file edited in place: %+v", n)
	}
	if _, err := g.Records.Node(2); err != nil {
		t.Fatalf("node 2, unchanged, refused: %v", err)
	}
}

// Temporary files count toward the bound: the one another process is still
// writing takes room, so saving an entry evicts an older one sooner, and one left
// by a writer that died long ago is removed.
func TestTemporaryFilesCountTowardTheBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	paths := graphFiles(t, dir, 2)
	fillCache(t, cache, paths[0], 0)
	des, _ := os.ReadDir(cache)
	info, _ := des[0].Info()
	size := info.Size()
	// Another process is writing an entry as big: with a bound of two and a half
	// entries, the second entry only fits once the first is evicted.
	live := filepath.Join(cache, ".tmp-live.idx")
	if err := os.WriteFile(live, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(cache, ".tmp-dead.idx")
	if err := os.WriteFile(dead, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	fillCache(t, cache, paths[1], size*5/2)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live writer's temporary file was removed: %v", err)
	}
	var entries int
	var total int64
	des, _ = os.ReadDir(cache)
	for _, de := range des {
		info, _ := de.Info()
		total += info.Size()
		if strings.HasSuffix(de.Name(), ".idx") && !strings.HasPrefix(de.Name(), ".tmp-") {
			entries++
		}
	}
	if entries != 1 || total > size*5/2 {
		t.Errorf("%d entries, %d bytes in all, want 1 entry and at most %d bytes", entries, total, size*5/2)
	}
}
