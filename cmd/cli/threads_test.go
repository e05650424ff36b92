package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/threads"
)

// threadsEnv is a test's world: a home, a database and the streams' terminal flags.
type threadsEnv struct {
	t      *testing.T
	home   string
	db     string
	inTTY  bool
	outTTY bool
	env    map[string]string
	size   [2]int // terminal columns and rows, with outTTY
}

func newThreadsEnv(t *testing.T) *threadsEnv {
	t.Helper()
	home := t.TempDir()
	return &threadsEnv{t: t, home: home, db: filepath.Join(home, "threads.db"), env: map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_DATA_HOME": filepath.Join(home, "data"), "TERM": "xterm-256color",
	}}
}

// run executes nodius-ai with args (and --db unless the args hold one).
func (e *threadsEnv) run(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	var out, errb bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb, InTTY: e.inTTY, OutTTY: e.outTTY,
		Getenv: func(k string) string { return e.env[k] }, TermSize: func() (int, int) { return e.size[0], e.size[1] }}
	if e.db != "" {
		args = append([]string{"--db", e.db}, args...)
	}
	code = Execute(context.Background(), ios, args)
	return out.String(), errb.String(), code
}

// seed imports documents into the database, as a web client's threads would arrive.
func (e *threadsEnv) seed(docs ...string) {
	e.t.Helper()
	s, err := threads.Open(context.Background(), e.db, threads.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	defer s.Close()
	for _, d := range docs {
		doc, err := threads.ParseDocument(strings.NewReader(d))
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := s.Import(context.Background(), doc, threads.ImportOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}

func threadDoc(key, graph, question, answer string, updatedAgo time.Duration) string {
	now := time.Now()
	b, _ := json.Marshal(map[string]any{
		"_key": key, "graphKey": graph, "workspace": "default", "userId": "admin",
		"conversationHistory": []map[string]any{
			{"role": "system", "content": "SYSTEM PROMPT"},
			{"role": "system", "content": "RETRIEVAL CONTEXT"},
			{"role": "user", "content": question},
			{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": key + "-c1", "type": "function", "function": map[string]any{"name": "read_node_detail", "arguments": `{"nodeKey":"fetch-api"}`}}}},
			{"role": "tool", "tool_call_id": key + "-c1", "content": `{"key":"fetch-api","type":"api-call"}`},
			{"role": "assistant", "content": answer},
		},
		"pendingInterrupt": nil,
		"createdTime":      now.Add(-updatedAgo - time.Hour).UnixMilli(),
		"lastUpdatedTime":  now.Add(-updatedAgo).UnixMilli(),
	})
	return string(b)
}

const evil = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m \x1b[2Jclear"

func seedStandard(e *threadsEnv) {
	e.seed(
		threadDoc("ai_1709000000001_1", "demo", "What does fetch-api do?", "It calls the NBA stats endpoint.", 3*time.Minute),
		threadDoc("ai_1709000000002_1", "demo", "Evil "+evil, "answer "+evil, 2*time.Hour),
		threadDoc("ai_1709000000003_1", "other", "Which node filters players?", "filter-players keeps the stars.", 3*24*time.Hour),
	)
}

func TestThreadsList(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	out, errOut, code := e.run("", "threads", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", out)
	}
	for _, f := range []string{"ID", "TITLE", "GRAPH", "MESSAGES", "UPDATED"} {
		if !strings.Contains(lines[0], f) {
			t.Errorf("header %q lacks %s", lines[0], f)
		}
	}
	for i, want := range [][]string{
		{"ai_1709000000001_1", "What does fetch-api do?", "demo", " 3 ", "3m ago"},
		{"ai_1709000000002_1", "Evil red clear", "demo", "2h ago"},
		{"ai_1709000000003_1", "Which node filters players?", "other", "3d ago"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("row %d %q lacks %q", i+1, lines[i+1], w)
			}
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("piped table carries escape sequences: %q", out)
	}

	out, _, _ = e.run("", "threads", "list", "--graph", "other")
	if strings.Count(out, "ai_") != 1 || !strings.Contains(out, "ai_1709000000003_1") {
		t.Errorf("--graph other:\n%s", out)
	}
	if _, _, code := e.run("", "threads", "list", "--format", "yaml"); code != ExitUsage {
		t.Errorf("--format yaml: exit %d, want 2", code)
	}
}

func TestThreadsListTerminal(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	e.outTTY = true
	seedStandard(e)
	out, _, code := e.run("", "threads", "list")
	if code != 0 {
		t.Fatal(code)
	}
	// Our own bold header is fine on a colour terminal; nothing from stored text is.
	body := strings.SplitN(out, "\n", 2)[1]
	if strings.Contains(body, "\x1b") {
		t.Errorf("stored control sequences reached the terminal: %q", body)
	}
	e.env["NO_COLOR"] = "1"
	out, _, _ = e.run("", "threads", "list")
	if strings.Contains(out, "\x1b") {
		t.Errorf("NO_COLOR output has escapes: %q", out)
	}
}

func TestThreadsListJSON(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	out, _, code := e.run("", "threads", "list", "--format", "json", "--all")
	if code != 0 {
		t.Fatal(code)
	}
	var ts []convo.Thread
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(ts) != 3 || ts[0].ID != "ai_1709000000001_1" || ts[0].MessageCount != 3 || ts[0].GraphKey != "demo" {
		t.Errorf("threads = %+v", ts)
	}
	if ts[1].Title != cutForTitle("Evil "+evil) {
		t.Errorf("json must keep the title exact: %q", ts[1].Title)
	}
	if !strings.Contains(out, `\u001b`) {
		t.Errorf("control characters must be JSON-escaped, not dropped:\n%s", out)
	}
	// Empty database: [] on stdout, a hint on stderr for the table.
	e2 := newThreadsEnv(t)
	if out, _, _ := e2.run("", "threads", "list", "--format", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty json list = %q", out)
	}
	if out, errOut, _ := e2.run("", "threads", "list"); out != "" || !strings.Contains(errOut, "No threads yet") {
		t.Errorf("empty table: out %q err %q", out, errOut)
	}
}

// cutForTitle is what the store keeps of a first line (titles are one line).
func cutForTitle(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestThreadsShow(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	out, errOut, code := e.run("", "threads", "show", "ai_1709000000001")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# What does fetch-api do?", "`ai_1709000000001_1`", "## You", "## Assistant", "read_node_detail", "It calls the NBA stats endpoint."} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SYSTEM PROMPT") || strings.Contains(out, "RETRIEVAL CONTEXT") {
		t.Errorf("system prompt shown without --context:\n%s", out)
	}
	out, _, _ = e.run("", "threads", "show", "ai_1709000000001", "--context")
	if !strings.Contains(out, "SYSTEM PROMPT") || !strings.Contains(out, "RETRIEVAL CONTEXT") {
		t.Errorf("--context does not show the system prompt and context:\n%s", out)
	}

	// Stored control sequences are stripped, piped or on a terminal without colour.
	for _, tty := range []bool{false, true} {
		e.outTTY = tty
		e.env["NO_COLOR"] = "1"
		out, _, _ = e.run("", "threads", "show", "ai_1709000000002_1")
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "answer red clear") {
			t.Errorf("tty=%v: show output %q", tty, out)
		}
	}
	e.outTTY = false

	out, _, _ = e.run("", "threads", "show", "ai_1709000000002_1", "--format", "json")
	var tr threads.Transcript
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(tr.Messages) != 4 || tr.Messages[len(tr.Messages)-1].Content != "answer "+evil {
		t.Errorf("json transcript must keep text exact and hide system messages: %+v", tr.Messages)
	}
	out, _, _ = e.run("", "threads", "show", "ai_1709000000002_1", "--format", "json", "--context")
	if err := json.Unmarshal([]byte(out), &tr); err != nil || len(tr.Messages) != 6 {
		t.Errorf("json --context: %d messages, %v", len(tr.Messages), err)
	}
}

func TestThreadsIDResolution(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	tests := []struct {
		id       string
		code     int
		inErr    []string
		inOutput string
	}{
		{id: "ai_1709000000003_1", inOutput: "Which node filters players?"},
		{id: "17090000000031", code: 2, inErr: []string{"no thread"}},
		{id: "1709000000003", inOutput: "Which node filters players?"},
		{id: "ai_1709", code: 2, inErr: []string{"ambiguous", "ai_1709000000001_1", "ai_1709000000002_1", "ai_1709000000003_1"}},
		{id: "ai_", code: 2, inErr: []string{"at least 4"}},
		{id: "zzzz", code: 2, inErr: []string{"no thread \"zzzz\""}},
	}
	for _, tt := range tests {
		out, errOut, code := e.run("", "threads", "show", tt.id)
		if code != tt.code {
			t.Errorf("show %s: exit %d, want %d (%s)", tt.id, code, tt.code, errOut)
		}
		for _, w := range tt.inErr {
			if !strings.Contains(errOut, w) {
				t.Errorf("show %s: stderr %q lacks %q", tt.id, errOut, w)
			}
		}
		if tt.inOutput != "" && !strings.Contains(out, tt.inOutput) {
			t.Errorf("show %s: output lacks %q", tt.id, tt.inOutput)
		}
	}
}

func TestThreadsSearch(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	out, errOut, code := e.run("", "threads", "search", "players")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "THREAD") || !strings.Contains(out, "ai_1709000000003_1") || !strings.Contains(out, "Which node filters players?") || strings.Contains(out, "\x1b") {
		t.Errorf("search table:\n%q", out)
	}
	out, _, _ = e.run("", "threads", "search", "answer", "pwned")
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "ai_1709000000002_1") {
		t.Errorf("search output carries control sequences or misses: %q", out)
	}
	out, _, _ = e.run("", "threads", "search", "NBA", "--format", "json")
	var hits []threads.Hit
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) != 1 || hits[0].ThreadID != "ai_1709000000001_1" ||
		hits[0].Snippet != "It calls the NBA stats endpoint." {
		t.Errorf("search json = %+v, %v\n%s", hits, err, out)
	}
	for _, q := range []string{`"`, "NEAR(", "*", "a AND"} {
		if _, errOut, code := e.run("", "threads", "search", q); code != 0 {
			t.Errorf("search %q: exit %d %s", q, code, errOut)
		}
	}
	if _, errOut, _ := e.run("", "threads", "search", "nothingmatchesthis"); !strings.Contains(errOut, "No message matches") {
		t.Errorf("no match: %q", errOut)
	}
}

func TestThreadsExportImport(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	doc, errOut, code := e.run("", "threads", "export", "ai_1709000000002")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"_key", "graphKey", "workspace", "userId", "conversationHistory", "pendingInterrupt", "createdTime", "lastUpdatedTime"} {
		if _, ok := d[k]; !ok {
			t.Errorf("export lacks %s", k)
		}
	}
	file := filepath.Join(t.TempDir(), "thread.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	e2 := newThreadsEnv(t)
	out, errOut, code := e2.run("", "threads", "import", file)
	if code != 0 || strings.TrimSpace(out) != "ai_1709000000002_1" {
		t.Fatalf("import: exit %d out %q err %q", code, out, errOut)
	}
	doc2, _, _ := e2.run("", "threads", "export", "ai_1709000000002_1")
	if doc2 != doc {
		t.Errorf("export after import differs:\n%s\n%s", doc, doc2)
	}
	if _, errOut, code := e2.run("", "threads", "import", file); code != ExitUsage || !strings.Contains(errOut, "--replace") {
		t.Errorf("second import: exit %d %q", code, errOut)
	}
	if _, _, code := e2.run("", "threads", "import", "--replace", file); code != 0 {
		t.Errorf("import --replace: exit %d", code)
	}
	// From stdin, and a broken document.
	e3 := newThreadsEnv(t)
	if out, _, code := e3.run(doc, "threads", "import", "-"); code != 0 || strings.TrimSpace(out) != "ai_1709000000002_1" {
		t.Errorf("import from stdin: exit %d %q", code, out)
	}
	if _, errOut, code := e3.run(`{"_key": 5}`, "threads", "import", "-"); code != ExitUsage || !strings.Contains(errOut, "standard input") {
		t.Errorf("bad document: exit %d %q", code, errOut)
	}
	if _, errOut, code := e3.run("", "threads", "import", filepath.Join(t.TempDir(), "missing.json")); code != ExitUsage || !strings.Contains(errOut, "missing.json") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}

	md, _, code := e.run("", "threads", "export", "ai_1709000000002", "--format", "markdown")
	if code != 0 || !strings.Contains(md, "SYSTEM PROMPT") || strings.ContainsAny(md, "\x1b\x07") {
		t.Errorf("markdown export: exit %d\n%q", code, md)
	}
}

