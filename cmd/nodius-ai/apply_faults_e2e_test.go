package main_test

// End-to-end tests of what happens to an approval between its checks and the write:
// another process changing the graph file while approve waits for its lock, a lock
// held past the wait, a full disk. Each runs the built binary.

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// proposeDeleteFetchAPI is the model proposing to delete fetch-api (3 edges).
var proposeDeleteFetchAPI = llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "del1", Name: "propose_delete_node",
	Arguments: `{"nodeKey":"fetch-api","reason":"unused"}`}}}

// proposalOutcome reads the outcome of the thread's proposal from the database, as
// another process sees it while approve runs.
func (e *env) proposalOutcome(thread string) string {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "data", "nodius-ai", "threads.db")+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	var outcome string
	if err := db.QueryRow(`SELECT outcome FROM proposals WHERE thread_id = ?`, thread).Scan(&outcome); err != nil {
		return "error: " + err.Error()
	}
	return outcome
}

// holdGraphLock takes the sidecar lock of a graph file, as another writer does.
func holdGraphLock(t *testing.T, graph string) *flock.Flock {
	t.Helper()
	fl := flock.New(filepath.Join(filepath.Dir(graph), "."+filepath.Base(graph)+".lock"))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Unlock() })
	return fl
}

// editGraph changes the graph file as another program would.
func editGraph(t *testing.T, path string, edit func(doc map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func startApprove(t *testing.T, e *env, args ...string) (*exec.Cmd, chan result) {
	t.Helper()
	c := exec.Command(binary, append([]string{"approve"}, args...)...)
	c.Env = e.vars
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		_ = c.Wait()
		done <- result{out.String(), errb.String(), c.ProcessState.ExitCode()}
	}()
	t.Cleanup(func() { _ = c.Process.Kill() })
	return c, done
}

// The check that the graph is still what the person was shown runs under the graph
// file's lock: an edge another process adds to fetch-api after approve made its first
// checks and claimed the decision (while approve waits for the lock) is seen, and
// fetch-api is not deleted with an edge nobody approved deleting.
func TestApproveSeesAWriterBetweenItsChecksAndTheWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeDeleteFetchAPI, llmtest.Turn{Text: "The graph changed; I will look again."})
	thread := e.askProposal("--graph", demo.GraphKey)

	lock := holdGraphLock(t, e.graph)
	_, done := startApprove(t, e, thread, "--proposal", "del1")
	// approve has checked the graph and claimed the decision: it waits for the lock.
	deadline := time.Now().Add(8 * time.Second)
	for e.proposalOutcome(thread) != "claimed" {
		if time.Now().After(deadline) {
			t.Fatalf("approve did not claim the decision; outcome %q", e.proposalOutcome(thread))
		}
		select {
		case r := <-done:
			t.Fatalf("approve ended before taking the lock: %d %s", r.code, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	editGraph(t, e.graph, func(doc map[string]any) {
		doc["edges"] = append(doc["edges"].([]any), map[string]any{"_key": "e9", "sheet": "0",
			"source": "sort-stats", "sourceHandle": "0", "target": "fetch-api", "targetHandle": "0"})
	})
	_ = lock.Unlock()

	r := <-done
	if r.code != 1 || !strings.Contains(r.stderr, "approved but not applied") || !strings.Contains(r.stderr, "e9: sort-stats:0 → fetch-api:0") {
		t.Fatalf("approve: exit %d\n%s", r.code, r.stderr)
	}
	g := readGraph(t, e.graph)
	var node, edge bool
	for _, n := range g.Nodes {
		node = node || n.Key == "fetch-api"
	}
	for _, x := range g.Edges {
		edge = edge || x.Key == "e9"
	}
	if !node || !edge {
		t.Fatalf("fetch-api (%v) or the edge added meanwhile (%v) was deleted", node, edge)
	}
	s := e.show(thread)
	if p := s.Proposals[0]; p.Outcome != "not_applied" || !strings.Contains(p.ApplyError, "e9") {
		t.Fatalf("thread: %+v", p)
	}
	reqs := e.srv.ChatRequests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Body), "not_applied") {
		t.Fatalf("the model was not told: %s", last.Body)
	}
}
