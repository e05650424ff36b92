package threads

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// TestDiskFull fills the database (SQLite's max_page_count gives the same SQLITE_FULL
// a full disk does): the failed step reports a clear error, leaves the caller's
// message untouched so it can be retried, and the retry succeeds once there is room.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threads.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	th, err := s.CreateThread(ctx, convo.Thread{GraphKey: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.Itoa(pages+1)); err != nil {
		t.Fatal(err)
	}
	m := &convo.Message{ThreadID: th.ID, Role: convo.User, Content: strings.Repeat("a long question ", 4000)}
	err = s.SaveMessage(ctx, m)
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("SaveMessage on a full disk: err = %v, want ErrDiskFull", err)
	}
	if fe, ok := fault.As(err); !ok || fe.Code != fault.Storage || fe.Message != err.Error() {
		t.Fatalf("a full disk is classified %+v, want %s with the store's sentence", fe, fault.Storage)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "free some space") {
		t.Errorf("message %q should name the file and say what to do", err)
	}
	if m.ID != 0 || m.Seq != 0 {
		t.Errorf("a failed save changed the message: id %d seq %d", m.ID, m.Seq)
	}
	if _, err := s.w.ExecContext(ctx, "PRAGMA max_page_count = 1000000"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveMessage(ctx, m); err != nil {
		t.Fatalf("retry after freeing space: %v", err)
	}
	h, err := s.History(ctx, th.ID)
	if err != nil || len(h) != 1 || h[0].Content != m.Content {
		t.Fatalf("history after retry: %d messages, %v", len(h), err)
	}
}
