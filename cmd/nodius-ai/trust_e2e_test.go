package main_test

// End-to-end tests of issue 25's exactly-once and trust points, over the built
// binary: two proposals in one model response, a run that fails before any answer.

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// twoProposals is one model response proposing two log nodes at once.
func twoProposals() llmtest.Turn {
	call := func(id string, x int) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "propose_create_node",
			Arguments: `{"typeKey":"log-node","sheet":"0","posX":900,"posY":` + itoa(x) + `,"reason":"log ` + id + `"}`}
	}
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{call("call_one", 100), call("call_two", 300)}}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

var decideWith = regexp.MustCompile(`Decide with: nodius-ai approve (\S*) --proposal (\S+) --digest ([0-9a-f]+)`)

// With two proposals pending from one response, deciding the first exits 3 and
// prints the command for the second, with the thread id; deciding that one ends
// the run.
func TestTwoProposalsDecidedOneByOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, twoProposals(), llmtest.Turn{Text: "Both logged."})
	r := e.run("", "ask", "add two log nodes")
	if r.code != 3 {
		t.Fatalf("ask: code %d (want 3)\n%s", r.code, r.stderr)
	}
	m := decideWith.FindStringSubmatch(r.stderr)
	if m == nil || m[1] == "" || m[2] != "call_one" {
		t.Fatalf("ask printed no usable command for the first proposal:\n%s", r.stderr)
	}
	thread := m[1]
	r = e.run("", "approve", thread, "--proposal", "call_one", "--digest", m[3])
	if r.code != 3 {
		t.Fatalf("approve the first: code %d (want 3: another waits)\n%s", r.code, r.stderr)
	}
	m = decideWith.FindStringSubmatch(r.stderr)
	if m == nil || m[1] != thread || m[2] != "call_two" {
		t.Fatalf("approve the first printed no command for the second with thread %s:\n%s", thread, r.stderr)
	}
	args := strings.Fields(m[0])[3:] // what it said to run, as printed
	r = e.run("", args...)
	if r.code != 0 {
		t.Fatalf("%v: code %d (want 0)\n%s", args, r.code, r.stderr)
	}
	if got := logNodes(readGraph(t, e.graph)); len(got) != 2 {
		t.Errorf("log nodes after both approvals: %v (want 2)", got)
	}
}

// ask --on-proposal approve|reject decides every proposal of the response.
func TestTwoProposalsOnProposal(t *testing.T) {
	t.Parallel()
	for _, verb := range []string{"approve", "reject"} {
		t.Run(verb, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, twoProposals(), llmtest.Turn{Text: "Done."})
			r := e.run("", "ask", "--on-proposal", verb, "add two log nodes")
			if r.code != 0 {
				t.Fatalf("ask --on-proposal %s: code %d (want 0)\n%s", verb, r.code, r.stderr)
			}
			threads := e.listThreads()
			if len(threads) != 1 {
				t.Fatalf("threads: %v", threads)
			}
			s := e.show(threads[0])
			for _, p := range s.Proposals {
				if p.Decision == "pending" {
					t.Errorf("proposal %s still pending after --on-proposal %s", p.ID, verb)
				}
			}
			want := 0
			if verb == "approve" {
				want = 2
			}
			if got := logNodes(readGraph(t, e.graph)); len(got) != want {
				t.Errorf("log nodes: %v (want %d)", got, want)
			}
		})
	}
}

// listThreads returns the ids of every thread (archived ones too).
func (e *env) listThreads() []string {
	e.t.Helper()
	r := e.run("", "threads", "list", "--all", "--format", "json")
	if r.code != 0 {
		e.t.Fatalf("threads list: %d %s", r.code, r.stderr)
	}
	var ids []string
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			e.t.Fatalf("threads list json: %v\n%s", err, r.stdout)
		}
		collectIDs(v, &ids)
	}
	return ids
}

func collectIDs(v any, ids *[]string) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			collectIDs(x, ids)
		}
	case map[string]any:
		if id, ok := v["id"].(string); ok {
			*ids = append(*ids, id)
		}
	}
}

// A run that fails before anything was answered (the provider cannot be reached)
// leaves no thread behind.
func TestFailedRunLeavesNoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.withoutVar("NODIUS_AI_BASE_URL")
	e.vars = append(e.vars, "NODIUS_AI_BASE_URL=http://127.0.0.1:1/v1")
	r := e.run("", "ask", "what does fetch-api do?")
	if r.code == 0 || r.code == 3 {
		t.Fatalf("ask with no provider: code %d\n%s", r.code, r.stderr)
	}
	if ids := e.listThreads(); len(ids) != 0 {
		t.Errorf("threads after a run that failed before any answer: %v (want none)", ids)
	}
}

