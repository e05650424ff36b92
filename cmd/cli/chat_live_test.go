package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// TestChatFollowsTheServerLive: `chat --source server:URL` keeps one registration
// for the session. Another user adds a node between two questions: the header
// says the graph changed by others, the second question's context (what the model
// is sent) holds the new node, and the graph was read over HTTP once in all.
func TestChatFollowsTheServerLive(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	s, err := servertest.NewSeeded(servertest.Options{PairedPorts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	dir := t.TempDir()
	bin := nodiusBinary(t)
	llm := llmtest.Start(t,
		llmtest.Turn{Text: "fetch_api calls the NBA players endpoint."},
		llmtest.Turn{Text: "carol_rate_gate logs what passes."},
	)
	env := []string{"NODIUS_AI_BASE_URL=" + llm.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + filepath.Join(dir, "threads.db"), "NODIUS_AI_SOURCE=server:" + s.URL, "NODIUS_AI_TOKEN=tok-alice",
		"NO_COLOR=1", "TERM=xterm-256color", "XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "HOME=" + dir}
	term := tmuxtest.Start(t, 140, 32, dir, env, bin, "chat", "--graph", servertest.SeedGraphKey)
	term.Wait("New conversation")
	term.Type("what does fetch_api do?")
	term.Keys("Enter")
	term.Wait("calls the NBA players endpoint")

	// carol, in the web editor, adds a node (the graph is claimed: nodius-ai's
	// /api/sync made this instance its manager).
	ctx := context.Background()
	carol, err := nodiusapi.DialEditor(ctx, s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-carol"}, AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = carol.Close() })
	if _, err := carol.Register(ctx, servertest.SeedGraphKey, "0", "carol (web)", 0); err != nil {
		t.Fatal(err)
	}
	node, _ := json.Marshal(map[string]any{"_key": "carol_rate_gate", "graphKey": servertest.SeedGraphKey, "sheet": "0", "type": "log-node",
		"typeVersion": 1, "posX": 900, "posY": 900, "size": map[string]any{"width": 200, "height": 100}, "handles": map[string]any{}, "data": map[string]any{}})
	if err := carol.BatchCreate(ctx, "0", []json.RawMessage{node}, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("after carol's edit:\n%s", term.Wait("graph changed by others since your last question"))

	term.Type("what does carol_rate_gate do?")
	term.Keys("Enter")
	screen := term.Wait("logs what passes")
	if strings.Contains(strings.SplitN(screen, "\n", 2)[0], "changed by others") {
		t.Errorf("the header still says the graph changed after the question:\n%s", screen)
	}
	reqs := llm.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	// The graph context (not the question, which names the node too).
	if !contextHolds(t, reqs[1].Body, "carol_rate_gate") {
		t.Fatalf("the second question's context does not hold carol's node:\n%s", reqs[1].Body)
	}
	if contextHolds(t, reqs[0].Body, "carol_rate_gate") {
		t.Fatal("the first question's context already held carol's node: the test proves nothing")
	}
	if c := s.Counts(); c.GraphGets != 1 {
		t.Errorf("the graph was read %d times over HTTP, want once for the session", c.GraphGets)
	}
	term.Keys("C-d")
}

// contextHolds reports whether a system message of an OpenAI chat request (the
// graph context the agent sends) mentions what.
func contextHolds(t *testing.T, body []byte, what string) bool {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		if m.Role == "system" && strings.Contains(string(m.Content), what) {
			return true
		}
	}
	return false
}
