package rag

import (
	"context"
	"reflect"
	"testing"
)

func TestProgressTellsTheStagesOfALoad(t *testing.T) {
	t.Parallel()
	var stages []string
	opts := Options{CacheTTL: -1, Progress: func(s string) { stages = append(stages, s) }}
	r := New(newFakeSource(chainSnapshot()), opts, nil)
	if _, err := r.Retrieve(context.Background(), "chain", "invoice"); err != nil {
		t.Fatal(err)
	}
	want := []string{"reading graph chain", "indexing 6 nodes", ""}
	if !reflect.DeepEqual(stages, want) {
		t.Fatalf("stages %q, want %q", stages, want)
	}
	stages = nil
	if _, err := r.Retrieve(context.Background(), "chain", "ledger"); err != nil {
		t.Fatal(err)
	}
	if len(stages) != 0 {
		t.Fatalf("an indexed graph reported %q", stages)
	}
}
