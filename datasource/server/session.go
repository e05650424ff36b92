package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// A chat is one session on the graph: it keeps its registration from the first
// question to the last (Hold), so the copy it follows takes in every other
// editor's edit as it is broadcast, and each question reads the graph as it is
// then, without loading it again. Commands that answer one question (ask,
// approve, reject) and the MCP server keep releasing the socket when a run ends
// and after DefaultIdleRelease without a read, for the reason given at
// Options.IdleRelease: while this client stays registered, a web editor of the
// same user opened after it misses other users' instruction edits until it
// reloads. A chat accepts that for its length, as a web editor left open does.

// session is what a Source keeps for a held session.
type session struct {
	hold atomic.Bool

	mu      sync.Mutex
	changed func(graphKey string) // told when another client's edit reaches a copy
	pending atomic.Bool           // a call of changed is on its way
}

// Hold keeps every graph's editing registration open until Close: Release does
// nothing and no idle countdown closes it. Call it before the first read.
func (s *Source) Hold() { s.sess.hold.Store(true) }

func (s *Source) held() bool { return s.sess.hold.Load() }

// OnChangedByOthers sets fn, told (on its own goroutine, calls coalesced while
// one is under way) when an edit another client made reaches the socket of a
// graph this Source follows: what a chat says in its header until the next
// question. The copy takes the edit in at the next read.
func (s *Source) OnChangedByOthers(fn func(graphKey string)) {
	s.sess.mu.Lock()
	s.sess.changed = fn
	s.sess.mu.Unlock()
}

// othersEdited tells the OnChangedByOthers function that another client edited
// graphKey. It never blocks the socket's reading goroutine.
func (s *Source) othersEdited(graphKey string) {
	s.sess.mu.Lock()
	fn := s.sess.changed
	s.sess.mu.Unlock()
	if fn == nil || !s.sess.pending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		s.sess.pending.Store(false)
		fn(graphKey)
	}()
}

// Version numbers the changes of a graph's copy (rag.Versioner): it makes the
// copy current first (see follower.current: a ping, the edits received applied,
// a reload when the copy cannot be trusted), so that a retriever keeps its index
// of the graph exactly as long as the graph is unchanged — a question asked after
// another editor's edit is answered on the graph with that edit. A graph of which
// only the saved state could be had is not followed: Version says so (an error)
// without reading it again, and the retriever falls back to its time limit,
// instead of loading the whole graph for the check and again for the read.
func (s *Source) Version(graphKey string) (uint64, error) {
	f, err := s.follow(graphKey)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	savedOnly := f.loaded && f.lk == nil
	f.mu.Unlock()
	if savedOnly {
		return 0, errNotLive
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if f, err = s.current(ctx, graphKey); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lk == nil {
		return 0, errNotLive
	}
	return f.version, nil
}

// errNotLive says a graph's copy is not followed live (only its saved state).
var errNotLive = errors.New("the graph is not followed live: only its saved state could be read")
