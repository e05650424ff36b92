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
	deadline := time.Now().Add(30 * time.Second) // the lock wait starts only after the claim
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

// pendingAndUntouched checks that a failed approve consumed nothing: the proposal is
// pending, no log node is in the graph, and the model got no new request.
func (e *env) pendingAndUntouched(thread string, requests int) {
	e.t.Helper()
	if s := e.show(thread); len(s.Proposals) != 1 || s.Proposals[0].Decision != "pending" {
		e.t.Fatalf("the proposal is not pending any more: %+v", s.Proposals)
	}
	if n := len(logNodes(readGraph(e.t, e.graph))); n != 0 {
		e.t.Fatalf("%d log nodes in the graph after a failed approve", n)
	}
	if n := len(e.srv.ChatRequests()); n != requests {
		e.t.Fatalf("the model was called after a failed approve (%d requests, want %d)", n, requests)
	}
}

// approveOnce approves again once the cause is gone: the change is applied exactly
// once, and the model is told.
func (e *env) approveOnce(thread string, requests int) {
	e.t.Helper()
	if r := e.run("", "approve", thread); r.code != 0 {
		e.t.Fatalf("approve after the cause was removed: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(e.t, e.graph))); n != 1 {
		e.t.Fatalf("%d log nodes after the retry, want 1", n)
	}
	if n := len(e.srv.ChatRequests()); n != requests+1 {
		e.t.Fatalf("%d requests after the retry, want %d", n, requests+1)
	}
	if r := e.run("", "approve", thread); r.code != 2 {
		e.t.Fatalf("approve a third time: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(e.t, e.graph))); n != 1 {
		e.t.Fatalf("%d log nodes, want still 1", n)
	}
}

// Another process holds the graph file's lock longer than approve waits for it
// (graph_lock_wait): approve gives up with the cause in one sentence, the proposal
// stays pending, the model is not called; once the lock is free, approving applies
// the change once.
func TestApproveGivesUpOnAGraphLockedTooLong(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	e.writeConfig("graph_lock_wait = \"700ms\"\n")
	thread := e.askProposal("--graph", demo.GraphKey)
	requests := len(e.srv.ChatRequests())

	lock := holdGraphLock(t, e.graph)
	started := time.Now()
	r := e.run("", "approve", thread)
	if r.code != 1 && r.code != 2 {
		t.Fatalf("approve with the graph locked: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"stayed locked by another process for 700ms", "the proposal is still pending", "approve again"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("approve with the graph locked does not say %q:\n%s", want, r.stderr)
		}
	}
	if waited := time.Since(started); waited < 700*time.Millisecond {
		t.Fatalf("approve gave up after %s, before graph_lock_wait", waited)
	}
	e.pendingAndUntouched(thread, requests)

	_ = lock.Unlock()
	e.approveOnce(thread, requests)
}

// The disk holding the graph file is full: approve says so, the proposal stays
// pending, the model is not called, and no temporary file is left; once there is
// room again, approving applies the change once. The graph lives on a small tmpfs.
func TestApproveOnAFullDisk(t *testing.T) {
	t.Parallel()
	disk := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("a small tmpfs cannot be mounted here (%v: %s); the full-disk test needs root or CAP_SYS_ADMIN", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", disk).Run() })

	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	e.graph = filepath.Join(disk, "graph.json")
	if err := os.WriteFile(e.graph, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=file:"+e.graph)
	thread := e.askProposal("--graph", demo.GraphKey)
	requests := len(e.srv.ChatRequests())

	// Fill the disk.
	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1024)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	_ = f.Close()

	r := e.run("", "approve", thread)
	if r.code != 1 {
		t.Fatalf("approve on a full disk: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"storage_error: the disk holding " + disk + " is full (no space left on device)", "the proposal is still pending", "free some space and approve again"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("approve on a full disk does not say %q:\n%s", want, r.stderr)
		}
	}
	e.pendingAndUntouched(thread, requests)
	// Scripts see the same class in the error event: something the person fixes.
	r = e.run("", "approve", thread, "--format", "json")
	if r.code != 1 || !strings.Contains(r.stdout, `"type":"error","code":"storage_error"`) {
		t.Fatalf("approve --format json on a full disk: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	e.pendingAndUntouched(thread, requests)
	if left, _ := filepath.Glob(filepath.Join(disk, ".graph.json.tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left on the full disk: %v", left)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.approveOnce(thread, requests)
}

// approve under a file size limit (ulimit -f) smaller than the graph file: the
// write fails (SIGXFSZ does not kill the process), approve says so, the proposal
// stays pending and the model is not called; without the limit it applies once.
func TestApproveOverTheFileSizeLimit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for ulimit")
	}
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	// A graph of ~200 KB, past a limit of 100 KiB the threads database stays under.
	editGraph(t, e.graph, func(doc map[string]any) {
		for _, n := range doc["nodes"].([]any) {
			if n := n.(map[string]any); n["_key"] == "disconnected-note" {
				n["data"] = map[string]any{"pad": strings.Repeat("x", 200_000)}
			}
		}
	})
	thread := e.askProposal("--graph", demo.GraphKey)
	requests := len(e.srv.ChatRequests())

	c := exec.Command("bash", "-c", `ulimit -f 100 && exec "$0" approve "$1"`, binary, thread)
	c.Env = e.vars
	var errb strings.Builder
	c.Stderr = &errb
	err := c.Run()
	code := c.ProcessState.ExitCode()
	if code != 1 && code != 2 {
		t.Fatalf("approve under ulimit -f: %v (exit %d)\n%s", err, code, errb.String())
	}
	for _, want := range []string{"storage_error: a file on the disk holding " + filepath.Dir(e.graph) + " went over the file size limit (file too large)", "the proposal is still pending", "raise the limit (ulimit -f) and approve again"} {
		if !strings.Contains(errb.String(), want) {
			t.Fatalf("approve under ulimit -f does not say %q:\n%s", want, errb.String())
		}
	}
	e.pendingAndUntouched(thread, requests)
	e.approveOnce(thread, requests)
}

// A thread that recorded no source (a row from before sources were recorded: the
// migration leaves it empty) keeps working on the source configured now: approve,
// ask --continue and reject, without an error.
func TestThreadWithoutRecordedSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	thread := e.askProposal("--graph", demo.GraphKey)
	forget := func() {
		db, err := sql.Open("sqlite", filepath.Join(e.dir, "data", "nodius-ai", "threads.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE threads SET source = '' WHERE id = ?`, thread); err != nil {
			t.Fatal(err)
		}
		if s := e.show(thread); s.Thread.Source != "" {
			t.Fatalf("the thread still records %q", s.Thread.Source)
		}
	}
	forget()
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(t, e.graph))); n != 1 {
		t.Fatalf("%d log nodes in the configured graph file, want 1", n)
	}

	forget()
	r := e.run("", "ask", "--continue", "--format", "json", "add another log node")
	if r.code != 3 {
		t.Fatalf("ask --continue: %d %s", r.code, r.stderr)
	}
	if id := events(t, r.stdout)[0]["thread_id"]; id != thread {
		t.Fatalf("ask --continue went to thread %v, want %s", id, thread)
	}
	forget()
	if r := e.run("", "reject", thread, "--feedback", "not now"); r.code != 0 {
		t.Fatalf("reject: %d %s", r.code, r.stderr)
	}
	s := e.show(thread)
	if p := s.Proposals[len(s.Proposals)-1]; p.Decision != "rejected" || p.Feedback != "not now" {
		t.Fatalf("last proposal: %+v", p)
	}
	if n := len(logNodes(readGraph(t, e.graph))); n != 1 {
		t.Fatalf("%d log nodes after the rejection, want 1", n)
	}
}
