package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/threads"
)

// TestUndoOfAServerAssistantsThread: a thread of the server's assistant with no
// graph it created to name (here, nothing applied) is refused in undo's own words,
// never with the advice to pass --agent server:URL, which undo refuses in turn.
func TestUndoOfAServerAssistantsThread(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "threads.db")
	s, err := threads.Open(t.Context(), db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.CreateThread(t.Context(), convo.Thread{GraphKey: "home", Title: "new graph"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRemote(t.Context(), th.ID, threads.Remote{Server: "http://127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, args := range [][]string{{"undo", th.ID}, {"undo", th.ID, "--agent", "server:http://127.0.0.1:9"}} {
		_, errOut, code := runCLI(t, "", map[string]string{"NODIUS_AI_DB": db}, args...)
		if code != ExitUsage || !strings.Contains(errOut, "server's assistant's") || !strings.Contains(errOut, "web client") ||
			strings.Contains(errOut, "pass --agent") || strings.Contains(errOut, "without --agent") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
