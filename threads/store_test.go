package threads_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads"
)

// The agent persists through threads.Store; this fails to compile if they drift.
var _ agent.Store = (*threads.Store)(nil)

func openStore(t testing.TB) *threads.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "data", "threads.db"))
}

func openAt(t testing.TB, path string) *threads.Store {
	t.Helper()
	s, err := threads.Open(context.Background(), path, threads.Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newThread(t testing.TB, s *threads.Store, graph string) convo.Thread {
	t.Helper()
	th, err := s.CreateThread(context.Background(), convo.Thread{GraphKey: graph, Workspace: "default", Provider: "deepseek", Model: "deepseek-chat"})
	if err != nil {
		t.Fatalf("CreateThread: %v", err)
	}
	return th
}

func save(t testing.TB, s *threads.Store, m *convo.Message) {
	t.Helper()
	if err := s.SaveMessage(context.Background(), m); err != nil {
		t.Fatalf("SaveMessage(%s %q): %v", m.Role, m.Content, err)
	}
}

func createNode(key string) datasource.Action {
	return datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: key, TypeKey: "api-call", Sheet: "0"}}
}

// fullTurn stores one question with a read tool call and a proposal, the way the
// agent does, step by step. It returns the proposal, still pending.
func fullTurn(t testing.TB, s *threads.Store, th convo.Thread, question string) convo.Proposal {
	t.Helper()
	ctx := context.Background()
	id := th.ID
	save(t, s, &convo.Message{ThreadID: id, Role: convo.System, Kind: convo.KindContext, Content: "[context]\nnodes[1]: fetch-api"})
	save(t, s, &convo.Message{ThreadID: id, Role: convo.User, Content: question})
	a := &convo.Message{ThreadID: id, Role: convo.Assistant, Status: convo.Streaming, Content: "Let me"}
	save(t, s, a)
	a.Content = "Let me look."
	save(t, s, a)
	read := convo.ToolCall{ID: id + "_r", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}
	prop := convo.ToolCall{ID: id + "_p", Name: "propose_create_node", Arguments: `{"typeKey":"api-call","sheet":"0","reason":"cache"}`}
	a.Status, a.ToolCalls = convo.Complete, []convo.ToolCall{read, prop}
	a.Usage = convo.Usage{PromptTokens: 1000, CompletionTokens: 50, CachedTokens: 200, CostUSD: 0.001}
	save(t, s, a)
	res := &convo.Message{ThreadID: id, Role: convo.Tool, ToolCallID: read.ID, Name: read.Name, Content: `{"key":"fetch-api"}`}
	if err := s.SaveToolResult(ctx, res, convo.ToolRun{ThreadID: id, ToolCallID: read.ID, Name: read.Name, Status: convo.RunCompleted, StartedAt: time.Now().Add(-12 * time.Millisecond), FinishedAt: time.Now()}); err != nil {
		t.Fatalf("SaveToolResult: %v", err)
	}
	p := convo.Proposal{ID: prop.ID, ThreadID: id, ToolCallID: prop.ID, Tool: prop.Name, Action: createNode("cache-node"), Reason: "add a cache", Decision: convo.Pending}
	if err := s.SaveProposal(ctx, p); err != nil {
		t.Fatalf("SaveProposal: %v", err)
	}
	return p
}

func decide(t testing.TB, s *threads.Store, p convo.Proposal, approve bool) {
	t.Helper()
	p.Decision = convo.Rejected
	content := `{"status":"rejected","message":"Action refused"}`
	if approve {
		p.Decision = convo.Approved
		p.Result = &datasource.ApplyResult{Applied: true, Created: datasource.Created{Nodes: []string{"cache-node"}, Edges: []string{}}}
		content = `{"status":"approved","created":{"nodes":["cache-node"]}}`
	}
	msg := &convo.Message{Role: convo.Tool, Content: content}
	if err := s.DecideProposal(context.Background(), p, msg); err != nil {
		t.Fatalf("DecideProposal: %v", err)
	}
	if msg.ID == 0 {
		t.Fatal("DecideProposal did not set the tool message id")
	}
}

func TestOpenFilesAndPragmas(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "nodius-ai")
	path := filepath.Join(dir, "threads.db")
	s := openAt(t, path)
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode = %v, want 0700", st.Mode().Perm())
	}
	st, err = os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", st.Mode().Perm())
	}
	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var v int64
	if err := db.QueryRow("SELECT max(version_id) FROM goose_db_version").Scan(&v); err != nil || v != threads.SchemaVersion() {
		t.Errorf("schema version = %d, %v; want %d", v, err, threads.SchemaVersion())
	}
	// Reopening an up-to-date database is fine.
	_ = s.Close()
	openAt(t, path)
}

