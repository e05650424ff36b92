package arango_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/internal/fault"
)

// TestWriteRefusedWhileANodiusServerRuns: a Nodius server keeps a graph being
// edited in memory and saves it itself, so while one runs on the database (its
// nodius_cluster record refreshed within two minutes) a direct write is refused
// with what to do, and nothing changes; a server gone for longer does not stop it,
// nor does arango_ignore_server.
func TestWriteRefusedWhileANodiusServerRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	move := datasource.Action{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "transform", PosX: 7, PosY: 8}}

	h := newHarness(t, 100)
	if h.fake == nil {
		t.Skip("the server records are written through the fake (NODIUS_AI_TEST_ARANGO is a real database)")
	}
	h.fake.Insert(arangotest.Cluster, map[string]any{"_key": "peer1", "host": "10.1.2.3", "port": float64(8426),
		"status": "online", "lastRefresh": float64(time.Now().Add(-30 * time.Second).UnixMilli())})
	_, err := datasource.Apply(ctx, h.src, "g1", move)
	fe, ok := fault.As(err)
	if !ok || fe.Code != fault.Config || !strings.Contains(err.Error(), "10.1.2.3:8426") || !strings.Contains(err.Error(), "--source server:") {
		t.Fatalf("apply with a server running: %v", err)
	}
	if n := h.fake.Doc(arangotest.Nodes, "g1-transform"); n["posX"] == float64(7) {
		t.Fatal("the node moved although the write was refused")
	}

	// The same server, gone for three minutes: the write goes through.
	h.fake.Update(arangotest.Cluster, "peer1", map[string]any{"lastRefresh": float64(time.Now().Add(-3 * time.Minute).UnixMilli())})
	if _, err := datasource.Apply(ctx, h.src, "g1", move); err != nil {
		t.Fatalf("apply with the server gone: %v", err)
	}

	// Running again, but the person says nobody edits the graph.
	h.fake.Update(arangotest.Cluster, "peer1", map[string]any{"lastRefresh": float64(time.Now().UnixMilli())})
	cfg := h.cfg
	cfg.IgnoreLiveServer = true
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := datasource.Apply(ctx, src, "g1", move); err != nil {
		t.Fatalf("apply with arango_ignore_server: %v", err)
	}
}