func TestThreadsRenameArchiveDelete(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	if _, errOut, code := e.run("", "threads", "rename", "ai_1709000000001", "NBA", "review"); code != 0 || !strings.Contains(errOut, "Renamed ai_1709000000001_1") {
		t.Fatalf("rename: exit %d %q", code, errOut)
	}
	if out, _, _ := e.run("", "threads", "list"); !strings.Contains(out, "NBA review") {
		t.Errorf("renamed title not listed:\n%s", out)
	}
	if _, _, code := e.run("", "threads", "rename", "ai_1709000000001", " "); code != ExitUsage {
		t.Errorf("empty title: exit %d", code)
	}
	if _, _, code := e.run("", "threads", "archive", "ai_1709000000001"); code != 0 {
		t.Fatal(code)
	}
	if out, _, _ := e.run("", "threads", "list"); strings.Contains(out, "ai_1709000000001_1") {
		t.Errorf("archived thread listed:\n%s", out)
	}
	if out, _, _ := e.run("", "threads", "list", "--all"); !strings.Contains(out, "[archived] NBA review") {
		t.Errorf("--all does not show the archived thread:\n%s", out)
	}
	if _, _, code := e.run("", "threads", "archive", "--undo", "ai_1709000000001"); code != 0 {
		t.Fatal(code)
	}
	if out, _, _ := e.run("", "threads", "list"); !strings.Contains(out, "ai_1709000000001_1") {
		t.Errorf("unarchived thread not listed:\n%s", out)
	}

	// Not a terminal and no --yes: refused, nothing deleted.
	_, errOut, code := e.run("", "threads", "delete", "ai_1709000000001")
	if code != ExitUsage || !strings.Contains(errOut, "--yes") {
		t.Errorf("delete without --yes in a pipe: exit %d %q", code, errOut)
	}
	// On a terminal: asks; "n" keeps, "y" deletes.
	e.inTTY = true
	_, errOut, code = e.run("n\n", "threads", "delete", "ai_1709000000001")
	if code != 0 || !strings.Contains(errOut, "[y/N]") || !strings.Contains(errOut, "Nothing deleted") {
		t.Errorf("answer n: exit %d %q", code, errOut)
	}
	_, errOut, code = e.run("y\n", "threads", "delete", "ai_1709000000001", "ai_1709000000002")
	if code != 0 || !strings.Contains(errOut, "Delete 2 threads") || !strings.Contains(errOut, "Deleted ai_1709000000002_1") {
		t.Errorf("answer y: exit %d %q", code, errOut)
	}
	e.inTTY = false
	if _, _, code := e.run("", "threads", "delete", "--yes", "ai_1709000000003", "nope"); code != ExitUsage {
		t.Errorf("delete with an unknown id: exit %d", code)
	}
	// The same thread named twice (by a prefix and in full) is deleted once.
	if _, errOut, code := e.run("", "threads", "delete", "--yes", "ai_1709000000003", "ai_1709000000003_1"); code != 0 || strings.Count(errOut, "Deleted") != 1 {
		t.Errorf("delete --yes: exit %d %q", code, errOut)
	}
	if out, _, _ := e.run("", "threads", "list", "--all", "--format", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("threads left: %s", out)
	}
}

