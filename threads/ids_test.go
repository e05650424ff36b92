package threads_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/threads"
)

// The documented short form holds: the first MinPrefix characters of a new id
// (with or without "ai_") name that thread alone, among hundreds of threads and
// beside ids of the older timestamp form, which keep resolving.
func TestShortIDsResolve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	old := []string{"ai_1796694486008_1", "ai_1796694486009_2", "ai_1796694490000_1"}
	for _, id := range old {
		if _, err := s.CreateThread(ctx, convo.Thread{ID: id, GraphKey: "demo"}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for range 300 {
		ids = append(ids, newThread(t, s, "demo").ID)
	}
	for _, id := range ids {
		short := strings.TrimPrefix(id, "ai_")[:threads.MinPrefix]
		for _, typed := range []string{short, "ai_" + short} {
			got, err := s.ResolveID(ctx, typed)
			if err != nil || got != id {
				t.Fatalf("ResolveID(%q) = %q, %v; want %q", typed, got, err, id)
			}
		}
	}
	for _, id := range old {
		if got, err := s.ResolveID(ctx, id); err != nil || got != id {
			t.Errorf("ResolveID(%q) = %q, %v", id, got, err)
		}
	}
	if got, err := s.ResolveID(ctx, "1796694486008"); err != nil || got != old[0] {
		t.Errorf("ResolveID(old prefix) = %q, %v; want %q", got, err, old[0])
	}
}

// A thread remembers the endpoint it ran with; the update time stays.
func TestThreadLLM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	if l, err := s.ThreadLLM(ctx, th.ID); err != nil || l.Provider != "deepseek" || l.Model != "deepseek-chat" || l.BaseURL != "" {
		t.Fatalf("ThreadLLM(new) = %+v, %v", l, err)
	}
	want := threads.LLM{Provider: "custom", Model: "fake", BaseURL: "http://127.0.0.1:9/v1"}
	if err := s.SetThreadLLM(ctx, th.ID, want); err != nil {
		t.Fatal(err)
	}
	if l, err := s.ThreadLLM(ctx, th.ID); err != nil || l != want {
		t.Fatalf("ThreadLLM = %+v, %v; want %+v", l, err, want)
	}
	after, err := s.Thread(ctx, th.ID)
	if err != nil || after.UpdatedAt.UnixMilli() != th.UpdatedAt.UnixMilli() || after.Model != "fake" {
		t.Errorf("thread after SetThreadLLM = %+v, %v", after, err)
	}
	if err := s.SetThreadLLM(ctx, "ai_nope", want); err == nil {
		t.Error("SetThreadLLM on a missing thread: no error")
	}
}

// threads search finds the words of a proposal's reason, and loses them with the
// thread.
func TestSearchFindsProposalReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	th := newThread(t, s, "demo")
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "show the players"})
	if err := s.SaveProposal(ctx, convo.Proposal{ThreadID: th.ID, ToolCallID: "call_1", Tool: "propose_create_node",
		Action: createNode("log-result"), Reason: "Ajouter un journaliste pour écrire le tableau rendu"}); err != nil {
		t.Fatal(err)
	}
	hs, err := s.Search(ctx, "journaliste", 10)
	if err != nil || len(hs) != 1 || hs[0].ThreadID != th.ID || hs[0].ProposalID != "call_1" ||
		!strings.Contains(hs[0].Snippet, threads.MatchStart+"journaliste"+threads.MatchEnd) || hs[0].CreatedAt.IsZero() {
		t.Fatalf("Search(journaliste) = %+v, %v", hs, err)
	}
	if hs, _ := s.Search(ctx, "ecrire tableau", 10); len(hs) != 1 {
		t.Errorf("Search without accents = %+v", hs)
	}
	if hs, _ := s.Search(ctx, "players", 10); len(hs) != 1 || hs[0].ProposalID != "" {
		t.Errorf("Search(players) = %+v: the message only", hs)
	}
	if err := s.Delete(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if hs, err := s.Search(ctx, "journaliste", 10); err != nil || len(hs) != 0 {
		t.Errorf("after delete: %+v, %v", hs, err)
	}
}

// A database of schema 6 is migrated: its proposals' reasons become searchable and
// its threads record no base URL yet.
func TestMigrationIndexesExistingReasons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threads.db")
	s, err := threads.Open(ctx, path, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := newThread(t, s, "demo")
	_ = s.Close()
	db := rawDB(t, path)
	for _, q := range []string{
		"DROP TRIGGER proposals_fts_update", "DROP TRIGGER proposals_fts_delete", "DROP TRIGGER proposals_fts_insert",
		"DROP TABLE proposals_fts", "ALTER TABLE threads DROP COLUMN base_url",
		"DELETE FROM goose_db_version WHERE version_id = 7",
		`INSERT INTO proposals (thread_id, tool_call_id, tool, action, reason, created_ms) VALUES ('` + th.ID + `', 'c1', 'propose_delete_node', '{}', 'the cormorant node is unused', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = db.Close()
	s = openAt(t, path)
	hs, err := s.Search(ctx, "cormorant", 10)
	if err != nil || len(hs) != 1 || hs[0].ProposalID != "c1" {
		t.Fatalf("after migrating: %+v, %v", hs, err)
	}
	if l, err := s.ThreadLLM(ctx, th.ID); err != nil || l.BaseURL != "" || l.Provider != "deepseek" {
		t.Fatalf("ThreadLLM = %+v, %v", l, err)
	}
}
