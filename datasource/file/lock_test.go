package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
