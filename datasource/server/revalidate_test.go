package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestUnchangedGraphIsRevalidated: a server that sends an ETag (or Last-Modified)
// is asked conditionally; its 304 answers from the kept snapshot, and a changed
// graph is sent and used again.
func TestUnchangedGraphIsRevalidated(t *testing.T) {
	t.Parallel()
	for _, validator := range []string{"ETag", "Last-Modified"} {
		t.Run(validator, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			version, full, notModified := 1, 0, 0
			value := map[int]string{1: "\"v1\"", 2: "\"v2\""}
			if validator == "Last-Modified" {
				value = map[int]string{1: "Mon, 02 Jan 2026 15:04:05 GMT", 2: "Tue, 03 Jan 2026 15:04:05 GMT"}
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				cond := r.Header.Get("If-None-Match")
				if validator == "Last-Modified" {
					cond = r.Header.Get("If-Modified-Since")
				}
				if cond == value[version] {
					notModified++
					w.WriteHeader(http.StatusNotModified)
					return
				}
				full++
				w.Header().Set(validator, value[version])
				key := "n1"
				if version == 2 {
					key = "n2"
				}
				json.NewEncoder(w).Encode(map[string]any{
					"graph":  map[string]any{"_key": "g", "name": "G"},
					"sheets": map[string]any{"0": map[string]any{"nodes": []any{map[string]any{"_key": key, "type": "html"}}, "edges": []any{}}},
				})
			}))
			defer srv.Close()
			s, err := New(Options{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			keyOf := func() string {
				snap, err := s.Snapshot(context.Background(), "g")
				if err != nil {
					t.Fatal(err)
				}
				if len(snap.Nodes) != 1 {
					t.Fatalf("nodes %+v", snap.Nodes)
				}
				return snap.Nodes[0].Key
			}
			if k := keyOf(); k != "n1" {
				t.Fatalf("first read %s", k)
			}
			if k := keyOf(); k != "n1" {
				t.Fatalf("revalidated read %s", k)
			}
			mu.Lock()
			if full != 1 || notModified != 1 {
				t.Fatalf("%d full answers and %d 304s, want 1 and 1", full, notModified)
			}
			version = 2
			mu.Unlock()
			if k := keyOf(); k != "n2" {
				t.Fatalf("after a change: %s", k)
			}
			mu.Lock()
			defer mu.Unlock()
			if full != 2 {
				t.Fatalf("the changed graph was not fetched: %d full answers", full)
			}
		})
	}
}
