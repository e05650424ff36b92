package file_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
)

func TestSetEmbeddings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		graph    string
		updates  map[string]embedding.Update
		wantErr  bool
		wantB    []float32
		wantHash string
	}{
		{"sets vector and hash", "g1", map[string]embedding.Update{"b": {Vector: []float32{1, 0, 0}, Hash: "m@x"}}, false, []float32{1, 0, 0}, "m@x"},
		{"unknown node keys are ignored", "g1", map[string]embedding.Update{"gone": {Vector: []float32{1}, Hash: "m@y"}}, false, []float32{0.5, 0.25}, ""},
		{"nothing to do", "g1", nil, false, []float32{0.5, 0.25}, ""},
		{"unknown graph", "nope", map[string]embedding.Update{"b": {Vector: []float32{1}, Hash: "h"}}, true, []float32{0.5, 0.25}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := writeFile(t, rich, 0o644)
			src, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			err = src.SetEmbeddings(ctx, tc.graph, tc.updates)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			// What a fresh reader of the file sees, and what the open source serves.
			again, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*file.Source{src, again} {
				n, err := s.Node(ctx, "g1", "b")
				if err != nil {
					t.Fatal(err)
				}
				if !equalVec(n.Embedding, tc.wantB) || embedding.StoredHash(n) != tc.wantHash {
					t.Errorf("node b = %v %q, want %v %q", n.Embedding, embedding.StoredHash(n), tc.wantB, tc.wantHash)
				}
			}
			var m map[string]json.RawMessage
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &m); err != nil || m["schemaVersion"] == nil {
				t.Errorf("file after SetEmbeddings: %v, %s", err, data)
			}
		})
	}
}

func TestSetEmbeddingsCancelled(t *testing.T) {
	t.Parallel()
	path := writeFile(t, rich, 0o644)
	before, _ := os.ReadFile(path)
	src, err := file.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.SetEmbeddings(ctx, "g1", map[string]embedding.Update{"a": {Vector: []float32{1}, Hash: "h"}}); err == nil {
		t.Fatal("a cancelled context wrote embeddings")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the file changed although the call failed")
	}
}

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
