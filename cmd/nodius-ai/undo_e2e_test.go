package main_test

// End-to-end tests of undo over real processes: the built binary, a file: graph, a
// real SQLite threads database, and kill -9.

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// createThenMoveTurns is the model's script for two changes in one thread: c1
// creates a log node, m1 moves root; more follows.
func createThenMoveTurns(more ...llmtest.Turn) []llmtest.Turn {
	return append([]llmtest.Turn{
		{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "propose_create_node",
			Arguments: `{"typeKey":"log-node","sheet":"0","posX":900,"posY":100,"reason":"log"}`}}},
		{Text: "Created."},
		{ToolCalls: []llmtest.ToolCall{{ID: "m1", Name: "propose_move_node",
			Arguments: `{"nodeKey":"root","posX":10,"posY":20,"reason":"tidy"}`}}},
		{Text: "Moved."},
	}, more...)
}

// createThenMove asks for c1 and approves it, then asks for m1 in the same thread
// and approves it. It returns the thread and the graph file as c1 left it.
func (e *env) createThenMove() (thread string, afterCreate []byte) {
	e.t.Helper()
	thread = e.askProposal("--graph", "demo")
	if r := e.run("", "approve", thread); r.code != 0 {
		e.t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	afterCreate, _ = os.ReadFile(e.graph)
	if r := e.run("", "ask", "--thread", thread, "--format", "json", "move root"); r.code != 3 {
		e.t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "approve", thread); r.code != 0 {
		e.t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	return thread, afterCreate
}

// Two applied changes are undone newest first; the file is back byte for byte
// (node order aside); the model is told on the next turn; threads show has the undo;
// nothing left exits 2; a graph edited since refuses with exit 1 unless --force.
func TestUndoWalksBackAndTellsTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, createThenMoveTurns(llmtest.Turn{Text: "Understood."})...)
	original, _ := os.ReadFile(e.graph)
	thread, afterCreate := e.createThenMove()
	moved, _ := os.ReadFile(e.graph)

	// Dry run: says what, changes nothing.
	r := e.run("", "undo", thread, "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "move node root back to (300, 0)") || !strings.Contains(r.stdout, "nothing was changed") {
		t.Fatalf("dry run: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(e.graph); !bytes.Equal(now, moved) {
		t.Fatal("the dry run changed the file")
	}
	r = e.run("", "undo", thread)
	if r.code != 0 || !strings.Contains(r.stdout, "Undone at") {
		t.Fatalf("undo move: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(e.graph); !bytes.Equal(now, afterCreate) {
		t.Fatalf("undoing the move did not restore the file byte for byte")
	}

	// The created node gets an edge by hand: undo refuses, names it, changes nothing.
	created := logNodes(readGraph(t, e.graph))
	if len(created) != 1 {
		t.Fatalf("created nodes: %v", created)
	}
	withEdge := strings.Replace(string(afterCreate), `"edges": [`, `"edges": [
    {"_key": "by-hand", "sheet": "0", "source": "fetch-api", "sourceHandle": "0", "target": "`+created[0]+`", "targetHandle": "0", "label": ""},`, 1)
	if err := os.WriteFile(e.graph, []byte(withEdge), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "undo", thread)
	if r.code != 1 || !strings.Contains(r.stderr, "node "+created[0]+" got new edges since (by-hand)") {
		t.Fatalf("undo over an edited graph: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(e.graph); string(now) != withEdge {
		t.Fatal("a refused undo changed the file")
	}
	r = e.run("", "undo", thread, "--force")
	if r.code != 0 || !strings.Contains(r.stdout, "Left as it is") || !strings.Contains(r.stdout, created[0]) {
		t.Fatalf("forced undo: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "undo", thread); r.code != 2 || !strings.Contains(r.stderr, "no applied change left to undo") {
		t.Fatalf("nothing left: %d %s", r.code, r.stderr)
	}
	_ = original

	// The transcript shows both undos with their time; the next request carries them.
	r = e.run("", "threads", "show", thread)
	if r.code != 0 || strings.Count(r.stdout, "Undone") < 2 {
		t.Fatalf("threads show: %d %s", r.code, r.stdout)
	}
	if r := e.run("", "ask", "--thread", thread, "what changed?"); r.code != 0 {
		t.Fatalf("ask after undo: %d %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	var told int
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "The user undid the change") {
			told++
		}
	}
	if told != 2 {
		t.Fatalf("the next request carries %d undo messages, want 2", told)
	}
}

// kill -9 at random points of undo: the graph file always parses, and after the
// dust settles every change is either applied and not undone, or undone and gone
// from the file, exactly once; no claim is left.
func TestKillLoopUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("kill loop: skipped with -short")
	}
	t.Parallel()
	e := newEnv(t)
	e.srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{proposeKeyless("")}, Loop: true})
	thread := e.askProposal("--graph", "demo")
	const kills = 100
	undone := 0
	e.killLoop(kills, func() {
		// Apply one more change to undo (approve leaves the next proposal pending:
		// exit 3), then undo it.
		if r := e.run("", "approve", thread); r.code != 3 {
			t.Fatalf("approve: %d %s", r.code, r.stderr)
		}
	}, func(code int, stderr string) {
		if code != 0 {
			t.Fatalf("undo exited %d: %s", code, stderr)
		}
		undone++
	}, "undo", thread)
	// Settle: a dry run reconciles whatever the last kill left.
	e.run("", "undo", thread, "--dry-run")
	g := readGraph(t, e.graph)
	inFile := map[string]int{}
	for _, k := range logNodes(g) {
		inFile[k]++
	}
	db := openDB(t, e)
	defer db.Close()
	rows, err := db.Query(`SELECT p.planned, coalesce(u.state, '') FROM proposals p LEFT JOIN undos u
		ON u.thread_id = p.thread_id AND u.tool_call_id = p.tool_call_id WHERE p.thread_id = ? AND p.outcome = 'applied'`, thread)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	applied, gone := 0, 0
	for rows.Next() {
		var planned, state string
		if err := rows.Scan(&planned, &state); err != nil {
			t.Fatal(err)
		}
		key := plannedNodeKey(t, planned)
		switch state {
		case "claimed":
			t.Errorf("undo of %s left claimed", key)
		case "undone":
			gone++
			if inFile[key] != 0 {
				t.Errorf("node %s recorded as undone is in the file", key)
			}
		default:
			applied++
			if inFile[key] != 1 {
				t.Errorf("node %s applied and not undone is in the file %d times", key, inFile[key])
			}
		}
	}
	if applied != len(inFile) {
		t.Errorf("%d changes applied and not undone, %d nodes in the file", applied, len(inFile))
	}
	var msgs int
	_ = db.QueryRow(`SELECT count(*) FROM messages WHERE thread_id = ? AND kind = 'undo'`, thread).Scan(&msgs)
	if msgs != gone {
		t.Errorf("%d undo messages for %d undos", msgs, gone)
	}
	e.noTempFiles()
	t.Logf("%d kills, %d undos finished, %d undone in all, %d still applied", kills, undone, gone, applied)
}

