package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/threads/threadstest"
)

// TestImportExportRoundTrip: a document that imports exports again as a document
// that parses and imports, with the same id and as many messages, and the undo
// records of that export survive a second round trip; one that does not import is
// refused as invalid (or existing), never with another error. The document format
// alone is fuzzed in package threaddoc (FuzzRoundTrip); this runs its kinds of
// documents through the database.
func TestImportExportRoundTrip(t *testing.T) {
	docs := [][]byte{}
	for _, s := range []string{
		`{"_key":"ai_1_1","graphKey":"demo","workspace":"default","conversationHistory":[{"role":"system","content":"p"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"_key":"ai_1_2","graphKey":"demo","conversationHistory":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		`{"_key":"ai_1_3","graphKey":"demo","conversationHistory":[],"pendingInterrupt":{"toolCallId":"c"}}`,
		`{"_key":"","conversationHistory":null}`, `[]`, `{"_key":"x\u0000y","graphKey":"g","conversationHistory":[{"role":"user","content":"\u001b[2J"}]}`,
	} {
		docs = append(docs, []byte(s))
	}
	exported, err := os.ReadFile("threaddoc/testdata/exported_thread.json")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, exported)
	s, err := threads.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// A whole exported thread with two applied changes, the last one undone.
	th := newThread(t, s, "demo")
	threadstest.ApplyWithUndo(t, s, th, "c1", "first-node")
	threadstest.ApplyWithUndo(t, s, th, "c2", "second-node")
	threadstest.UndoLast(t, s, th, nil)
	seed, err := s.Export(context.Background(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(seed)
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, b)
	for i, data := range docs {
		t.Run(strconv.Itoa(i), func(t *testing.T) { roundTrip(t, s, data) })
	}
}

// roundTrip imports data, exports the thread, and imports and exports that again.
func roundTrip(t *testing.T, s *threads.Store, data []byte) {
	ctx := context.Background()
	doc, err := threads.ParseDocument(bytes.NewReader(data))
	if err != nil {
		return
	}
	th, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true})
	if err != nil {
		if !errors.Is(err, threads.ErrInvalid) && !errors.Is(err, threads.ErrExists) {
			t.Fatalf("Import of a parsed document: %v", err)
		}
		return
	}
	out, err := s.Export(ctx, th.ID)
	if err != nil {
		t.Fatalf("Export of an imported thread: %v", err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := threads.ParseDocument(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the export does not parse: %v\n%s", err, b)
	}
	if again.Key != doc.Key || len(again.ConversationHistory) != len(out.ConversationHistory) {
		t.Fatalf("round trip changed the thread: %q -> %q", doc.Key, again.Key)
	}
	if _, err := s.Import(ctx, again, threads.ImportOptions{Replace: true}); err != nil {
		t.Fatalf("the export does not import: %v", err)
	}
	out2, err := s.Export(ctx, th.ID)
	if err != nil {
		t.Fatalf("Export after the second import: %v", err)
	}
	u1, _ := json.Marshal(out.Local.Undos)
	u2, _ := json.Marshal(out2.Local.Undos)
	if !bytes.Equal(u1, u2) {
		t.Fatalf("the undo records changed on a second round trip:\n%s\n%s", u1, u2)
	}
}
