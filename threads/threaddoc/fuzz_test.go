package threaddoc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/nodius/nodius-ai/threads/threaddoc"
)

// FuzzRoundTrip: no document makes Parse panic or fail with anything but ErrInvalid,
// and a document that parses encodes (as threads export writes it) to one that
// parses again, with the same id, history, pending proposal and undo records, and
// encodes to the same bytes. Package threads runs the same round trip through the
// database (TestImportExportRoundTrip).
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"_key":"ai_1_1","graphKey":"demo","workspace":"default","conversationHistory":[{"role":"system","content":"p"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"_key":"ai_1_2","graphKey":"demo","conversationHistory":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		`{"_key":"ai_1_3","graphKey":"demo","conversationHistory":[],"pendingInterrupt":{"toolCallId":"c"}}`,
		`{"_key":"ai_1_4","graphKey":"g","conversationHistory":[{"role":"assistant","toolCalls":[{"id":"c","function":{"name":"propose_delete_node"}}]},{"role":"tool","toolCallId":"c","content":[{"type":"text","text":"a"},{"text":"b"}]}],"pendingInterrupt":{"toolCallId":"c","proposedAction":{"type":"delete_node","nodeKey":"n"}}}`,
		`{"_key":"","conversationHistory":null}`, `[]`, `{"_key":"x\u0000y","graphKey":"g","conversationHistory":[{"role":"user","content":"\u001b[2J"}]}`,
	} {
		f.Add([]byte(s))
	}
	// A whole exported thread: two applied changes, the last one undone.
	exported, err := os.ReadFile("testdata/exported_thread.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(exported)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := threaddoc.Parse(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, threaddoc.ErrInvalid) {
				t.Fatalf("Parse failed without ErrInvalid: %v", err)
			}
			return
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("a parsed document does not encode: %v", err)
		}
		again, err := threaddoc.Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the encoded document does not parse: %v\n%s", err, out)
		}
		if again.Key != doc.Key || len(again.ConversationHistory) != len(doc.ConversationHistory) ||
			(again.PendingInterrupt == nil) != (doc.PendingInterrupt == nil) {
			t.Fatalf("the round trip changed the thread:\n%s", out)
		}
		if doc.Local != nil {
			u1, _ := json.Marshal(doc.Local.Undos)
			u2, _ := json.Marshal(again.Local.Undos)
			if !bytes.Equal(u1, u2) {
				t.Fatalf("the undo records changed:\n%s\n%s", u1, u2)
			}
		}
		out2, err := json.Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("a second round trip encodes differently (%v):\n%s\n%s", err, out, out2)
		}
	})
}
