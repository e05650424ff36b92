package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nodius/nodius-ai/threads"
)

// FuzzImportExport: no document makes ParseDocument or Import panic; a document that
// imports exports again as a document that parses and imports, with the same id and
// as many messages.
func FuzzImportExport(f *testing.F) {
	for _, s := range []string{
		`{"_key":"ai_1_1","graphKey":"demo","workspace":"default","conversationHistory":[{"role":"system","content":"p"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"_key":"ai_1_2","graphKey":"demo","conversationHistory":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		`{"_key":"ai_1_3","graphKey":"demo","conversationHistory":[],"pendingInterrupt":{"toolCallId":"c"}}`,
		`{"_key":"","conversationHistory":null}`, `[]`, `{"_key":"x\u0000y","graphKey":"g","conversationHistory":[{"role":"user","content":"\u001b[2J"}]}`,
	} {
		f.Add([]byte(s))
	}
	s, err := threads.Open(context.Background(), filepath.Join(f.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
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
	})
}