// rawDB opens the file directly, for checks the API does not expose.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestThreadIDs(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	re := regexp.MustCompile(`^ai_[0-9a-hjkmnp-tv-z]{8}$`)
	seen := map[string]bool{}
	for range 50 {
		th := newThread(t, s, "demo")
		if !re.MatchString(th.ID) {
			t.Fatalf("id %q is not ai_ and 8 base32 characters", th.ID)
		}
		if seen[th.ID] {
			t.Fatalf("id %q given twice", th.ID)
		}
		seen[th.ID] = true
	}
	_, err := s.CreateThread(context.Background(), convo.Thread{ID: "ai_1_1", GraphKey: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateThread(context.Background(), convo.Thread{ID: "ai_1_1", GraphKey: "demo"})
	if !errors.Is(err, threads.ErrExists) {
		t.Errorf("duplicate id: err = %v, want ErrExists", err)
	}
	for _, bad := range []convo.Thread{{GraphKey: ""}, {ID: "has space", GraphKey: "g"}, {ID: "a/b", GraphKey: "g"}, {GraphKey: "g", Status: "weird"}} {
		if _, err := s.CreateThread(context.Background(), bad); !errors.Is(err, threads.ErrInvalid) {
			t.Errorf("CreateThread(%+v): err = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestAgentSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.System, Kind: convo.KindPrompt, Content: "You are the Nodius assistant."})
	p := fullTurn(t, s, th, "What does fetch-api do?\nAnd why?")

	got, err := s.PendingProposal(ctx, th.ID)
	if err != nil || got == nil {
		t.Fatalf("PendingProposal = %v, %v", got, err)
	}
	if got.Tool != "propose_create_node" || got.Action.CreateNode == nil || got.Action.CreateNode.NodeKey != "cache-node" || got.Reason != "add a cache" {
		t.Errorf("pending proposal = %+v", got)
	}
	decide(t, s, p, true)
	if got, _ := s.PendingProposal(ctx, th.ID); got != nil {
		t.Errorf("still pending after the decision: %+v", got)
	}
	// A decided proposal cannot be decided again, the same way or not: the second
	// decider is told it was already decided (it must not apply anything).
	p.Decision = convo.Approved
	if err := s.DecideProposal(ctx, p, nil); !errors.Is(err, threads.ErrDecided) {
		t.Errorf("re-deciding the same way: err = %v, want ErrDecided", err)
	}
	p.Decision = convo.Rejected
	if err := s.DecideProposal(ctx, p, nil); !errors.Is(err, threads.ErrDecided) {
		t.Errorf("re-deciding differently: err = %v, want ErrDecided", err)
	}
	final := &convo.Message{ThreadID: th.ID, Role: convo.Assistant, Content: "Done: cache-node added.", Usage: convo.Usage{PromptTokens: 1100, CompletionTokens: 20, CostUSD: 0.0005}}
	save(t, s, final)
	save(t, s, final) // a replayed step: an update whose usage is already counted

	tt, err := s.Thread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tt.Title != "What does fetch-api do?" {
		t.Errorf("title = %q", tt.Title)
	}
	if tt.MessageCount != 3 {
		t.Errorf("message count = %d, want 3 (user, assistant, assistant)", tt.MessageCount)
	}
	want := convo.Usage{PromptTokens: 2100, CompletionTokens: 70, CachedTokens: 200, CostUSD: 0.0015}
	if tt.Usage.PromptTokens != want.PromptTokens || tt.Usage.CompletionTokens != want.CompletionTokens ||
		tt.Usage.CachedTokens != want.CachedTokens || fmt.Sprintf("%.6f", tt.Usage.CostUSD) != fmt.Sprintf("%.6f", want.CostUSD) {
		t.Errorf("usage = %+v, want %+v (updates add only the difference)", tt.Usage, want)
	}

	h, err := s.History(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range h {
		roles = append(roles, string(m.Role)+":"+string(m.Kind))
		if m.ThreadID != th.ID {
			t.Errorf("message %d belongs to %q", m.ID, m.ThreadID)
		}
	}
	wantRoles := []string{"system:prompt", "system:context", "user:", "assistant:", "tool:", "tool:", "assistant:"}
	if !reflect.DeepEqual(roles, wantRoles) {
		t.Errorf("history roles = %v, want %v", roles, wantRoles)
	}
	if h[3].Content != "Let me look." || len(h[3].ToolCalls) != 2 || h[3].Status != convo.Complete {
		t.Errorf("assistant message = %+v", h[3])
	}
	if h[5].ToolCallID != p.ToolCallID || !strings.Contains(h[5].Content, "approved") {
		t.Errorf("decision tool message = %+v", h[5])
	}

	runs, err := s.ToolRuns(ctx, th.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("ToolRuns = %+v, %v", runs, err)
	}
	for _, r := range runs {
		if r.Status != convo.RunCompleted || r.Result == "" || r.Arguments == "" {
			t.Errorf("run %+v: want completed with arguments and result", r)
		}
	}
	created, err := s.Created(ctx, th.ID)
	if err != nil || len(created) != 1 || created[0].Key != "cache-node" || created[0].Graph != "demo" {
		t.Errorf("Created = %+v, %v", created, err)
	}
	// Auto-approve is kept on the thread.
	if err := s.SetAutoApprove(ctx, th.ID, []string{"create_node"}); err != nil {
		t.Fatal(err)
	}
	if tt, _ := s.Thread(ctx, th.ID); len(tt.AutoApprove) != 1 || tt.AutoApprove[0] != datasource.CreateNodeAction {
		t.Errorf("AutoApprove = %v", tt.AutoApprove)
	}
}

func TestSaveToolResultIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "q"})
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c1", Name: "search_nodes", Arguments: "{}"}}})
	first := &convo.Message{ThreadID: th.ID, ToolCallID: "c1", Content: "r1"}
	if err := s.SaveToolResult(ctx, first, convo.ToolRun{Name: "search_nodes"}); err != nil {
		t.Fatal(err)
	}
	again := &convo.Message{ThreadID: th.ID, ToolCallID: "c1", Content: "r1"}
	if err := s.SaveToolResult(ctx, again, convo.ToolRun{Name: "search_nodes"}); err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Seq != first.Seq {
		t.Errorf("replayed result got id %d seq %d, want %d %d", again.ID, again.Seq, first.ID, first.Seq)
	}
	msgs, _ := s.Messages(ctx, th.ID)
	if len(msgs) != 3 {
		t.Errorf("%d messages after a replay, want 3", len(msgs))
	}
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	a := newThread(t, s, "demo")
	b := newThread(t, s, "demo")
	for i := range 20 {
		for _, th := range []convo.Thread{a, b} {
			save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: fmt.Sprintf("%s question %d", th.ID, i)})
			save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, Content: fmt.Sprintf("%s answer %d", th.ID, i),
				ToolCalls: []convo.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "search_nodes", Arguments: "{}"}}})
			// Same tool call ids in both threads: still each its own.
			if err := s.SaveToolResult(ctx, &convo.Message{ThreadID: th.ID, ToolCallID: fmt.Sprintf("call_%d", i), Content: th.ID + " result"}, convo.ToolRun{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pair := range [][2]convo.Thread{{a, b}, {b, a}} {
		own, other := pair[0], pair[1]
		h, err := s.History(ctx, own.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 60 {
			t.Errorf("thread %s: %d messages, want 60", own.ID, len(h))
		}
		for _, m := range h {
			if m.ThreadID != own.ID || strings.Contains(m.Content, other.ID) || !strings.Contains(m.Content, own.ID) {
				t.Fatalf("thread %s sees %+v", own.ID, m)
			}
		}
		runs, _ := s.ToolRuns(ctx, own.ID)
		for _, r := range runs {
			if r.ThreadID != own.ID || strings.Contains(r.Result, other.ID) {
				t.Fatalf("thread %s sees run %+v", own.ID, r)
			}
		}
	}
}

func TestHistoryRepair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	id := th.ID
	save(t, s, &convo.Message{ThreadID: id, Role: convo.User, Content: "q1"})
	save(t, s, &convo.Message{ThreadID: id, Role: convo.Assistant, ToolCalls: []convo.ToolCall{
		{ID: "a", Name: "search_nodes", Arguments: "{}"}, {ID: "b", Name: "read_node_detail", Arguments: "{}"}}})
	// Only b got a result before the process died; an orphan result was also left.
	if err := s.SaveToolResult(ctx, &convo.Message{ThreadID: id, ToolCallID: "b", Content: "rb"}, convo.ToolRun{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToolResult(ctx, &convo.Message{ThreadID: id, ToolCallID: "ghost", Content: "orphan"}, convo.ToolRun{}); err != nil {
		t.Fatal(err)
	}
	save(t, s, &convo.Message{ThreadID: id, Role: convo.User, Content: "q2"})
	save(t, s, &convo.Message{ThreadID: id, Role: convo.Assistant, Status: convo.Streaming, Content: "partial ans"})
	save(t, s, &convo.Message{ThreadID: id, Role: convo.Assistant, Status: convo.Streaming}) // died before a token

	h, err := s.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ role, callID, content, status string }
	var got []row
	for _, m := range h {
		got = append(got, row{string(m.Role), m.ToolCallID, m.Content, string(m.Status)})
	}
	want := []row{
		{"user", "", "q1", "complete"},
		{"assistant", "", "", "complete"},
		{"tool", "a", threads.InterruptedResult, "interrupted"},
		{"tool", "b", "rb", "complete"},
		{"user", "", "q2", "complete"},
		{"assistant", "", "partial ans", "interrupted"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("repaired history:\n got %v\nwant %v", got, want)
	}
	assertValid(t, h)
}

// assertValid checks what every provider requires: each tool message answers a call
// of the assistant message right before its run of tool messages, every call is
// answered, no assistant message is empty.
func assertValid(t testing.TB, h []convo.Message) {
	t.Helper()
	var open []string
	for i, m := range h {
		switch m.Role {
		case convo.Tool:
			if len(open) == 0 || open[0] != m.ToolCallID {
				t.Fatalf("message %d: tool result %q out of place (expecting %v)", i, m.ToolCallID, open)
			}
			open = open[1:]
		default:
			if len(open) > 0 {
				t.Fatalf("message %d: calls %v left without results", i, open)
			}
			if m.Role == convo.Assistant {
				if m.Content == "" && len(m.ToolCalls) == 0 {
					t.Fatalf("message %d: empty assistant message", i)
				}
				for _, c := range m.ToolCalls {
					open = append(open, c.ID)
				}
			}
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v left without results at the end", open)
	}
}

func TestRepairMovesLateResults(t *testing.T) {
	t.Parallel()
	msgs := []convo.Message{
		{Role: convo.User, Content: "q"},
		{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "p", Name: "propose_create_node"}, {ID: "r", Name: "search_nodes"}}},
		{Role: convo.Tool, ToolCallID: "r", Content: "early?"}, // answered before p: reordered
		{Role: convo.User, Content: "meanwhile"},
		{Role: convo.Tool, ToolCallID: "p", Content: "approved"},
		{Role: convo.Tool, ToolCallID: "p", Content: "duplicate"},
	}
	h := threads.Repair(msgs, nil)
	var got []string
	for _, m := range h {
		got = append(got, string(m.Role)+"/"+m.Content)
	}
	want := []string{"user/q", "assistant/", "tool/approved", "tool/early?", "user/meanwhile"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Repair = %v, want %v", got, want)
	}
	assertValid(t, h)
	if len(msgs) != 6 || msgs[2].Content != "early?" {
		t.Error("Repair modified its input")
	}
	// Open calls (a pending proposal's batch) stay without a result.
	open := threads.Repair(msgs[:2], map[string]bool{"p": true, "r": true})
	if len(open) != 2 {
		t.Errorf("open calls got results: %+v", open)
	}
	// A result stored before the call it names answers nothing: dropped, and the
	// call gets the synthetic interrupted result.
	early := threads.Repair([]convo.Message{
		{Role: convo.Tool, ToolCallID: "x", Content: "before its call"},
		{Role: convo.User, Content: "q"},
		{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "x", Name: "search_nodes"}}},
	}, nil)
	if len(early) != 3 || early[2].Content != threads.InterruptedResult {
		t.Errorf("a result before its call was kept: %+v", early)
	}
	assertValid(t, early)
}

