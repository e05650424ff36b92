package file_test

import (
	"context"
	"os"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
)

// A deletion approved as "fetch-api and the edges shown" must not take an edge added
// since: checked under the file's lock, where no other writer can slip in between,
// it deletes nothing and says which edges were not shown.
func TestDeletionTakesOnlyTheEdgesShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o600)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := src.Edges(ctx, demo.GraphKey, "")
	var edges []datasource.Edge
	for _, e := range all {
		if e.Source == "fetch-api" || e.Target == "fetch-api" {
			edges = append(edges, e)
		}
	}
	if err != nil || len(edges) < 2 {
		t.Fatalf("fetch-api edges: %v %v", edges, err)
	}
	before, _ := os.ReadFile(path)
	shown := edges[:1] // the person saw one edge; the graph has more now
	_, err = datasource.Apply(ctx, src, demo.GraphKey, datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api", RemovedEdges: shown}})
	if !datasource.IsConflict(err) {
		t.Fatalf("deleting with edges unseen: want a conflict, got %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the refused deletion changed the graph file")
	}
	// With every edge shown, it goes through.
	if _, err := datasource.Apply(ctx, src, demo.GraphKey, datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api", RemovedEdges: edges}}); err != nil {
		t.Fatalf("deleting with every edge shown: %v", err)
	}
}
