package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/threads"
)

// serverFields are the 18 top-level fields the real server's thread store writes on
// every save: a document missing one reads differently in the web chat's list.
var serverFields = []string{"_key", "graphKey", "workspace", "userId", "contextType", "title", "conversationHistory",
	"pendingInterrupt", "totalPromptTokens", "totalCompletionTokens", "totalTokens", "totalCost", "provider", "model",
	"messageCount", "toolCallCount", "createdTime", "lastUpdatedTime"}

// TestServerThreadDocuments: every document the real server wrote (testdata/
// serverdocs, recorded) imports; a pending proposal becomes a pending proposal with
// its action, a pending tool limit none; and the document exported again has every
// field the server writes, pendingInterrupt written as null when nothing waits.
func TestServerThreadDocuments(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/serverdocs/*.json")
	if len(files) < 14 {
		t.Fatalf("%d recorded documents, want 14", len(files))
	}
	ctx := context.Background()
	s := openStore(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := threads.ParseDocument(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		th, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true})
		if err != nil {
			t.Errorf("%s: import: %v", filepath.Base(f), err)
			continue
		}
		p, err := s.PendingProposal(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Base(f) {
		case "03-pending-proposal.json":
			if p == nil || p.Tool != "propose_create_node" || p.Action.Type != "create_node" {
				t.Errorf("03: pending proposal %+v", p)
			}
		default:
			if p != nil {
				t.Errorf("%s: a proposal is pending: %+v", filepath.Base(f), p)
			}
		}
		out, err := s.Export(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(out)
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		for _, k := range serverFields {
			if _, ok := fields[k]; !ok {
				t.Errorf("%s: exported document lacks %q", filepath.Base(f), k)
			}
		}
		if p == nil && string(fields["pendingInterrupt"]) != "null" {
			t.Errorf("%s: pendingInterrupt = %s, want null", filepath.Base(f), fields["pendingInterrupt"])
		}
		if p != nil {
			var in map[string]json.RawMessage
			_ = json.Unmarshal(fields["pendingInterrupt"], &in)
			for _, k := range []string{"kind", "toolCallId", "toolName", "args"} {
				if _, ok := in[k]; !ok || slices.Contains([]string{`""`, "null"}, string(in[k])) {
					t.Errorf("%s: pendingInterrupt.%s = %s (the server resumes from it)", filepath.Base(f), k, in[k])
				}
			}
		}
	}
}
