package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag"
)

var _ rag.Versioner = sourceVersioner(nil)

type sourceVersioner interface {
	Version(string) (uint64, error)
}

// TestHeldSessionFollowsOthers: a held source (a chat) keeps its registration
// through Release; another editor's edit between two reads is told to
// OnChangedByOthers, changes the Version, and is in the next read without
// loading the graph again.
func TestHeldSessionFollowsOthers(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	src.Hold()
	told := make(chan string, 4)
	src.OnChangedByOthers(func(g string) { told <- g })
	if _, err := src.Snapshot(ctx, graphKey); err != nil {
		t.Fatal(err)
	}
	v1, err := src.Version(graphKey)
	if err != nil {
		t.Fatal(err)
	}
	src.Release() // what the agent does when a run ends
	carol := newEditor(t, s, "tok-carol")
	move(ctx, t, carol.c, "fetch_api", 777)
	select {
	case g := <-told:
		if g != graphKey {
			t.Errorf("told about %q", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not told of carol's edit")
	}
	v2, err := src.Version(graphKey)
	if err != nil || v2 == v1 {
		t.Fatalf("version %d then %d (%v): the change is not seen", v1, v2, err)
	}
	snap, err := src.Snapshot(ctx, graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := nodeOf(t, snap, "fetch_api"); n.PosX != 777 {
		t.Errorf("fetch_api at x=%v, want carol's 777", n.PosX)
	}
	if c := s.Counts(); c.GraphGets != 1 || c.Registrations != 2+2 { // ours (2 sheets) and carol's (2)
		t.Errorf("graph reads %d, registrations %d: the session did not keep its registration", c.GraphGets, c.Registrations)
	}
	v3, _ := src.Version(graphKey)
	if v3 != v2 {
		t.Errorf("version moved from %d to %d with no change", v2, v3)
	}
}

// TestReleasedWithoutHold: without Hold (ask, approve), Release closes the
// registration and the next read loads the graph again, as before.
func TestReleasedWithoutHold(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	if _, err := datasource.LoadSnapshot(ctx, src, graphKey); err != nil {
		t.Fatal(err)
	}
	src.Release()
	if _, err := datasource.LoadSnapshot(ctx, src, graphKey); err != nil {
		t.Fatal(err)
	}
	if c := s.Counts(); c.GraphGets != 2 {
		t.Errorf("graph reads %d, want 2", c.GraphGets)
	}
}

// TestVersionOfASavedStateOnly: a graph of which only the saved state can be had
// (no socket) is not versioned, and checking it reads nothing.
func TestVersionOfASavedStateOnly(t *testing.T) {
	s := standIn(t)
	src := sourceAt(t, s, noSocket, "tok-alice", nil)
	if _, err := src.Version(graphKey); err == nil {
		t.Fatal("a saved state only has a version")
	}
	before := s.Counts().GraphGets
	if _, err := src.Version(graphKey); err == nil || s.Counts().GraphGets != before {
		t.Fatalf("err %v; graph reads %d then %d", err, before, s.Counts().GraphGets)
	}
}
