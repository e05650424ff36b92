package main_test

// End-to-end tests of the approval guarantees, over real processes: the built binary,
// a file: graph, a real SQLite threads database, concurrent deciders and kill -9.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// proposeKeyless proposes a log node without a key: the source names it, so two
// applies would make two nodes (what "applied once" has to prevent).
func proposeKeyless(id string) llmtest.Turn {
	call := llmtest.ToolCall{Name: "propose_create_node",
		Arguments: `{"typeKey":"log-node","sheet":"0","posX":900,"posY":100,"reason":"log the rendered table"}`}
	if id != "" {
		call.ID = id
	}
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{call}}
}

// graphDoc is what the tests read of a graph file.
type graphDoc struct {
	Graph struct {
		Key string `json:"_key"`
	} `json:"graph"`
	Nodes []struct {
		Key  string  `json:"_key"`
		Type string  `json:"type"`
		PosX float64 `json:"posX"`
	} `json:"nodes"`
	Edges []struct {
		Key string `json:"_key"`
	} `json:"edges"`
}

func readGraph(t *testing.T, path string) graphDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g graphDoc
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("graph file does not parse: %v", err)
	}
	return g
}

// logNodes lists the keys of the log nodes the tests' proposals create.
func logNodes(g graphDoc) []string {
	var keys []string
	for _, n := range g.Nodes {
		if n.Type == "log-node" && n.PosX == 900 && strings.HasPrefix(n.Key, "ai_") {
			keys = append(keys, n.Key)
		}
	}
	return keys
}

// shownThread is what the tests read of `threads show --format json`.
type shownThread struct {
	Thread struct {
		ID     string `json:"id"`
		Source string `json:"source"`
	} `json:"thread"`
	Proposals []struct {
		ID         string `json:"id"`
		Decision   string `json:"decision"`
		Outcome    string `json:"outcome"`
		ApplyError string `json:"apply_error"`
		Feedback   string `json:"feedback"`
		Result     *struct {
			Applied bool `json:"applied"`
			Created struct {
				Nodes []string `json:"nodes"`
			} `json:"created"`
		} `json:"result"`
	} `json:"proposals"`
	Created []struct {
		Key string `json:"key"`
	} `json:"created"`
}

func (e *env) show(thread string) shownThread {
	e.t.Helper()
	r := e.run("", "threads", "show", thread, "--format", "json")
	if r.code != 0 {
		e.t.Fatalf("threads show: %d %s", r.code, r.stderr)
	}
	var s shownThread
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("threads show json: %v", err)
	}
	return s
}

// askProposal asks and returns the thread id of the run that stopped at a proposal.
func (e *env) askProposal(args ...string) string {
	e.t.Helper()
	r := e.run("", append([]string{"ask", "--format", "json"}, append(args, "add a log node")...)...)
	if r.code != 3 {
		e.t.Fatalf("ask: code %d (want 3) stderr %s", r.code, r.stderr)
	}
	return events(e.t, r.stdout)[0]["thread_id"].(string)
}

func (e *env) withoutVar(name string) {
	var kept []string
	for _, v := range e.vars {
		if !strings.HasPrefix(v, name+"=") {
			kept = append(kept, v)
		}
	}
	e.vars = kept
}