// deadClaimer names a process of this host that has exited, as a claim left by a
// process killed with kill -9 names it.
func deadClaimer(t *testing.T) string {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(c.Process.Pid)
}

// An undo killed after it wrote the graph and before it recorded the undo: the next
// undo finishes that one, says so, and does not also reverse the change before it.
func TestUndoFinishesAnInterruptedUndoAndStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t, createThenMoveTurns(llmtest.Turn{Text: "Understood."})...)
	thread, afterCreate := e.createThenMove()
	// What the killed undo of m1 left: the file reverted, the undo claimed.
	db := openDB(t, e)
	defer db.Close()
	if _, err := db.Exec(`UPDATE undos SET state = 'claimed', undo_op = 'killed1', claimed_by = ?, claimed_ms = ?, plan = reversal
		WHERE thread_id = ? AND tool_call_id = 'm1'`, deadClaimer(t), time.Now().UnixMilli(), thread); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.graph, afterCreate, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "undo", thread)
	if r.code != 0 || !strings.Contains(r.stdout, "interrupted") || !strings.Contains(r.stdout, "move node root") {
		t.Fatalf("undo after a killed undo: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := logNodes(readGraph(t, e.graph)); len(got) != 1 {
		t.Fatalf("the undo went one step too far: log nodes %v (want the one c1 created)", got)
	}
	var states []string
	rows, _ := db.Query(`SELECT tool_call_id || '=' || state FROM undos WHERE thread_id = ? ORDER BY tool_call_id`, thread)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		states = append(states, s)
	}
	rows.Close()
	if strings.Join(states, ",") != "c1=,m1=undone" {
		t.Errorf("undo states %v, want c1 applied and m1 undone", states)
	}
	// The next undo walks back c1, as asked.
	if r := e.run("", "undo", thread); r.code != 0 || len(logNodes(readGraph(t, e.graph))) != 0 {
		t.Fatalf("second undo: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// An approve killed after it wrote the graph and before it recorded the decision:
// approving again reports that the change landed (exit 0), and applies nothing twice.
func TestApproveRetriedAfterAKilledApproveReportsTheChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeKeyless("k1"), llmtest.Turn{Text: "Logged."})
	thread := e.askProposal("--graph", "demo")
	db := openDB(t, e)
	defer db.Close()
	var action string
	if err := db.QueryRow(`SELECT action FROM proposals WHERE thread_id = ? AND tool_call_id = 'k1'`, thread).Scan(&action); err != nil {
		t.Fatal(err)
	}
	// The planned action and the node the killed approve wrote.
	const op, key = "1700000000000deadbeef", "ai_1700000000000deadbeef_1"
	var planned map[string]any
	if err := json.Unmarshal([]byte(action), &planned); err != nil {
		t.Fatal(err)
	}
	planned["payload"].(map[string]any)["nodeKey"] = key
	pb, _ := json.Marshal(planned)
	if _, err := db.Exec(`UPDATE proposals SET decision = 'approved', outcome = 'claimed', op_id = ?, claimed_by = ?, claimed_ms = ?,
		planned = ?, decided_ms = ? WHERE thread_id = ? AND tool_call_id = 'k1'`,
		op, deadClaimer(t), time.Now().UnixMilli(), string(pb), time.Now().UnixMilli(), thread); err != nil {
		t.Fatal(err)
	}
	editGraph(t, e.graph, func(doc map[string]any) {
		doc["nodes"] = append(doc["nodes"].([]any), map[string]any{"_key": key, "type": "log-node", "sheet": "0",
			"posX": 900.0, "posY": 100.0, "size": map[string]any{"width": 200.0, "height": 100.0}})
	})
	r := e.run("", "approve", thread)
	if r.code != 0 || !strings.Contains(r.stderr, "k1") || !strings.Contains(r.stderr, "not applied again") {
		t.Fatalf("approve after a killed approve: code %d (want 0, saying the change landed)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := logNodes(readGraph(t, e.graph)); len(got) != 1 {
		t.Fatalf("log nodes %v, want the one the killed approve wrote", got)
	}
	if s := e.show(thread); len(s.Proposals) != 1 || s.Proposals[0].Outcome != "applied" {
		t.Fatalf("proposals: %+v", s.Proposals)
	}
	// And a retried reject is refused: the change is applied.
	if r := e.run("", "reject", thread); r.code != 2 {
		t.Fatalf("reject after: %d %s", r.code, r.stderr)
	}
}

// An undo record whose steps name other nodes than its change (a thread database
// written from outside) is refused: undo deletes nothing it did not create.
func TestUndoRefusesARecordOfAnotherChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeKeyless("k1"), llmtest.Turn{Text: "Done."})
	thread := e.askProposal("--graph", "demo")
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	db := openDB(t, e)
	defer db.Close()
	if _, err := db.Exec(`UPDATE undos SET reversal = '{"steps":[{"op":"restore_fields","key":"root","before":{"process":"evil()"}}]}' WHERE thread_id = ?`, thread); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(e.graph)
	r := e.run("", "undo", thread)
	if r.code != 1 || !strings.Contains(r.stderr, "does not match its change") {
		t.Fatalf("undo with a foreign record: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(e.graph); string(after) != string(before) {
		t.Fatal("a refused undo changed the graph")
	}
}