func TestThreadsSyncNeedsSyncURL(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	_, errOut, code := e.run("", "threads", "sync")
	if code != ExitUsage || !strings.Contains(errOut, "--sync arango://") {
		t.Errorf("sync: exit %d %q", code, errOut)
	}
}

func TestThreadsDatabaseLocation(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	e.db = "" // default: $XDG_DATA_HOME/nodius-ai/threads.db
	if _, errOut, code := e.run("", "threads", "list"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join(e.env["XDG_DATA_HOME"], "nodius-ai", "threads.db")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("default database not created: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Dir(path)); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", st.Mode().Perm())
	}
	// NODIUS_AI_DB is honoured.
	e.env["NODIUS_AI_DB"] = filepath.Join(e.home, "env.db")
	e.run("", "threads", "list")
	if _, err := os.Stat(e.env["NODIUS_AI_DB"]); err != nil {
		t.Errorf("NODIUS_AI_DB not used: %v", err)
	}
	// --db after the subcommand wins over NODIUS_AI_DB.
	flagDB := filepath.Join(e.home, "flag.db")
	e.run("", "threads", "list", "--db", flagDB)
	if _, err := os.Stat(flagDB); err != nil {
		t.Errorf("--db after the subcommand not used: %v", err)
	}
	// A file that is not a database: exit 1, the file named, what to do said.
	bad := filepath.Join(e.home, "notes.txt")
	if err := os.WriteFile(bad, []byte("not a database at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.db = bad
	_, errOut, code := e.run("", "threads", "list")
	if code != ExitRuntime || !strings.Contains(errOut, bad) || !strings.Contains(errOut, "--db") {
		t.Errorf("not a database: exit %d %q", code, errOut)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("the error should be one line: %q", errOut)
	}
}

func TestTimeAgo(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.Local)
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{10 * time.Second, "just now"}, {3 * time.Minute, "3m ago"}, {5 * time.Hour, "5h ago"}, {49 * time.Hour, "2d ago"}, {60 * 24 * time.Hour, "2025-01-09"}} {
		if got := timeAgo(now, now.Add(-tt.d)); got != tt.want {
			t.Errorf("timeAgo(-%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := timeAgo(now, time.Time{}); got != "-" {
		t.Errorf("zero time = %q", got)
	}
}

func TestThreadsListTablePages(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	s, err := threads.Open(context.Background(), e.db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < tablePage+5; i++ {
		if _, err := s.CreateThread(context.Background(), convo.Thread{GraphKey: "demo", Title: fmt.Sprintf("thread %d", i), Status: convo.Active}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	out, errOut, code := e.run("", "threads", "list")
	if code != 0 || strings.Count(out, "\n") != tablePage+1 || !strings.Contains(errOut, "--limit 0") {
		t.Fatalf("table: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errOut)
	}
	out, _, _ = e.run("", "threads", "list", "--limit", "0")
	if strings.Count(out, "\n") != tablePage+5+1 {
		t.Fatalf("--limit 0: %d lines", strings.Count(out, "\n"))
	}
	out, _, _ = e.run("", "threads", "list", "--format", "json")
	var all []map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil || len(all) != tablePage+5 {
		t.Fatalf("json: %d threads, %v", len(all), err)
	}
}
