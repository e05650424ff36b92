package server

import (
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/nodius/nodius-ai/datasource"
)

// errNotModified is a 304 answer to a conditional request.
var errNotModified = errors.New("not modified")

// revalidator keeps, per graph, the last snapshot the server sent with a validator
// (ETag or Last-Modified). It is the Source's own, safe for concurrent use.
type revalidator struct {
	mu   sync.Mutex
	last map[string]*validatedSnapshot
}

type validatedSnapshot struct {
	etag, lastModified string
	snap               datasource.Snapshot
}

// copy returns the snapshot with its own slices, so a caller that changes them
// does not change what is kept.
func (v *validatedSnapshot) copy() datasource.Snapshot {
	s := v.snap
	s.Nodes = slices.Clone(s.Nodes)
	s.Edges = slices.Clone(s.Edges)
	s.Configs = slices.Clone(s.Configs)
	return s
}

// conditions returns the kept snapshot of a graph and the headers that make the
// next request conditional on it (none when nothing is kept).
func (r *revalidator) conditions(graphKey string) (*validatedSnapshot, http.Header) {
	r.mu.Lock()
	v := r.last[graphKey]
	r.mu.Unlock()
	if v == nil {
		return nil, nil
	}
	h := http.Header{}
	if v.etag != "" {
		h.Set("If-None-Match", v.etag)
	}
	if v.lastModified != "" {
		h.Set("If-Modified-Since", v.lastModified)
	}
	return v, h
}

// remember keeps a snapshot the server sent with a validator, and forgets the
// graph's kept one when it sent none.
func (r *revalidator) remember(graphKey string, h http.Header, snap datasource.Snapshot) {
	etag, lm := h.Get("ETag"), h.Get("Last-Modified")
	r.mu.Lock()
	defer r.mu.Unlock()
	if etag == "" && lm == "" {
		delete(r.last, graphKey)
		return
	}
	v := &validatedSnapshot{etag: etag, lastModified: lm}
	v.snap = snap
	v.snap.Nodes = slices.Clone(snap.Nodes)
	v.snap.Edges = slices.Clone(snap.Edges)
	v.snap.Configs = slices.Clone(snap.Configs)
	r.last[graphKey] = v
}