// A thread remembers its source: approve without --source applies to the file the
// question was asked on, and a configured source that differs is refused.
func TestApproveUsesTheThreadsRecordedSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	e.withoutVar("NODIUS_AI_SOURCE")
	orders := filepath.Join(e.dir, "orders.json")
	if err := os.WriteFile(orders, bytes.Replace(demo.JSON(), []byte(`"_key": "demo"`), []byte(`"_key": "orders"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if readGraph(t, orders).Graph.Key != "orders" {
		t.Fatal("fixture: graph key not replaced")
	}
	rel, _ := filepath.Rel(e.dir, orders)
	cmd := func(stdin string, args ...string) result {
		// Run from the graph's directory so the relative path is the user's.
		t.Helper()
		c := exec.Command(binary, args...)
		c.Dir, c.Env, c.Stdin = e.dir, e.vars, strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return result{out.String(), errb.String(), code}
	}
	r := cmd("", "ask", "--graph", "orders", "--source", "file:"+rel, "--format", "json", "add a log node after review")
	if r.code != 3 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	thread := events(t, r.stdout)[0]["thread_id"].(string)
	if s := e.show(thread); s.Thread.Source != "file:"+orders {
		t.Fatalf("recorded source %q, want file:%s", s.Thread.Source, orders)
	}
	r = e.run("", "approve", thread)
	if r.code != 0 {
		t.Fatalf("approve without --source: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(t, orders))); n != 1 {
		t.Fatalf("orders.json has %d new nodes, want 1", n)
	}

	// A source in effect from the environment that is not the thread's: exit 2,
	// naming both, and nothing decided.
	thread = e.askProposal("--graph", "orders", "--source", "file:"+orders)
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=demo")
	for _, verb := range []string{"approve", "reject"} {
		r = e.run("", verb, thread)
		if r.code != 2 || !strings.Contains(r.stderr, "file:"+orders) || !strings.Contains(r.stderr, "demo") {
			t.Fatalf("%s with another source: code %d stderr %q", verb, r.code, r.stderr)
		}
	}
	if s := e.show(thread); s.Proposals[len(s.Proposals)-1].Decision != "pending" {
		t.Fatal("the refused decision consumed the proposal")
	}
	// Naming the source on the command line decides it there.
	r = e.run("", "approve", thread, "--source", "file:"+orders)
	if r.code != 0 {
		t.Fatalf("approve --source: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(t, orders))); n != 2 {
		t.Fatalf("orders.json has %d new nodes, want 2", n)
	}
}

// runAll starts the commands at once and returns their results.
func (e *env) runAll(cmds ...[]string) []result {
	out := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command(binary, args...)
			c.Env = e.vars
			var so, se bytes.Buffer
			c.Stdout, c.Stderr = &so, &se
			err := c.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			out[i] = result{so.String(), se.String(), code}
		}()
	}
	wg.Wait()
	return out
}

// Concurrent deciders on one thread: one wins, the others exit 2 "already decided",
// and the graph holds exactly what the winner decided.
func TestConcurrentDecidersOnOneThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	for trial := range 3 {
		thread := e.askProposal("--graph", "demo")
		before := len(logNodes(readGraph(t, e.graph)))
		cmds := [][]string{{"approve", thread}, {"approve", thread}, {"approve", thread}}
		if trial == 2 {
			cmds = [][]string{{"approve", thread}, {"reject", thread}, {"approve", thread}, {"reject", thread}}
		}
		rs := e.runAll(cmds...)
		wins, winner := 0, ""
		for i, r := range rs {
			switch r.code {
			case 0:
				wins++
				winner = cmds[i][0]
			case 2:
				if !strings.Contains(r.stderr, "already") && !strings.Contains(r.stderr, "no proposal is waiting") {
					t.Errorf("loser said %q", r.stderr)
				}
			default:
				t.Errorf("trial %d: %v exited %d: %s", trial, cmds[i], r.code, r.stderr)
			}
		}
		if wins != 1 {
			t.Fatalf("trial %d: %d deciders won", trial, wins)
		}
		created := len(logNodes(readGraph(t, e.graph))) - before
		s := e.show(thread)
		p := s.Proposals[len(s.Proposals)-1]
		want := map[string]int{"approve": 1, "reject": 0}[winner]
		if created != want || (winner == "approve") != (p.Outcome == "applied") || (winner == "reject") != (p.Decision == "rejected") {
			t.Fatalf("trial %d: %s won, %d nodes created, thread says %s/%s", trial, winner, created, p.Decision, p.Outcome)
		}
	}
}

// Two threads approving creates on one graph file at once: no write drops the other.
func TestTwoThreadsWriteOneGraphFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), proposeKeyless(""), {Text: "Done."}, {Text: "Done."}}, Loop: true})
	for trial := range 4 {
		a := e.askProposal("--graph", "demo")
		b := e.askProposal("--graph", "demo")
		before := len(logNodes(readGraph(t, e.graph)))
		for _, r := range e.runAll([]string{"approve", a}, []string{"approve", b}) {
			if r.code != 0 {
				t.Fatalf("trial %d: approve exited %d: %s", trial, r.code, r.stderr)
			}
		}
		g := readGraph(t, e.graph)
		if got := len(logNodes(g)) - before; got != 2 {
			t.Fatalf("trial %d: %d nodes in the file, want 2", trial, got)
		}
		for _, th := range []string{a, b} {
			s := e.show(th)
			key := s.Proposals[0].Result.Created.Nodes[0]
			found := false
			for _, k := range logNodes(g) {
				found = found || k == key
			}
			if !found {
				t.Fatalf("trial %d: thread %s recorded %s as applied, not in the file", trial, th, key)
			}
		}
	}
}

// Another process holds the threads database's write lock while approve runs: the
// approval waits for it and applies once; killed while it waits, it changed nothing,
// and the retry applies once.
func TestApproveWhileTheDatabaseIsLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for seconds")
	}
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless(""), {Text: "Done."}}, Loop: true})
	db, err := sql.Open("sqlite", filepath.Join(e.dir, "data", "nodius-ai", "threads.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock := func() *sql.Tx {
		tx, err := db.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`UPDATE threads SET title = title`); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	start := func(thread string) (*exec.Cmd, chan error) {
		c := exec.Command(binary, "approve", thread)
		c.Env = e.vars
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		return c, done
	}

	thread := e.askProposal("--graph", "demo")
	tx := lock()
	_, done := start(thread)
	time.Sleep(1500 * time.Millisecond)
	if n := len(logNodes(readGraph(t, e.graph))); n != 0 {
		t.Fatalf("applied while the database was locked: %d nodes", n)
	}
	_ = tx.Rollback()
	if err := <-done; err != nil {
		t.Fatalf("approve after the lock was released: %v", err)
	}
	if n := len(logNodes(readGraph(t, e.graph))); n != 1 {
		t.Fatalf("%d nodes, want 1", n)
	}

	thread = e.askProposal("--graph", "demo")
	tx = lock()
	c, done := start(thread)
	time.Sleep(800 * time.Millisecond)
	_ = c.Process.Signal(syscall.SIGKILL)
	<-done
	_ = tx.Rollback()
	if n := len(logNodes(readGraph(t, e.graph))); n != 1 {
		t.Fatalf("killed while waiting: %d nodes, want still 1", n)
	}
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("retry: %d %s", r.code, r.stderr)
	}
	if n := len(logNodes(readGraph(t, e.graph))); n != 2 {
		t.Fatalf("%d nodes after the retry, want 2", n)
	}
}

// kill -9 at random points of approve, over and over: each time the graph parses, the
// thread is consistent, and every approved change is in the file exactly once.
func TestKillLoopAppliesEachApprovalOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("kill loop: skipped with -short")
	}
	t.Parallel()
	e := newEnv(t)
	// Every answer proposes another node, so each approve leaves a new proposal.
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless("")}, Loop: true})
	thread := e.askProposal("--graph", "demo")
	const kills = 100
	e.killLoop(kills, nil, func(code int, stderr string) {
		// Finished before the kill: 3 (next proposal) or 2 (nothing waiting after
		// a killed run's decision was reconciled as applied).
		if code == 2 && strings.Contains(stderr, "no proposal is waiting") {
			if r := e.run("", "ask", "--thread", thread, "--format", "json", "go on"); r.code != 3 {
				t.Fatalf("ask to go on: %d %s", r.code, r.stderr)
			}
		} else if code != 3 {
			t.Fatalf("approve exited %d: %s", code, stderr)
		}
	}, "approve", thread)
	// Settle: one more approve reconciles whatever the last kill left.
	if r := e.run("", "approve", thread); r.code != 3 && r.code != 2 {
		t.Fatalf("final approve: %d %s", r.code, r.stderr)
	}
	g := readGraph(t, e.graph)
	s := e.show(thread)
	inFile := map[string]int{}
	for _, k := range logNodes(g) {
		inFile[k]++
	}
	applied := 0
	for _, p := range s.Proposals {
		switch {
		case p.Outcome == "claimed":
			t.Errorf("proposal %s left claimed", p.ID)
		case p.Outcome == "applied":
			applied++
			k := p.Result.Created.Nodes[0]
			if inFile[k] != 1 {
				t.Errorf("proposal %s: node %s is in the file %d times", p.ID, k, inFile[k])
			}
		}
	}
	if applied != len(inFile) {
		t.Errorf("%d approvals recorded as applied, %d nodes in the file", applied, len(inFile))
	}
	if len(s.Created) != applied {
		t.Errorf("provenance lists %d nodes, %d applied", len(s.Created), applied)
	}
	e.noTempFiles()
	t.Logf("%d kills, %d approvals applied", kills, applied)
}

// A change the graph no longer allows: approved but not applied, exit 1, the model
// told; the whole change is printed before the decision.
func TestApproveStaleProposalExits1(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "d1", Name: "propose_delete_node",
		Arguments: `{"nodeKey":"fetch-api","reason":"unused"}`}}}, llmtest.Turn{Text: "It changed; I will look again."})
	r := e.run("", "ask", "--graph", "demo", "delete fetch-api")
	if r.code != 3 || !strings.Contains(r.stderr, "- edge e4: fetch-api:1 → error-handler:0") || !strings.Contains(r.stderr, "--proposal d1") {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	thread := strings.Fields(r.stderr[strings.Index(r.stderr, "nodius-ai approve ")+len("nodius-ai approve "):])[0]
	// Another editor removes an edge of fetch-api meanwhile.
	b, _ := os.ReadFile(e.graph)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	edges := doc["edges"].([]any)
	var kept []any
	for _, x := range edges {
		if x.(map[string]any)["_key"] != "e4" {
			kept = append(kept, x)
		}
	}
	doc["edges"] = kept
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(e.graph, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "approve", thread, "--proposal", "d1")
	if r.code != 1 || !strings.Contains(r.stderr, "approved but not applied") {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	g := readGraph(t, e.graph)
	found := false
	for _, n := range g.Nodes {
		found = found || n.Key == "fetch-api"
	}
	if !found {
		t.Fatal("fetch-api was deleted")
	}
	if s := e.show(thread); s.Proposals[0].Outcome != "not_applied" || s.Proposals[0].ApplyError == "" {
		t.Fatalf("thread: %+v", s.Proposals[0])
	}
	md := e.run("", "threads", "show", thread)
	if !strings.Contains(md.stdout, "approved but not applied") || !strings.Contains(md.stdout, "Not applied:") {
		t.Fatalf("threads show:\n%s", md.stdout)
	}
	// Nothing left: exit 2 with the sentence.
	if r := e.run("", "approve", thread); r.code != 2 || !strings.Contains(r.stderr, "no proposal is waiting in thread") {
		t.Fatalf("approve again: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "approve", thread, "--proposal", "d1"); r.code != 2 || !strings.Contains(r.stderr, "already decided") {
		t.Fatalf("approve --proposal again: %d %s", r.code, r.stderr)
	}
}

// An update prints the new code as a diff and fields as old → new before it is
// decided, in ask, approve and threads show.
func TestProposalPrintsTheWholeChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "u1", Name: "propose_configure_node_type",
		Arguments: `{"mode":"update","typeKey":"api-call","displayName":"API Call","process":"// new code\nreturn fetchAll();","reason":"v2"}`}}},
		llmtest.Turn{Text: "Updated."})
	r := e.run("", "ask", "--graph", "demo", "use v2")
	if r.code != 3 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	for _, want := range []string{"+ // new code", "+ return fetchAll();", "- // Fetch season averages"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ask output lacks %q:\n%s", want, r.stderr)
		}
	}
	thread := strings.Fields(r.stderr[strings.Index(r.stderr, "nodius-ai approve ")+len("nodius-ai approve "):])[0]
	md := e.run("", "threads", "show", thread)
	if !strings.Contains(md.stdout, "+ return fetchAll();") || !strings.Contains(md.stdout, "**pending**") {
		t.Errorf("threads show:\n%s", md.stdout)
	}
	r = e.run("", "reject", thread, "--feedback", "keep v1")
	if r.code != 0 || !strings.Contains(r.stderr, "+ return fetchAll();") {
		t.Fatalf("reject: %d %s", r.code, r.stderr)
	}
	md = e.run("", "threads", "show", thread)
	if !strings.Contains(md.stdout, "Decision: **rejected**") || !strings.Contains(md.stdout, `feedback: "keep v1"`) {
		t.Errorf("threads show after reject:\n%s", md.stdout)
	}
}

// Applying to the embedded demo graph says the change is not saved.
func TestDemoApplySaysItIsInMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeKeyless("p1"), llmtest.Turn{Text: "Created."})
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=demo")
	thread := e.askProposal("--graph", "demo")
	r := e.run("", "approve", thread)
	if r.code != 0 || !strings.Contains(r.stderr, "memory") || !strings.Contains(r.stderr, "not saved") {
		t.Fatalf("approve on demo: %d %s", r.code, r.stderr)
	}
	_ = fmt.Sprint()
}

// Export then import --replace loses nothing: threads show --format json is the same,
// with the model, tokens, costs, statuses, proposals, decisions, provenance and the
// recorded source.
func TestExportImportIsLossless(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Turn{Text: "I suggest a node.", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "propose_create_node",
			Arguments: `{"nodeKey":"log-result","typeKey":"log-node","sheet":"0","posX":900,"posY":100,"reason":"log"}`}},
			Usage: &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 30, CachedTokens: 100}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "propose_delete_node", Arguments: `{"nodeKey":"error-handler","reason":"unused"}`}}},
		llmtest.Turn{Text: "Kept it.", Reasoning: "The user wants it."},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c3", Name: "propose_move_node", Arguments: `{"nodeKey":"root","posX":5,"posY":6,"reason":"tidy"}`}}},
	)
	thread := e.askProposal("--graph", "demo")
	if r := e.run("", "approve", thread); r.code != 3 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "reject", thread, "--feedback", "it logs errors"); r.code != 0 {
		t.Fatalf("reject: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "ask", "--thread", thread, "tidy up"); r.code != 3 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	before := e.run("", "threads", "show", thread, "--format", "json", "--context")
	export := e.run("", "threads", "export", thread)
	if before.code != 0 || export.code != 0 {
		t.Fatalf("show %d / export %d: %s %s", before.code, export.code, before.stderr, export.stderr)
	}
	doc := filepath.Join(e.dir, "thread.json")
	if err := os.WriteFile(doc, []byte(export.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "threads", "import", "--replace", doc); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	after := e.run("", "threads", "show", thread, "--format", "json", "--context")
	if after.stdout != before.stdout {
		t.Fatalf("threads show changed across export/import:\nbefore %s\nafter  %s", before.stdout, after.stdout)
	}
	for _, want := range []string{`"cost_usd"`, `"fake-model"`, `"it logs errors"`, `"outcome": "applied"`, `"source": "file:`, `"log-result"`, `"reasoning": "The user wants it."`} {
		if !strings.Contains(after.stdout, want) {
			t.Errorf("show lacks %s:\n%s", want, after.stdout)
		}
	}
	// The imported pending proposal is still decided on its source.
	if r := e.run("", "approve", thread, "--proposal", "c3"); r.code != 0 && r.code != 3 {
		t.Fatalf("approve after import: %d %s", r.code, r.stderr)
	}
}
