package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
)

// routed is a source that finds the graph's socket through POST /api/sync, as
// the web client does (no --ws-url).
func routed(t *testing.T, baseURL string) *server.Source {
	t.Helper()
	src, err := server.New(server.Options{BaseURL: baseURL, Token: "tok-alice", AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// On a server where nobody claimed the graph, the source claims it through
// /api/sync and reads it live; an approved change is saved at once (forceSave):
// the saved state answers it right after.
func TestRoutedReadApplyAndSave(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	src := routed(t, s.URL)
	ctx := context.Background()
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if c := s.Counts(); c.Syncs == 0 || c.Refusals != 0 || c.Registrations == 0 {
		t.Fatalf("counts %+v", c)
	}
	if !strings.Contains(src.Describe(), "live") {
		t.Fatalf("read %s, want the live graph", src.Describe())
	}
	a := action(t, `{"type":"move_node","payload":{"nodeKey":"fetch_api","posX":555,"posY":333}}`)
	res, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
	if err != nil || !res.Applied || !strings.Contains(res.Note, "saved") {
		t.Fatalf("%+v %v", res, err)
	}
	n, _ := s.Saved(graphKey).Sheets["0"].Node("fetch_api")
	if n["posX"] != 555.0 || n["posY"] != 333.0 || s.Counts().Saves != 1 {
		t.Fatalf("saved %v,%v after %d saves", n["posX"], n["posY"], s.Counts().Saves)
	}
}

// A two-instance cluster: the source asks one instance, which routes the graph to
// its peer; the live read and the change go there, and nothing registers on the
// instance that does not manage the graph.
func TestClusterPeerGetsTheSockets(t *testing.T) {
	t.Parallel()
	a, b := standIn(t), standIn(t)
	a.RouteTo(graphKey, b)
	src := routed(t, a.URL)
	ctx := context.Background()
	act := action(t, `{"type":"delete_node","payload":{"nodeKey":"error_handler"}}`)
	if _, err := src.ApplyAction(ctx, graphKey, act); err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Registrations != 0 || c.Edits != 0 || c.Sockets != 0 {
		t.Fatalf("the instance that does not manage the graph was used: %+v", c)
	}
	if _, ok := b.Live(graphKey).NodeSheet("error_handler"); ok {
		t.Fatal("not applied on the peer")
	}
}

// An acknowledgement lost after the server applied the change: the live graph
// read again shows it landed, so it is reported applied and never sent twice —
// the next approve of the same proposal would not create a second node.
func TestLostAckIsLookedUpNotResent(t *testing.T) {
	t.Parallel()
	s := standIn(t)
	src := routed(t, s.URL)
	ctx := context.Background()
	a := action(t, `{"type":"create_node","payload":{"nodeKey":"ai_op1_1","typeKey":"log-node","sheet":"0","posX":1,"posY":2}}`)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	s.LoseNextAck("batchCreateElements")
	res, err := src.ApplyAction(ctx, graphKey, a)
	if err != nil || !res.Applied {
		t.Fatalf("%+v %v", res, err)
	}
	if c := s.Counts(); c.Edits != 1 {
		t.Fatalf("%d edits: the creation was sent again", c.Edits)
	}
	if _, ok := s.Live(graphKey).NodeSheet("ai_op1_1"); !ok {
		t.Fatal("the node is not there")
	}
	// Approving the same planned action again: the key is taken, nothing is sent.
	if _, err := src.ApplyAction(ctx, graphKey, a); err == nil || s.Counts().Edits != 1 {
		t.Fatalf("applied twice: %v, %d edits", err, s.Counts().Edits)
	}
}

// A redirect to another origin is not followed: the token is not sent there.
func TestRedirectElsewhereKeepsTheToken(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	src := routed(t, redirect.URL)
	_, err := src.Snapshot(context.Background(), graphKey)
	if err == nil || !strings.Contains(err.Error(), "redirected") {
		t.Fatalf("error %v", err)
	}
	select {
	case auth := <-got:
		t.Fatalf("the other origin received a request (Authorization %q)", auth)
	default:
	}
}
