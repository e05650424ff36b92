package file_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
)

// Writers of one file through separate sources (as separate processes have) are
// serialised by the lock and read the file again first: no write drops another.
func TestWritersOfOneFileLoseNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o644)
	const sources, each = 4, 8
	var wg sync.WaitGroup
	errs := make(chan error, sources*each)
	for s := range sources {
		src, err := file.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half as whole actions, half as single changes: both go through the lock.
				n := datasource.Node{Key: fmt.Sprintf("w%d-%d", s, i), Type: "log-node", Sheet: "0"}
				if i%2 == 0 {
					_, err := src.CreateNode(ctx, demo.GraphKey, n)
					errs <- err
					return
				}
				_, err := datasource.Apply(ctx, src, demo.GraphKey, datasource.Action{Type: datasource.CreateNodeAction,
					CreateNode: &datasource.CreateNodePayload{NodeKey: n.Key, TypeKey: n.Type, Sheet: "0"}})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	nodes, _ := fresh.Nodes(ctx, demo.GraphKey, "")
	got := 0
	for _, n := range nodes {
		if strings.HasPrefix(n.Key, "w") {
			got++
		}
	}
	if got != sources*each {
		t.Fatalf("%d of %d nodes in the file: a write dropped another's", got, sources*each)
	}
}

// A temporary file a killed writer left is removed by the next write; the lock file
// of a dead process does not block.
func TestNextWriteRemovesStaleTempFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o644)
	dir := filepath.Dir(path)
	stale := filepath.Join(dir, ".graph.json.tmp-12345")
	if err := os.WriteFile(stale, []byte(`{"half`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, ".other.json.tmp-1")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateNode(ctx, demo.GraphKey, datasource.Node{Key: "x1", Type: "log-node", Sheet: "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("the stale temporary file is still there")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("another graph's file was removed")
	}
}

// What the person approving was shown is checked under the file's lock, on the file
// as it is once the lock is taken: an edge another process adds to a node while the
// approval waits for the lock is seen, and the node is not deleted with it.
func TestExpectIsCheckedUnderTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o644)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	edges, err := src.Edges(ctx, demo.GraphKey, "")
	if err != nil {
		t.Fatal(err)
	}
	var shown []datasource.Edge
	for _, e := range edges {
		if e.Source == "fetch-api" || e.Target == "fetch-api" {
			shown = append(shown, e)
		}
	}
	del := datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api", RemovedEdges: shown}}

	// Another process holds the lock, the approval starts and waits for it.
	other := flock.New(filepath.Join(filepath.Dir(path), ".graph.json.lock"))
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := datasource.Apply(ctx, src, demo.GraphKey, del, datasource.Expect(del))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the apply did not wait for the lock: %v", err)
	default:
	}
	// While holding it, the other process adds an edge to fetch-api.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["edges"] = append(doc["edges"].([]any), map[string]any{"_key": "e9", "sheet": "0",
		"source": "sort-stats", "sourceHandle": "0", "target": "fetch-api", "targetHandle": "0"})
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = other.Unlock()

	err = <-done
	if !datasource.IsConflict(err) || !strings.Contains(err.Error(), "e9: sort-stats:0 → fetch-api:0") {
		t.Fatalf("apply after another process added an edge: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(after), `"fetch-api"`) || !strings.Contains(string(after), `"e9"`) {
		t.Fatal("fetch-api or the edge added meanwhile is gone from the file")
	}
	// Shown as it is now, it applies.
	fresh, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	edges, _ = fresh.Edges(ctx, demo.GraphKey, "")
	shown = shown[:0]
	for _, e := range edges {
		if e.Source == "fetch-api" || e.Target == "fetch-api" {
			shown = append(shown, e)
		}
	}
	del.DeleteNode.RemovedEdges = shown
	if _, err := datasource.Apply(ctx, src, demo.GraphKey, del, datasource.Expect(del)); err != nil {
		t.Fatalf("apply of what is there now: %v", err)
	}
}

// A write leaves nothing beside the graph file: the lock file is removed before
// its lock is released, by every writer of several racing ones.
func TestNoLockFileLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o644)
	var wg sync.WaitGroup
	for s := range 3 {
		src, err := file.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			wg.Go(func() {
				n := datasource.Node{Key: fmt.Sprintf("n%d-%d", s, i), Type: "log-node", Sheet: "0"}
				if _, err := src.CreateNode(ctx, demo.GraphKey, n); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Errorf("%s left beside the graph file", e.Name())
		}
	}
}
