package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/threads/threadstest"
)

// A thread with two applied changes, the last one undone (leaving one step), goes
// through export and import with its undo records: what threads show prints is the
// same, the undone change is not offered again, and the other one still is, with its
// reversal and the key it was applied with.
func TestExportImportKeepsUndos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openStore(t)
	th := newThread(t, src, "demo")
	threadstest.ApplyWithUndo(t, src, th, "c1", "first-node")
	threadstest.ApplyWithUndo(t, src, th, "c2", "second-node")
	threadstest.UndoLast(t, src, th, []string{"edge e9 (the graph changed since)"})

	before, err := src.Transcript(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Undos) != 2 || before.Undos[0].State != convo.NotUndone || before.Undos[1].State != convo.Undone ||
		before.Undos[1].UndoneAt.IsZero() || len(before.Undos[1].Left) != 1 || before.Undos[0].Applied == nil {
		t.Fatalf("transcript undos = %+v", before.Undos)
	}
	doc, err := src.Export(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"version":2`)) || !bytes.Contains(raw, []byte(`"undos":[`)) {
		t.Fatalf("the export carries no versioned undo records:\n%s", raw)
	}

	for _, replace := range []bool{false, true} {
		dst := src
		if !replace {
			dst = openStore(t)
		}
		parsed, err := threads.ParseDocument(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Import(ctx, parsed, threads.ImportOptions{Replace: replace}); err != nil {
			t.Fatalf("import (replace %v): %v", replace, err)
		}
		after, err := dst.Transcript(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(before)
		b, _ := json.Marshal(after)
		if !bytes.Equal(a, b) {
			t.Errorf("import (replace %v) changed the thread:\n%s\n%s", replace, a, b)
		}
		u, err := dst.LastUndoable(ctx, th.ID)
		if err != nil || u == nil || u.ProposalID != "c1" || len(u.Reversal) == 0 || u.Action.CreateNode == nil || u.Action.CreateNode.NodeKey != "first-node" {
			t.Errorf("after import (replace %v) the change to undo is %+v, %v; want c1 with its reversal and key", replace, u, err)
		}
	}
}

// exportOneApplied is the export of a thread with one applied change (c1, creating
// first-node) and its undo record.
func exportOneApplied(t *testing.T) (convo.Thread, threads.Document) {
	t.Helper()
	src := openStore(t)
	th := newThread(t, src, "demo")
	threadstest.ApplyWithUndo(t, src, th, "c1", "first-node")
	doc, err := src.Export(context.Background(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	return th, doc
}

// An old export (no version, no undo records) still imports: its applied change is
// there, with nothing recorded to undo it.
func TestImportOldDocumentWithoutUndos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th, doc := exportOneApplied(t)
	doc.Local.Version, doc.Local.Undos = 0, nil
	raw, _ := json.Marshal(doc)
	if bytes.Contains(raw, []byte(`"undos"`)) || bytes.Contains(raw, []byte(`"version"`)) {
		t.Fatalf("not an old document: %s", raw)
	}
	dst := openStore(t)
	parsed, err := threads.ParseDocument(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Import(ctx, parsed, threads.ImportOptions{}); err != nil {
		t.Fatalf("an old document does not import: %v", err)
	}
	tr, err := dst.Transcript(ctx, th.ID)
	if err != nil || len(tr.Proposals) != 1 || tr.Proposals[0].Outcome != convo.Applied || len(tr.Undos) != 0 {
		t.Fatalf("imported old thread: %+v %v", tr, err)
	}
}

// Bad undo records are refused with one sentence naming the record, and nothing is
// written.
func TestImportRefusesBadUndos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, doc := exportOneApplied(t)
	good, _ := json.Marshal(doc)
	tests := []struct{ name, from, to, want string }{
		{"unknown proposal", `"proposal_id":"c1"`, `"proposal_id":"zz"`, `nodiusAi.undos[0] is for proposal "zz", which the thread does not have`},
		{"no op", `"proposal_id":"c1","op_id":"op-c1"`, `"proposal_id":"c1","op_id":""`, "nodiusAi.undos[0] names no op_id"},
		{"unknown step", `"op":"remove_node"`, `"op":"drop_table"`, `nodiusAi.undos[0].reversal cannot be used: steps[0]: unknown operation "drop_table"`},
		{"no key", `"op":"remove_node","key":"first-node"`, `"op":"remove_node","key":""`, "steps[0]: step \"remove_node\" names no key"},
		{"not steps", `"reversal":{"steps":[`, `"reversal":{"stepz":[`, "nodiusAi.undos[0].reversal cannot be used: not a reversal"},
		{"bad state", `"proposal_id":"c1",`, `"proposal_id":"c1","state":"half",`, `has state "half"`},
		{"undone without time", `"proposal_id":"c1",`, `"proposal_id":"c1","state":"undone",`, "is undone but has no undone_at"},
		{"newer version", `"version":2`, `"version":3`, "nodiusAi.version is 3, newer than this nodius-ai reads (2): update nodius-ai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(string(good), tt.from, tt.to, 1)
			if bad == string(good) {
				t.Fatalf("fixture: %s not in %s", tt.from, good)
			}
			dst := openStore(t)
			_, err := threads.ParseDocument(strings.NewReader(bad))
			if !errors.Is(err, threads.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseDocument: %v, want ErrInvalid with %q", err, tt.want)
			}
			var d threads.Document
			if err := json.Unmarshal([]byte(bad), &d); err != nil {
				t.Fatal(err)
			}
			if _, err := dst.Import(ctx, d, threads.ImportOptions{}); !errors.Is(err, threads.ErrInvalid) {
				t.Fatalf("Import: %v, want ErrInvalid", err)
			}
			if ts, _ := dst.List(ctx, threads.ListOptions{All: true}); len(ts) != 0 {
				t.Fatalf("a refused import wrote %d threads", len(ts))
			}
		})
	}
}

// An imported undo record is checked against the change it belongs to: steps that
// reverse anything else, or an applied action that is not the proposal's, are
// refused — undo would otherwise remove other nodes "created by the change".
func TestImportRefusesUndoRecordsOfAnotherChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		edit func(d *threads.Document)
		want string
	}{
		{"a step removing another node", func(d *threads.Document) {
			d.Local.Undos[0].Reversal = json.RawMessage(`{"steps":[{"op":"remove_node","key":"fetch-api"},{"op":"remove_node","key":"first-node"}]}`)
		}, "not part of the change"},
		{"a step overwriting another node", func(d *threads.Document) {
			d.Local.Undos[0].Reversal = json.RawMessage(`{"steps":[{"op":"restore_fields","key":"root","before":{"process":"evil()"}}]}`)
		}, "not part of the change"},
		{"an applied action of its own", func(d *threads.Document) {
			a := *d.Local.Undos[0].Applied
			p := *a.CreateNode
			p.NodeKey = "fetch-api"
			a.CreateNode = &p
			d.Local.Undos[0].Applied = &a
			d.Local.Undos[0].Reversal = json.RawMessage(`{"steps":[{"op":"remove_node","key":"fetch-api"}]}`)
		}, "applied_action is not the action of proposal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, doc := exportOneApplied(t)
			tt.edit(&doc)
			raw, _ := json.Marshal(doc)
			if _, err := threads.ParseDocument(bytes.NewReader(raw)); !errors.Is(err, threads.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseDocument: %v, want ErrInvalid with %q", err, tt.want)
			}
			dst := openStore(t)
			if _, err := dst.Import(ctx, doc, threads.ImportOptions{}); !errors.Is(err, threads.ErrInvalid) {
				t.Fatalf("Import: %v, want ErrInvalid", err)
			}
		})
	}
}

// threads import --replace cannot swap the action behind a proposal id the thread
// already has, nor make a decided proposal pending again: approve would apply
// something else than what was shown, or apply a change twice.
func TestImportReplaceKeepsProposalsAsDecided(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	swap := func(a *datasource.Action) {
		p := *a.CreateNode
		p.TypeKey = "evil-node"
		a.CreateNode = &p
	}
	t.Run("a pending proposal's action", func(t *testing.T) {
		t.Parallel()
		s := openStore(t)
		th := newThread(t, s, "demo")
		if err := s.SaveMessage(ctx, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, ToolCalls: []convo.ToolCall{
			{ID: "p1", Name: "propose_create_node", Arguments: `{"typeKey":"log-node","sheet":"0"}`}}}); err != nil {
			t.Fatal(err)
		}
		action := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{TypeKey: "log-node", Sheet: "0"}}
		if err := s.SaveProposal(ctx, convo.Proposal{ID: "p1", ThreadID: th.ID, ToolCallID: "p1", Tool: "propose_create_node",
			Action: action, Digest: convo.ActionDigest(action), Decision: convo.Pending}); err != nil {
			t.Fatal(err)
		}
		doc, err := s.Export(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		swap(&doc.Local.Proposals[0].Action)
		swap(&doc.PendingInterrupt.ProposedAction)
		if _, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "p1") {
			t.Fatalf("import --replace swapping the action of p1: %v, want refused", err)
		}
		doc.Local = nil // the server's form of the document says the same
		if _, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true}); err == nil {
			t.Fatal("import --replace of the server document swapping the action of p1 succeeded")
		}
		p, err := s.PendingProposal(ctx, th.ID)
		if err != nil || p == nil || p.Action.CreateNode.TypeKey != "log-node" {
			t.Fatalf("the pending proposal after refused imports: %+v %v", p, err)
		}
	})
	t.Run("a decided proposal made pending", func(t *testing.T) {
		t.Parallel()
		s := openStore(t)
		th := newThread(t, s, "demo")
		threadstest.ApplyWithUndo(t, s, th, "c1", "first-node")
		tr, err := s.Transcript(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		p := &tr.Proposals[0]
		p.Decision, p.Outcome, p.Result, p.OpID = convo.Pending, convo.OutcomeNone, nil, ""
		tr.Undos = nil
		doc := threads.DocumentOf(tr)
		if _, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "c1") {
			t.Fatalf("import --replace reopening c1: %v, want refused", err)
		}
		if u, err := s.LastUndoable(ctx, th.ID); err != nil || u == nil || u.ProposalID != "c1" {
			t.Fatalf("c1 after a refused import: %+v %v", u, err)
		}
	})
}
