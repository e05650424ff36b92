package server_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// loads is what a source cost the stand-in: graph reads, sockets, registrations.
type loads struct{ gets, sockets, regs, types int }

func costOf(s *servertest.Server, before servertest.Counts) loads {
	c := s.Counts()
	return loads{c.GraphGets - before.GraphGets, c.Sockets - before.Sockets, c.Registrations - before.Registrations, c.NodeConfigLists - before.NodeConfigLists}
}

func posX(ctx context.Context, t *testing.T, src *server.Source, node string) float64 {
	t.Helper()
	snap, err := src.Snapshot(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := nodeOf(t, snap, node)
	if !ok {
		t.Fatalf("no node %s", node)
	}
	return n.PosX
}

// TestOneLoadServesEveryRead: a snapshot and every later read (a tool call's
// view, the metadata, the node types, searches) cost one graph read, one socket
// and one registration per sheet.
func TestOneLoadServesEveryRead(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	before := s.Counts()
	src := source(t, s, "tok-alice", nil)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		v, err := src.View(ctx, graphKey)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Node(ctx, graphKey, "fetch_api"); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Graph(ctx, graphKey); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Configs(ctx, graphKey); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Search(ctx, graphKey, "fetch", 3, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Snapshot(ctx, graphKey); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := costOf(s, before), (loads{gets: 1, sockets: 1, regs: 2, types: 1}); got != want {
		t.Errorf("cost %+v, want %+v", got, want)
	}
}

// TestAnotherUsersEditIsFollowed: an edit another user makes after the first read
// is in the next read, from the broadcast, without reading the graph again; a
// save in between changes nothing.
func TestAnotherUsersEditIsFollowed(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src := source(t, s, "tok-alice", &notices)
	if x := posX(ctx, t, src, "fetch_api"); x != 400 {
		t.Fatalf("fetch_api posX %v, want 400", x)
	}
	before := s.Counts()
	carol := newEditor(t, s, "tok-carol")
	for _, x := range []float64{4242, 17} {
		move(ctx, t, carol.c, "fetch_api", x)
		if got := posX(ctx, t, src, "fetch_api"); got != x {
			t.Errorf("after carol's move: posX %v, want %v", got, x)
		}
		s.Save(graphKey)
	}
	if got := costOf(s, before); got.gets != 0 || got.sockets != 1 || got.regs != 2 {
		t.Errorf("cost %+v: the source read the graph again (carol's socket is the one opened)", got)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
}

// TestOwnApplyIsInTheCopy: what this client applied is read back from the copy.
func TestOwnApplyIsInTheCopy(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	before := s.Counts()
	a := action(t, `{"type":"batch","payload":{"actions":[
		{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":1}},
		{"type":"create_edge","payload":{"edgeKey":"en1","sourceKey":"return","sourceHandle":"0","targetKey":"n1","targetHandle":"0","sheet":"0"}},
		{"type":"move_node","payload":{"nodeKey":"n1","posX":7,"posY":8}}]}}`)
	if _, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a)); err != nil {
		t.Fatal(err)
	}
	if x := posX(ctx, t, src, "n1"); x != 7 {
		t.Errorf("n1 posX %v, want 7", x)
	}
	v, err := src.View(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if es, err := v.Edges(ctx, graphKey, "0"); err != nil || !hasEdge(es, "en1") {
		t.Errorf("edge en1 not in the view (%v)", err)
	}
	if got := costOf(s, before); got != (loads{gets: 1, sockets: 1, regs: 2, types: 1}) {
		t.Errorf("cost %+v: want one load for the apply and the reads after it", got)
	}
}

func hasEdge(es []datasource.Edge, key string) bool {
	for _, e := range es {
		if e.Key == key {
			return true
		}
	}
	return false
}

// TestSameUserEditElsewhereReloads: the server does not broadcast an edit to its
// author's other sockets (the same user's web editor), but announces it
// (saveStatus): the next read sees the gap and reads the graph again, said once.
func TestSameUserEditElsewhereReloads(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src := source(t, s, "tok-alice", &notices)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	web := newEditor(t, s, "tok-alice") // alice's web editor
	before := s.Counts()
	for i, x := range []float64{4242, 17} {
		move(ctx, t, web.c, "fetch_api", x)
		if got := posX(ctx, t, src, "fetch_api"); got != x {
			t.Errorf("after alice's edit in her web editor: posX %v, want %v", got, x)
		}
		if got := costOf(s, before); got.gets != i+1 {
			t.Errorf("graph reads %d, want %d", got.gets, i+1)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "read again") || !strings.Contains(notices[0], "announced but not received") {
		t.Errorf("notices %q, want one saying the copy was read again and why", notices)
	}
}

// TestUnreceivedEditBeforeAnotherIsSeen: an edit of the same user elsewhere
// (announced, not received) followed by another user's edit (announced and
// received) before the next read: the second edit's broadcast does not hide the
// first one's gap.
func TestUnreceivedEditBeforeAnotherIsSeen(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	web := newEditor(t, s, "tok-alice") // alice's web editor
	carol := newEditor(t, s, "tok-carol")
	before := s.Counts()
	move(ctx, t, web.c, "fetch_api", 4242)
	move(ctx, t, carol.c, "filter_active", 17)
	if got := posX(ctx, t, src, "fetch_api"); got != 4242 {
		t.Errorf("fetch_api posX %v, want 4242 (alice's edit in her web editor)", got)
	}
	if got := posX(ctx, t, src, "filter_active"); got != 17 {
		t.Errorf("filter_active posX %v, want carol's 17", got)
	}
	if got := costOf(s, before); got.gets != 1 {
		t.Errorf("graph reads %d, want 1", got.gets)
	}
}

// TestDroppedSocketReloads: when the socket drops, the next read loads the graph
// again, with the edits made meanwhile.
func TestDroppedSocketReloads(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src := source(t, s, "tok-alice", &notices)
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	before := s.Counts()
	s.DropSockets()
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 999)
	if got := posX(ctx, t, src, "fetch_api"); got != 999 {
		t.Errorf("posX %v, want carol's 999", got)
	}
	if got := costOf(s, before); got.gets != 1 || got.sockets != 2 {
		t.Errorf("cost %+v, want one graph read and a new socket (and carol's)", got)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "socket") {
		t.Errorf("notices %q", notices)
	}
}

// TestConcurrentReads: reads from several goroutines while another user edits
// (run with -race) all succeed, on one load, and end on the last edit.
func TestConcurrentReads(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	carol := newEditor(t, s, "tok-carol")
	before := s.Counts()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := src.Snapshot(ctx, graphKey); err != nil {
					errs <- err
					return
				}
				v, err := src.View(ctx, graphKey)
				if err != nil {
					errs <- err
					return
				}
				if _, err := v.Neighborhood(ctx, graphKey, "fetch_api", 1, datasource.Any); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 10; i++ {
		move(ctx, t, carol.c, "fetch_api", float64(i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := posX(ctx, t, src, "fetch_api"); got != 10 {
		t.Errorf("posX %v, want the last edit's 10", got)
	}
	if got := costOf(s, before); got.gets != 1 || got.sockets != 1 {
		t.Errorf("cost %+v, want one load", got)
	}
}

// TestCloseEndsTheSocket: Close closes the socket, its reading goroutine ends,
// and the Source refuses reads after.
func TestCloseEndsTheSocket(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	base := runtime.NumGoroutine()
	src, err := server.New(server.Options{BaseURL: s.URL, WSURL: s.WSURL, Token: "tok-alice", AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if s.Open() != 1 {
		t.Fatalf("%d sockets open, want 1", s.Open())
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	// The stand-in sees the close and the goroutines end; wait for both
	// rather than for a time.
	deadline := time.Now().Add(10 * time.Second)
	for (s.Open() != 0 || runtime.NumGoroutine() > base) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.Open() != 0 {
		t.Errorf("%d sockets still open after Close", s.Open())
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
	if _, err := src.Snapshot(ctx, graphKey); err == nil {
		t.Error("a read after Close succeeded")
	}
}

// TestIdleSocketIsReleased: a graph nobody reads for IdleRelease has its socket
// closed (so the user's web editor gets the broadcasts again); the next read
// loads it again, without a notice.
func TestIdleSocketIsReleased(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src, err := server.New(server.Options{BaseURL: s.URL, WSURL: s.WSURL, Token: "tok-alice", AckTimeout: 5 * time.Second,
		IdleRelease: time.Millisecond, Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	before := s.Counts()
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Open() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.Open() != 0 {
		t.Fatal("the idle socket was not closed")
	}
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 31)
	if got := posX(ctx, t, src, "fetch_api"); got != 31 {
		t.Errorf("posX %v, want 31", got)
	}
	if got := costOf(s, before); got.gets != 2 {
		t.Errorf("cost %+v, want a second load", got)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
}

// TestUnusableMessageReloads: a broadcast the copy cannot apply, or a sheet
// message, makes the next read load the graph again.
func TestUnusableMessageReloads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame map[string]any
		says  string
	}{
		{"a deletion of a node the copy lacks", map[string]any{"type": "batchDeleteElements", "sheetId": "0", "nodeKeys": []string{"nope"}, "edgeKeys": []string{}}, "does not apply"},
		{"a sheet created", map[string]any{"type": "createSheet", "key": "2", "name": "new"}, "createSheet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := standIn(t)
			ctx := context.Background()
			var notices []string
			src := source(t, s, "tok-alice", &notices)
			if _, err := src.Snapshot(ctx, graphKey); err != nil {
				t.Fatal(err)
			}
			before := s.Counts()
			s.Send(graphKey, tc.frame)
			if _, err := src.Snapshot(ctx, graphKey); err != nil {
				t.Fatal(err)
			}
			if got := costOf(s, before); got.gets != 1 {
				t.Errorf("cost %+v, want the graph read again", got)
			}
			if len(notices) != 1 || !strings.Contains(notices[0], tc.says) {
				t.Errorf("notices %q, want one naming %q", notices, tc.says)
			}
		})
	}
}

// TestReleaseClosesTheSocket: Release (the agent's, at the end of a run) closes the
// editing socket at once, whatever the idle delay, and the next read loads again
// without a notice.
func TestReleaseClosesTheSocket(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src, err := server.New(server.Options{BaseURL: s.URL, WSURL: s.WSURL, Token: "tok-alice", AckTimeout: 5 * time.Second,
		IdleRelease: -1, Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	before := s.Counts()
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if s.Open() == 0 {
		t.Fatal("no socket open after a read")
	}
	src.Release()
	deadline := time.Now().Add(10 * time.Second)
	for s.Open() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s.Open() != 0 {
		t.Fatal("Release left the socket open")
	}
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if got := costOf(s, before); got.gets != 2 {
		t.Errorf("cost %+v, want a second load after the release", got)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
}

// TestFloodBetweenReadsIsNotKept: a server that sends more edits between two reads
// than one answer may hold (max_snapshot_bytes) is not kept in memory: the copy is
// loaded again at the next read, which says why.
func TestFloodBetweenReadsIsNotKept(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	var notices []string
	src, err := server.New(server.Options{BaseURL: s.URL, WSURL: s.WSURL, Token: "tok-alice", AckTimeout: 5 * time.Second,
		MaxBytes: 64 << 10, Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = fmt.Sprintf("flooded-node-%06d", i)
	}
	before := s.Counts()
	for range 3 {
		s.Send(graphKey, map[string]any{"type": "batchDeleteElements", "sheetId": "0", "nodeKeys": keys, "edgeKeys": []string{}})
	}
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	if got := costOf(s, before); got.gets != 1 {
		t.Errorf("cost %+v, want the graph read again", got)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "max_snapshot_bytes") {
		t.Errorf("notices %q, want one naming max_snapshot_bytes", notices)
	}
}