func TestResolveID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	for _, id := range []string{"ai_1709123456789_1", "ai_1709123456789_2", "ai_1709999999999_1", "imported-thread"} {
		if _, err := s.CreateThread(ctx, convo.Thread{ID: id, GraphKey: "demo", Title: "title of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		in      string
		want    string
		wantErr error
		listed  []string
	}{
		{in: "ai_1709123456789_2", want: "ai_1709123456789_2"},
		{in: "ai_17099", want: "ai_1709999999999_1"},
		{in: "17099", want: "ai_1709999999999_1"},
		{in: "impo", want: "imported-thread"},
		{in: "ai_1709123", wantErr: threads.ErrAmbiguous, listed: []string{"ai_1709123456789_1", "ai_1709123456789_2"}},
		{in: "1709", wantErr: threads.ErrAmbiguous, listed: []string{"ai_1709123456789_1", "ai_1709999999999_1"}},
		{in: "ai_", wantErr: threads.ErrInvalid},
		{in: "nope-nothing", wantErr: threads.ErrNotFound},
		{in: "", wantErr: threads.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := s.ResolveID(ctx, tt.in)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("ResolveID(%q) = %q, %v; want %v", tt.in, got, err, tt.wantErr)
				continue
			}
			for _, c := range tt.listed {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("ResolveID(%q) error %q does not list %s", tt.in, err, c)
				}
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestListLatestRenameArchiveDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	var ids []string
	for i, g := range []string{"demo", "other", "demo"} {
		th, err := s.CreateThread(ctx, convo.Thread{GraphKey: g, CreatedAt: time.UnixMilli(int64(1_700_000_000_000 + i*1000))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, th.ID)
	}
	list := func(o threads.ListOptions) []string {
		ts, err := s.List(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	if got := list(threads.ListOptions{}); !reflect.DeepEqual(got, []string{ids[2], ids[1], ids[0]}) {
		t.Errorf("List = %v", got)
	}
	if got := list(threads.ListOptions{Graph: "demo"}); !reflect.DeepEqual(got, []string{ids[2], ids[0]}) {
		t.Errorf("List(demo) = %v", got)
	}
	if got := list(threads.ListOptions{Limit: 1}); len(got) != 1 {
		t.Errorf("List(limit 1) = %v", got)
	}
	// A new message moves a thread to the top.
	save(t, s, &convo.Message{ThreadID: ids[0], Role: convo.User, Content: "hello"})
	if l, err := s.Latest(ctx, "demo"); err != nil || l.ID != ids[0] {
		t.Errorf("Latest(demo) = %v, %v; want %s", l.ID, err, ids[0])
	}
	if _, err := s.Latest(ctx, "none"); !errors.Is(err, threads.ErrNotFound) {
		t.Errorf("Latest(none): %v", err)
	}
	if err := s.Rename(ctx, ids[0], "  New\ntitle "); err != nil {
		t.Fatal(err)
	}
	if th, _ := s.Thread(ctx, ids[0]); th.Title != "New" {
		t.Errorf("title = %q, want the first line", th.Title)
	}
	if err := s.Rename(ctx, ids[0], " \n "); !errors.Is(err, threads.ErrInvalid) {
		t.Errorf("empty rename: %v", err)
	}
	if err := s.Archive(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := list(threads.ListOptions{Graph: "demo"}); !reflect.DeepEqual(got, []string{ids[2]}) {
		t.Errorf("List after archive = %v", got)
	}
	if got := list(threads.ListOptions{Graph: "demo", All: true}); len(got) != 2 {
		t.Errorf("List --all = %v", got)
	}
	if err := s.Delete(ctx, ids[1], "missing"); !errors.Is(err, threads.ErrNotFound) {
		t.Errorf("Delete with a missing id: %v", err)
	}
	if _, err := s.Thread(ctx, ids[1]); err != nil {
		t.Errorf("a failed Delete removed %s: %v", ids[1], err)
	}
	if err := s.Delete(ctx, ids[0], ids[1]); err != nil {
		t.Fatal(err)
	}
	if got := list(threads.ListOptions{All: true}); !reflect.DeepEqual(got, []string{ids[2]}) {
		t.Errorf("List after delete = %v", got)
	}
	if _, err := s.History(ctx, ids[0]); !errors.Is(err, threads.ErrNotFound) {
		t.Errorf("History of a deleted thread: %v", err)
	}
	for _, op := range []func() error{
		func() error { return s.Rename(ctx, "missing", "x") },
		func() error { return s.Archive(ctx, "missing") },
		func() error { return s.SetAutoApprove(ctx, "missing", nil) },
		func() error {
			return s.SaveMessage(ctx, &convo.Message{ThreadID: "missing", Role: convo.User, Content: "x"})
		},
		func() error {
			return s.SaveProposal(ctx, convo.Proposal{ThreadID: "missing", ToolCallID: "c", Action: createNode("x")})
		},
	} {
		if err := op(); !errors.Is(err, threads.ErrNotFound) {
			t.Errorf("operation on a missing thread: err = %v, want ErrNotFound", err)
		}
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	a := newThread(t, s, "demo")
	b := newThread(t, s, "other")
	save(t, s, &convo.Message{ThreadID: a.ID, Role: convo.User, Content: "What does the fetch-api node do?"})
	save(t, s, &convo.Message{ThreadID: a.ID, Role: convo.Assistant, Content: "It calls the NBA stats endpoint and returns the players."})
	save(t, s, &convo.Message{ThreadID: b.ID, Role: convo.User, Content: "Résumé des équipes"})
	save(t, s, &convo.Message{ThreadID: b.ID, Role: convo.System, Kind: convo.KindContext, Content: "players players players"})
	streaming := &convo.Message{ThreadID: b.ID, Role: convo.Assistant, Status: convo.Streaming, Content: "zebra partial"}
	save(t, s, streaming)

	find := func(q string) []threads.Hit {
		t.Helper()
		hs, err := s.Search(ctx, q, 10)
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		return hs
	}
	if hs := find("players"); len(hs) != 1 || hs[0].ThreadID != a.ID || hs[0].Role != convo.Assistant ||
		!strings.Contains(hs[0].Snippet, threads.MatchStart+"players"+threads.MatchEnd) || hs[0].Title == "" || hs[0].CreatedAt.IsZero() {
		t.Errorf("Search(players) = %+v (system context must not match)", hs)
	}
	if hs := find("fetch api"); len(hs) != 1 || hs[0].ThreadID != a.ID {
		t.Errorf("Search(fetch api) = %+v", hs)
	}
	if hs := find("fetc"); len(hs) != 1 {
		t.Errorf("prefix search = %+v", hs)
	}
	if hs := find("resume equipes"); len(hs) != 1 || hs[0].ThreadID != b.ID {
		t.Errorf("diacritics-insensitive search = %+v", hs)
	}
	if hs := find("zebra"); len(hs) != 0 {
		t.Errorf("a streaming message is indexed: %+v", hs)
	}
	streaming.Status, streaming.Content = convo.Complete, "zebra complete"
	save(t, s, streaming)
	if hs := find("zebra"); len(hs) != 1 || !strings.Contains(hs[0].Snippet, "complete") {
		t.Errorf("completed message not indexed: %+v", hs)
	}
	// Nothing a person types is FTS syntax.
	for _, q := range []string{`"`, `fetch"`, `*`, `NEAR(a b`, `-players`, `col:players`, `AND OR NOT`, `(`, `^`, `players AND`, "\x00", "", "   "} {
		if _, err := s.Search(ctx, q, 10); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if hs := find("players"); len(hs) != 0 {
		t.Errorf("deleted thread still found: %+v", hs)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openStore(t)
	th := newThread(t, src, "demo")
	save(t, src, &convo.Message{ThreadID: th.ID, Role: convo.System, Kind: convo.KindPrompt, Content: "prompt"})
	p := fullTurn(t, src, th, "first question")
	decide(t, src, p, false)
	save(t, src, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, Content: "ok, not added"})
	// Second turn stops at a proposal with a read call still to run after it.
	save(t, src, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "add it after all"})
	save(t, src, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, ToolCalls: []convo.ToolCall{
		{ID: "p2", Name: "propose_create_node", Arguments: `{"typeKey":"api-call"}`},
		{ID: "r2", Name: "search_nodes", Arguments: `{"query":"cache"}`}}})
	if err := src.SaveProposal(ctx, convo.Proposal{ThreadID: th.ID, ToolCallID: "p2", Tool: "propose_create_node", Action: createNode("cache-node"), Reason: "asked again"}); err != nil {
		t.Fatal(err)
	}

	doc, err := src.Export(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Key != th.ID || doc.GraphKey != "demo" || doc.Workspace != "default" || doc.CreatedTime == 0 || doc.LastUpdatedTime < doc.CreatedTime {
		t.Errorf("document header = %+v", doc)
	}
	in := doc.PendingInterrupt
	if in == nil || in.ToolCallID != "p2" || in.ToolCall.Function.Name != "propose_create_node" || in.ToolCall.Type != "function" ||
		in.ProposedAction.Type != datasource.CreateNodeAction || len(in.RemainingToolCalls) != 1 || in.RemainingToolCalls[0].ID != "r2" {
		t.Fatalf("pendingInterrupt = %+v", in)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI message format: tool_calls with type function, tool_call_id, null content.
	for _, want := range []string{`"_key":"` + th.ID + `"`, `"type":"function"`, `"tool_call_id":"`, `"content":null`, `"pendingInterrupt":{`, `"proposedAction":{"type":"create_node"`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("document lacks %s:\n%s", want, raw)
		}
	}
	last := doc.ConversationHistory[len(doc.ConversationHistory)-1]
	if last.Role != "assistant" || len(last.ToolCalls) != 2 {
		t.Errorf("the pending batch must end the history unanswered, got %+v", last)
	}

	dst := openStore(t)
	parsed, err := threads.ParseDocument(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	imp, err := dst.Import(ctx, parsed, threads.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if imp.ID != th.ID || imp.Title != "first question" {
		t.Errorf("imported thread = %+v", imp)
	}
	doc2, err := dst.Export(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw2, _ := json.Marshal(doc2)
	if !bytes.Equal(raw, raw2) {
		t.Errorf("round trip changed the document:\n%s\n%s", raw, raw2)
	}
	pp, err := dst.PendingProposal(ctx, th.ID)
	if err != nil || pp == nil || pp.ToolCallID != "p2" || pp.Reason != "asked again" || pp.Action.CreateNode.NodeKey != "cache-node" {
		t.Errorf("imported pending proposal = %+v, %v", pp, err)
	}
	h, _ := dst.History(ctx, th.ID)
	if h[0].Kind != convo.KindPrompt || h[1].Kind != convo.KindContext {
		t.Errorf("system messages' kinds: %q %q", h[0].Kind, h[1].Kind)
	}
	if _, err := dst.Import(ctx, parsed, threads.ImportOptions{}); !errors.Is(err, threads.ErrExists) {
		t.Errorf("second import: %v, want ErrExists", err)
	}
	if _, err := dst.Import(ctx, parsed, threads.ImportOptions{Replace: true}); err != nil {
		t.Errorf("import --replace: %v", err)
	}
	if msgs, _ := dst.Messages(ctx, th.ID); len(msgs) != len(doc.ConversationHistory) {
		t.Errorf("replace kept old messages: %d, want %d", len(msgs), len(doc.ConversationHistory))
	}
}

func TestImportServerDocument(t *testing.T) {
	t.Parallel()
	// A document as the server writes it, plus camelCase fields and content parts.
	doc := `{
	  "_key": "ai_1709123456_1", "graphKey": "nba-workflow", "workspace": "default", "userId": "admin",
	  "conversationHistory": [
	    {"role": "system", "content": "Tu es un assistant IA..."},
	    {"role": "system", "content": "[Contexte RAG pour cette question]..."},
	    {"role": "user", "content": [{"type": "text", "text": "Que fait le node "}, {"type": "text", "text": "fetch-api ?"}]},
	    {"role": "assistant", "content": null, "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "read_node_detail", "arguments": "{\"nodeKey\":\"fetch-api\"}"}}]},
	    {"role": "tool", "toolCallId": "c1", "content": "{\"key\":\"fetch-api\"}"},
	    {"role": "assistant", "content": "Le node fetch-api est de type api-call..."}
	  ],
	  "pendingInterrupt": null, "createdTime": 1709123456000, "lastUpdatedTime": 1709123489000
	}`
	d, err := threads.ParseDocument(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t)
	th, err := s.Import(context.Background(), d, threads.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if th.ID != "ai_1709123456_1" || th.Title != "Que fait le node fetch-api ?" || th.MessageCount != 3 ||
		th.CreatedAt.UnixMilli() != 1709123456000 || th.UpdatedAt.UnixMilli() != 1709123489000 {
		t.Errorf("thread = %+v", th)
	}
	h, _ := s.History(context.Background(), th.ID)
	assertValid(t, h)
	if h[4].Name != "read_node_detail" {
		t.Errorf("tool message name = %q", h[4].Name)
	}
	if hs, _ := s.Search(context.Background(), "api-call", 5); len(hs) != 1 {
		t.Errorf("imported messages not searchable: %+v", hs)
	}
}

func TestImportRejectsBadDocuments(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, want string }{
		{"not json", `{`, "not valid JSON"},
		{"no key", `{"graphKey":"g"}`, "_key"},
		{"bad key", `{"_key":"a b","graphKey":"g"}`, "_key"},
		{"no graph", `{"_key":"k"}`, "graphKey"},
		{"bad role", `{"_key":"k","graphKey":"g","conversationHistory":[{"role":"wizard","content":"x"}]}`, "role"},
		{"tool without id", `{"_key":"k","graphKey":"g","conversationHistory":[{"role":"tool","content":"x"}]}`, "tool_call_id"},
		{"call without name", `{"_key":"k","graphKey":"g","conversationHistory":[{"role":"assistant","tool_calls":[{"id":"c"}]}]}`, "function name"},
		{"content number", `{"_key":"k","graphKey":"g","conversationHistory":[{"role":"user","content":5}]}`, "content"},
		{"interrupt unknown call", `{"_key":"k","graphKey":"g","conversationHistory":[],"pendingInterrupt":{"toolCallId":"x","proposedAction":{"type":"move_node","payload":{"nodeKey":"a"}}}}`, "matches no tool call"},
		{"interrupt bad action", `{"_key":"k","graphKey":"g","pendingInterrupt":{"toolCallId":"x","proposedAction":{"type":"explode","payload":{}}}}`, "unknown action type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := threads.ParseDocument(strings.NewReader(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseDocument: err = %v, want it to mention %q", err, tt.want)
			}
			if !errors.Is(err, threads.ErrInvalid) {
				t.Errorf("ParseDocument: err = %v, want ErrInvalid", err)
			}
		})
	}
	// The decoder's own error stays reachable behind ErrInvalid.
	var syntax *json.SyntaxError
	if _, err := threads.ParseDocument(strings.NewReader(`{`)); !errors.As(err, &syntax) {
		t.Errorf("ParseDocument({): err = %v, want a *json.SyntaxError inside", err)
	}
}

func TestMarkdownTranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.System, Kind: convo.KindPrompt, Content: "SYSTEM PROMPT TEXT\n```\nstill the prompt"})
	p := fullTurn(t, s, th, "evil \x1b]0;pwned\x07title \x1b[31mred")
	decide(t, s, p, true)
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.Assistant, Content: "```\nclose the fence\x1b[2J\n```"})
	tr, err := s.Transcript(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, withContext := range []bool{false, true} {
		var b bytes.Buffer
		if err := threads.WriteMarkdown(&b, tr, threads.MarkdownOptions{Context: withContext}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("markdown carries control sequences:\n%q", out)
		}
		for _, want := range []string{"# evil title red", "## You", "## Assistant", "read_node_detail", `"nodeKey": "fetch-api"`,
			"`propose_create_node` · approved and applied", "Decision: **approved and applied**", "nodes created: cache-node", "Nodes created: `cache-node`",
			"1000 prompt (200 cached) + 50 completion tokens · $0.0010", "```\nclose the fence\n```"} {
			if !strings.Contains(out, want) {
				t.Errorf("markdown (context=%v) lacks %q:\n%s", withContext, want, out)
			}
		}
		if got := strings.Contains(out, "SYSTEM PROMPT TEXT") && strings.Contains(out, "## Retrieval context"); got != withContext {
			t.Errorf("context=%v but system prompt/context shown=%v:\n%s", withContext, got, out)
		}
		// A fence is longer than any backtick run inside it, so stored text cannot close it.
		if fenced := "\n````\nSYSTEM PROMPT TEXT\n```\nstill the prompt\n````\n"; withContext && !strings.Contains(out, fenced) {
			t.Errorf("the system prompt is not fenced past its own backticks:\n%s", out)
		}
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		th := newThread(t, s, "demo")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				m := &convo.Message{ThreadID: th.ID, Role: convo.User, Content: fmt.Sprintf("g%d m%d", g, i)}
				if err := s.SaveMessage(ctx, m); err != nil {
					errs <- err
					return
				}
				if _, err := s.History(ctx, th.ID); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestOpenReadOnly: a database opened read-only reads everything committed (also what
// is still in the WAL of a writer that has it open) and refuses writes as ErrReadOnly;
// a missing file is not created.
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threads.db")
	w := openAt(t, path)
	th := newThread(t, w, "demo")
	save(t, w, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "kept"})
	ro, err := threads.Open(ctx, path, threads.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	list, err := ro.List(ctx, threads.ListOptions{})
	if err != nil || len(list) != 1 || list[0].Title != "kept" {
		t.Fatalf("List read-only = %+v, %v", list, err)
	}
	if msgs, err := ro.Messages(ctx, th.ID); err != nil || len(msgs) != 1 {
		t.Fatalf("Messages read-only = %d, %v", len(msgs), err)
	}
	if err := ro.SaveMessage(ctx, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "x"}); !errors.Is(err, threads.ErrReadOnly) {
		t.Fatalf("a write on a read-only store = %v, want ErrReadOnly", err)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := threads.Open(ctx, missing, threads.Options{ReadOnly: true}); err == nil {
		t.Error("a missing database opened read-only")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("opening read-only created the file")
	}
}
