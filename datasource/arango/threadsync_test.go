package arango_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func threadDoc(key, graph string, updated int64, text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"_key": key, "graphKey": graph, "workspace": "ignored", "userId": "u1",
		"conversationHistory": []any{map[string]any{"role": "user", "content": text}},
		"pendingInterrupt":    nil, "createdTime": 1000, "lastUpdatedTime": updated,
	})
	return b
}

func TestThreadSyncLastWriterWins(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	ctx := ctxT(t)
	src := h.src

	tests := []struct {
		name    string
		doc     json.RawMessage
		written bool
	}{
		{"first push", threadDoc("t1", "g1", 2000, "hello"), true},
		{"same push again is a no-op", threadDoc("t1", "g1", 2000, "hello"), false},
		{"older copy loses", threadDoc("t1", "g1", 1500, "stale"), false},
		{"newer copy wins", threadDoc("t1", "g1", 3000, "hello again"), true},
		{"another thread", threadDoc("t2", "g1", 2500, "second"), true},
	}
	for _, tc := range tests {
		res, err := src.PushThread(ctx, tc.doc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Written != tc.written {
			t.Errorf("%s: written = %v, want %v (stored %d)", tc.name, res.Written, tc.written, res.Stored)
		}
	}
	docs, err := src.PullThreads(ctx, 0)
	if err != nil || len(docs) != 2 {
		t.Fatalf("pull = %d docs, %v", len(docs), err)
	}
	var first struct {
		Key       string `json:"_key"`
		GraphKey  string `json:"graphKey"`
		Workspace string `json:"workspace"`
		ID        string `json:"_id"`
		History   []struct {
			Content string `json:"content"`
		} `json:"conversationHistory"`
		Updated int64 `json:"lastUpdatedTime"`
	}
	if err := json.Unmarshal(docs[0], &first); err != nil {
		t.Fatal(err)
	}
	if first.Key != "t2" || first.GraphKey != "g1" || first.Workspace != testWS || first.ID != "" {
		t.Errorf("oldest pulled doc = %+v (want t2, the workspace of the source, no _id)", first)
	}
	later, err := src.PullThreads(ctx, 2500)
	if err != nil || len(later) != 1 {
		t.Errorf("pull since 2500 = %d docs, %v", len(later), err)
	}
	one, err := src.PullThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(one, &first); err != nil || first.History[0].Content != "hello again" || first.Updated != 3000 {
		t.Errorf("t1 = %+v, %v", first, err)
	}
	if _, err := src.PullThread(ctx, "nope"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("missing thread: %v", err)
	}
	if _, err := src.PushThread(ctx, json.RawMessage(`{"lastUpdatedTime": 1}`)); err == nil {
		t.Error("a document without _key was pushed")
	}
}