func openDB(t *testing.T, e *env) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(e.dir, "data", "nodius-ai", "threads.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// plannedNodeKey is the key of the node a stored create_node action creates.
func plannedNodeKey(t *testing.T, planned string) string {
	t.Helper()
	var a struct {
		Payload struct {
			NodeKey string `json:"nodeKey"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(planned), &a); err != nil || a.Payload.NodeKey == "" {
		t.Fatalf("planned action %q: %v", planned, err)
	}
	return a.Payload.NodeKey
}

// Three undos of a thread with one applied change, at once: one reverses it, the
// others exit 2 (being undone, or nothing left), and the file holds the graph as it
// was before the change.
func TestConcurrentUndosOfOneChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeKeyless("k1"), llmtest.Turn{Text: "Done."})
	before, _ := os.ReadFile(e.graph)
	thread := e.askProposal("--graph", "demo")
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	if len(logNodes(readGraph(t, e.graph))) != 1 {
		t.Fatal("the approval created no node")
	}
	res := e.runAll([]string{"undo", thread}, []string{"undo", thread}, []string{"undo", thread})
	won := 0
	for _, r := range res {
		switch r.code {
		case 0:
			won++
		case 2:
		default:
			t.Errorf("undo exited %d: %s", r.code, r.stderr)
		}
	}
	if won != 1 {
		t.Fatalf("%d undos reversed the change, want 1: %+v", won, res)
	}
	after, _ := os.ReadFile(e.graph)
	if !bytes.Equal(after, before) && canonicalNodes(t, after) != canonicalNodes(t, before) {
		t.Fatal("the file is not back as it was")
	}
	var msgs int
	db := openDB(t, e)
	defer db.Close()
	_ = db.QueryRow(`SELECT count(*) FROM messages WHERE thread_id = ? AND kind = 'undo'`, thread).Scan(&msgs)
	if msgs != 1 {
		t.Fatalf("%d undo messages, want 1", msgs)
	}
}

// canonicalNodes is the list of node and edge keys of a graph file, sorted.
func canonicalNodes(t *testing.T, b []byte) string {
	t.Helper()
	var g graphDoc
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, n := range g.Nodes {
		keys = append(keys, "n:"+n.Key)
	}
	for _, e := range g.Edges {
		keys = append(keys, "e:"+e.Key)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// Export then import --replace keeps a thread's undo records: threads show --format
// json is the same (one change undone, one not), the undone change is not offered
// again, and the other is still undone from the imported thread, on its file.
func TestExportImportKeepsUndos(t *testing.T) {
	t.Parallel()
	e := newEnv(t, createThenMoveTurns()...)
	original, _ := os.ReadFile(e.graph)
	thread, _ := e.createThenMove()
	if r := e.run("", "undo", thread); r.code != 0 {
		t.Fatalf("undo: %d %s", r.code, r.stderr)
	}
	before := e.run("", "threads", "show", thread, "--format", "json", "--context")
	export := e.run("", "threads", "export", thread)
	if before.code != 0 || export.code != 0 {
		t.Fatalf("show %d / export %d: %s %s", before.code, export.code, before.stderr, export.stderr)
	}
	for _, want := range []string{`"state": "undone"`, `"undone_at"`, `"proposal_id": "c1"`, `"proposal_id": "m1"`} {
		if !strings.Contains(before.stdout, want) {
			t.Fatalf("threads show lacks %s:\n%s", want, before.stdout)
		}
	}
	doc := filepath.Join(e.dir, "thread.json")
	if err := os.WriteFile(doc, []byte(export.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "threads", "import", "--replace", doc); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	if after := e.run("", "threads", "show", thread, "--format", "json", "--context"); after.stdout != before.stdout {
		t.Fatalf("threads show changed across export/import:\nbefore %s\nafter  %s", before.stdout, after.stdout)
	}
	// The move stays undone; the create is what undo reverses now.
	r := e.run("", "undo", thread)
	if r.code != 0 || !strings.Contains(r.stdout, "remove node") {
		t.Fatalf("undo after import: %d %q %s", r.code, r.stdout, r.stderr)
	}
	now, _ := os.ReadFile(e.graph)
	if canonicalNodes(t, now) != canonicalNodes(t, original) {
		t.Fatalf("undo after import did not restore the graph:\n%s\n%s", canonicalNodes(t, now), canonicalNodes(t, original))
	}
	if r := e.run("", "undo", thread); r.code != 2 {
		t.Fatalf("nothing left after import: %d %s", r.code, r.stderr)
	}

	// A document with a broken undo record is refused in one sentence; nothing is written.
	bad := filepath.Join(e.dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(export.stdout, `"op": "restore_position"`, `"op": "teleport"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(export.stdout, `"op": "restore_position"`) {
		t.Fatal("fixture: the export has no restore_position step")
	}
	beforeBad := e.run("", "threads", "show", thread, "--format", "json", "--context")
	r = e.run("", "threads", "import", "--replace", bad)
	if r.code != 2 || !strings.Contains(r.stderr, `unknown operation "teleport"`) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("import of a bad undo record: %d %q", r.code, r.stderr)
	}
	if again := e.run("", "threads", "show", thread, "--format", "json", "--context"); again.stdout != beforeBad.stdout {
		t.Fatal("a refused import changed the thread")
	}
}

// undo goes to the thread's recorded source: with another graph file configured it
// refuses (exit 2, naming both, nothing changed in either file); with the thread's
// named with --source, it reverses on the thread's file only.
func TestUndoUsesTheThreadsRecordedSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "m1", Name: "propose_move_node",
			Arguments: `{"nodeKey":"root","posX":10,"posY":20,"reason":"tidy"}`}}},
		llmtest.Turn{Text: "Moved."},
	)
	original, _ := os.ReadFile(e.graph)
	thread := e.askProposal("--graph", "demo")
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	moved, _ := os.ReadFile(e.graph)
	other := filepath.Join(e.dir, "other.json")
	if err := os.WriteFile(other, moved, 0o644); err != nil {
		t.Fatal(err)
	}
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=file:"+other)
	r := e.run("", "undo", thread)
	if r.code != 2 || !strings.Contains(r.stderr, "file:"+e.graph) || !strings.Contains(r.stderr, "file:"+other) {
		t.Fatalf("undo with another file configured: %d %q", r.code, r.stderr)
	}
	for _, f := range []string{e.graph, other} {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, moved) {
			t.Fatalf("a refused undo changed %s", f)
		}
	}
	r = e.run("", "undo", thread, "--source", "file:"+e.graph)
	if r.code != 0 {
		t.Fatalf("undo --source (the thread's): %d %s", r.code, r.stderr)
	}
	if now, _ := os.ReadFile(e.graph); !bytes.Equal(now, original) {
		t.Fatal("undo did not restore the thread's file byte for byte")
	}
	if now, _ := os.ReadFile(other); !bytes.Equal(now, moved) {
		t.Fatal("undo changed the other file")
	}
	// The pictures say the change was undone, and list nothing as removed.
	r = e.run("", "threads", "show", thread, "--pictures", "--source", "file:"+e.graph)
	if r.code != 0 || !strings.Contains(r.stdout, "· approved, undone ") || !strings.Contains(r.stdout, "applied, then undone; the graph around it now:") {
		t.Fatalf("pictures of an undone change: %d %s\n%s", r.code, r.stderr, r.stdout)
	}
}