// A decision is pinned by what was shown: threads import --replace cannot swap the
// action behind a proposal id, and the printed command (id and digest) refuses an
// action swapped by any other way.
func TestSwappedActionIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeKeyless("k1"), llmtest.Turn{Text: "Done."})
	r := e.run("", "ask", "--graph", "demo", "add a log node")
	m := decideWith.FindStringSubmatch(r.stderr)
	if r.code != 3 || m == nil {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	thread := m[1]
	doc := filepath.Join(e.dir, "thread.json")
	exp := e.run("", "threads", "export", thread)
	if exp.code != 0 {
		t.Fatalf("export: %d %s", exp.code, exp.stderr)
	}
	b := []byte(exp.stdout)
	swapped := strings.NewReplacer(`"typeKey": "log-node"`, `"typeKey": "evil-node"`,
		`\"typeKey\":\"log-node\"`, `\"typeKey\":\"evil-node\"`).Replace(string(b))
	if swapped == string(b) {
		t.Fatalf("fixture: no typeKey in the export:\n%s", b)
	}
	_ = os.WriteFile(doc, []byte(swapped), 0o600)
	if r := e.run("", "threads", "import", doc, "--replace"); r.code == 0 || !strings.Contains(r.stderr, "k1") {
		t.Fatalf("import --replace swapping k1's action: %d %s", r.code, r.stderr)
	}
	// Swapped in the database itself: the printed command refuses it.
	db := openDB(t, e)
	defer db.Close()
	if _, err := db.Exec(`UPDATE proposals SET action = replace(action, '"log-node"', '"evil-node"'), digest = '' WHERE thread_id = ?`, thread); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(e.graph)
	r = e.run("", strings.Fields(m[0])[3:]...)
	if r.code != 2 || !strings.Contains(r.stderr, "changed since it was shown") {
		t.Fatalf("%v over a swapped action: %d %s", strings.Fields(m[0])[3:], r.code, r.stderr)
	}
	if after, _ := os.ReadFile(e.graph); string(after) != string(before) {
		t.Fatal("a swapped action was applied")
	}
}

// kill -9 during undo, then undo again: each undo that runs to its end undoes
// exactly one change — the one a killed undo left claimed, or else the next — never
// two. Before issue 25, an undo that finished a killed one went on to the change
// before it.
func TestKillLoopUndoNeverGoesOneStepTooFar(t *testing.T) {
	if testing.Short() {
		t.Skip("kill loop: skipped with -short")
	}
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless("")}, Loop: true})
	thread := e.askProposal("--graph", "demo")
	db := openDB(t, e)
	defer db.Close()
	count := func(state string) int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM undos WHERE thread_id = ? AND state = ?`, thread, state).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const rounds = 60
	claimedAfterKill, finished, runs := 0, 0, 0
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 25))
	for i := 0; i < rounds; i++ {
		// Two more changes: going one step too far would show.
		for j := 0; j < 2; j++ {
			if r := e.run("", "approve", thread); r.code != 3 {
				t.Fatalf("approve: %d %s", r.code, r.stderr)
			}
		}
		c := exec.Command(binary, "undo", thread)
		c.Env = e.vars
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		_ = c.Process.Signal(syscall.SIGKILL)
		_ = c.Wait()
		claimed := count("claimed")
		if claimed > 0 {
			claimedAfterKill++
		}
		before := count("undone")
		r := e.run("", "undo", thread)
		if r.code != 0 {
			t.Fatalf("undo after a kill: %d %s", r.code, r.stderr)
		}
		runs++
		if got := count("undone") - before; got != 1 {
			t.Fatalf("round %d: one undo undid %d changes (a claim was left: %v)\n%s", i, got, claimed > 0, r.stdout)
		}
		if strings.Contains(r.stdout, "interrupted") {
			finished++
		}
	}
	t.Logf("%d rounds of kill -9 then undo: %d kills left a claim, %d of them with the graph reverted, which the next undo finished and reported; every undo undid exactly one change",
		runs, claimedAfterKill, finished)
}
