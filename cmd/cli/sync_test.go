package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// failUpsert makes the fake ArangoDB answer 503 to the push of one thread ("" for
// none), as a database that fails one write while others succeed.
func failUpsert(fa *arangotest.Server, key string) {
	if key == "" {
		fa.FailQueries(nil)
		return
	}
	fa.FailQueries(func(q string, b map[string]any) (int, int, bool) {
		return 503, 1, strings.HasPrefix(q, "UPSERT") && b["key"] == key
	})
}

// syncEnv runs commands with a threads database, the fake provider and --sync.
type syncEnv struct {
	*threadsEnv
	llm  *llmtest.Server
	sync string
}

func newSyncEnv(t *testing.T, arangoURL string, turns ...llmtest.Turn) *syncEnv {
	e := newThreadsEnv(t)
	e.env["XDG_STATE_HOME"] = filepath.Join(e.home, "state")
	return &syncEnv{threadsEnv: e, llm: llmtest.Start(t, turns...), sync: arangoURL}
}

func (e *syncEnv) runSync(args ...string) (string, string, int) {
	e.t.Helper()
	return e.run("", append([]string{"--sync", e.sync}, args...)...)
}

func (e *syncEnv) ask(args ...string) (string, string, int) {
	e.t.Helper()
	return e.run("", append([]string{"ask", "--source", "demo", "--base-url", e.llm.OpenAIURL(), "--api-key", "test", "--model", "fake"}, args...)...)
}

// webThread is a thread the web client wrote (the server's AIThreadDocument), with a
// tool call and its result in the OpenAI format the server keeps.
func webThread(key, ws string, updated int64) map[string]any {
	return map[string]any{
		"_key": key, "graphKey": "demo", "workspace": ws, "userId": "admin",
		"conversationHistory": []any{
			map[string]any{"role": "system", "content": "You are the Nodius assistant (web)."},
			map[string]any{"role": "user", "content": "what does fetch-api do?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_web_1", "type": "function",
				"function": map[string]any{"name": "read_node_detail", "arguments": `{"nodeKey":"fetch-api"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_web_1", "content": `{"key":"fetch-api","type":"api-call"}`},
			map[string]any{"role": "assistant", "content": "fetch-api calls the NBA stats endpoint (said on the web)."},
		},
		"pendingInterrupt": nil, "createdTime": updated - 60_000, "lastUpdatedTime": updated,
	}
}

// TestThreadsSyncWebThreadContinued: a thread written by the web client is pulled,
// continued with ask (the model gets the web history), pushed back with the new turn
// in the server's OpenAI format; a repeated sync does nothing.
func TestThreadsSyncWebThreadContinued(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	const id = "ai_1709000000000_7"
	webTime := time.Now().Add(-time.Hour).UnixMilli()
	fa.Insert(arangotest.Threads, webThread(id, "acme", webTime))
	e := newSyncEnv(t, fa.URL("acme"), llmtest.Turn{Text: "Then filter-games keeps the home games."})

	out, errOut, code := e.runSync("threads", "sync", "--pull")
	if code != 0 || !strings.Contains(out, "pulled 1, skipped 0, failed 0") || strings.Contains(out, "pushed") {
		t.Fatalf("pull: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(out, "workspace acme") || strings.Contains(out, arangotest.Password) {
		t.Errorf("summary %q should name the workspace and hide the password", out)
	}

	_, errOut, code = e.ask("--thread", id, "and after that?")
	if code != 0 {
		t.Fatalf("ask --thread: exit %d, stderr %q", code, errOut)
	}
	reqs := e.llm.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	var sent []string
	for _, m := range reqs[0].Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	all := strings.Join(sent, "\n")
	for _, want := range []string{"user: what does fetch-api do?", "said on the web", `{"key":"fetch-api","type":"api-call"}`, "user: and after that?"} {
		if !strings.Contains(all, want) {
			t.Errorf("the request lacks %q of the pulled history:\n%s", want, all)
		}
	}

	out, errOut, code = e.runSync("threads", "sync")
	if code != 0 || !strings.Contains(out, "pushed 1, pulled 0") {
		t.Fatalf("push: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	doc := fa.Doc(arangotest.Threads, id)
	if doc["lastUpdatedTime"].(float64) <= float64(webTime) || doc["workspace"] != "acme" || doc["graphKey"] != "demo" {
		t.Errorf("pushed document head = %v %v %v", doc["lastUpdatedTime"], doc["workspace"], doc["graphKey"])
	}
	checkOpenAIHistory(t, doc, "and after that?", "Then filter-games keeps the home games.")

	for i := 0; i < 2; i++ {
		out, _, code = e.runSync("threads", "sync")
		if code != 0 || !strings.Contains(out, "pushed 0, pulled 0") {
			t.Errorf("repeat %d: exit %d, %q", i, code, out)
		}
	}
	if unknown := fa.Unknown(); len(unknown) > 0 {
		t.Errorf("queries outside arango.Queries(): %q", unknown)
	}
}

// checkOpenAIHistory: the document's conversationHistory is OpenAI chat messages that
// end with the given exchange, and every tool call has its result.
func checkOpenAIHistory(t *testing.T, doc map[string]any, question, answer string) {
	t.Helper()
	hist, ok := doc["conversationHistory"].([]any)
	if !ok || len(hist) < 3 {
		t.Fatalf("conversationHistory = %v", doc["conversationHistory"])
	}
	calls := map[string]bool{}
	for i, raw := range hist {
		m := raw.(map[string]any)
		switch m["role"] {
		case "system", "user":
			if _, ok := m["content"].(string); !ok {
				t.Errorf("message %d: content %v is not a string", i, m["content"])
			}
		case "assistant":
			for _, c := range asSlice(m["tool_calls"]) {
				call := c.(map[string]any)
				fn := call["function"].(map[string]any)
				if call["type"] != "function" || fn["name"] == "" || call["id"] == "" {
					t.Errorf("message %d: tool call %v is not in the OpenAI format", i, call)
				}
				if _, ok := fn["arguments"].(string); !ok {
					t.Errorf("message %d: arguments are not JSON text: %v", i, fn["arguments"])
				}
				calls[call["id"].(string)] = true
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			if !calls[id] {
				t.Errorf("message %d: tool result for unknown call %q", i, id)
			}
			delete(calls, id)
		default:
			t.Errorf("message %d: role %v", i, m["role"])
		}
	}
	if len(calls) > 0 {
		t.Errorf("tool calls without results: %v", calls)
	}
	last := hist[len(hist)-1].(map[string]any)
	prev := hist[len(hist)-2].(map[string]any)
	if last["role"] != "assistant" || last["content"] != answer {
		t.Errorf("last message = %v, want the answer %q", last, answer)
	}
	if prev["role"] != "user" && !strings.Contains(fmt.Sprint(hist), question) {
		t.Errorf("the question %q is not in the history", question)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestThreadsSyncLocalThreadPushed: a thread started in the terminal reaches the
// server's collection as the web client reads it.
func TestThreadsSyncLocalThreadPushed(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	e := newSyncEnv(t, fa.URL("default"), llmtest.Turn{Text: "fetch-api downloads the games."})
	out, errOut, code := e.ask("--graph", "demo", "--format", "json", "what does fetch-api do?")
	if code != 0 {
		t.Fatalf("ask: exit %d, %s", code, errOut)
	}
	var first struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil || first.ThreadID == "" {
		t.Fatalf("first event %q: %v", out, err)
	}

	out, errOut, code = e.runSync("threads", "sync", "--push")
	if code != 0 || !strings.Contains(out, "pushed 1, skipped 0, failed 0") || strings.Contains(out, "pulled") {
		t.Fatalf("push: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	doc := fa.Doc(arangotest.Threads, first.ThreadID)
	if doc == nil {
		t.Fatalf("thread %s not in the collection", first.ThreadID)
	}
	for _, k := range []string{"_key", "graphKey", "workspace", "userId", "conversationHistory", "pendingInterrupt", "createdTime", "lastUpdatedTime"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("document lacks %s: %v", k, doc)
		}
	}
	if doc["graphKey"] != "demo" || doc["workspace"] != "default" || doc["pendingInterrupt"] != nil {
		t.Errorf("document head = %v", doc)
	}
	checkOpenAIHistory(t, doc, "what does fetch-api do?", "fetch-api downloads the games.")
	if hist := doc["conversationHistory"].([]any); hist[0].(map[string]any)["role"] != "system" {
		t.Errorf("the history does not start with the system prompt: %v", hist[0])
	}

	// Another workspace's remote does not take threads of this one.
	other := newSyncEnv(t, fa.URL("acme"))
	other.db = e.db
	out, _, code = other.runSync("threads", "sync", "--push")
	if code != 0 || !strings.Contains(out, "pushed 0") || !strings.Contains(out, "1 thread(s) of other workspaces not pushed") {
		t.Errorf("push to another workspace: exit %d, %q", code, out)
	}
	// A --sync URL without ?workspace= takes the configured workspace.
	configured := newSyncEnv(t, fa.URL(""))
	configured.db = e.db
	configured.env["NODIUS_AI_WORKSPACE"] = "acme"
	out, _, code = configured.runSync("threads", "sync", "--push")
	if code != 0 || !strings.Contains(out, "pushed 0") || !strings.Contains(out, "1 thread(s) of other workspaces not pushed") {
		t.Errorf("push with NODIUS_AI_WORKSPACE=acme: exit %d, %q", code, out)
	}
}

// TestThreadsSyncFailureRetried: a thread the database refuses is reported (exit 1)
// while the others go; the next sync sends it.
func TestThreadsSyncFailureRetried(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	e := newSyncEnv(t, fa.URL("default"))
	e.seed(
		threadDoc("ai_1709000000001_1", "demo", "first", "a", 2*time.Minute),
		threadDoc("ai_1709000000002_1", "demo", "second", "b", time.Minute),
	)
	failUpsert(fa, "ai_1709000000001_1")
	out, errOut, code := e.runSync("threads", "sync")
	if code != ExitRuntime || !strings.Contains(out, "pushed 1, pulled 0, skipped 1, failed 1") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errOut, "push thread ai_1709000000001_1") || !strings.Contains(errOut, "again to retry") {
		t.Errorf("stderr %q should name the thread and say how to retry", errOut)
	}
	failUpsert(fa, "")
	out, errOut, code = e.runSync("threads", "sync")
	if code != 0 || !strings.Contains(out, "pushed 1, pulled 0") || fa.Doc(arangotest.Threads, "ai_1709000000001_1") == nil {
		t.Errorf("retry: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestThreadsSyncConfigErrors(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	tests := []struct {
		name string
		sync string
		code int
		want string
	}{
		{"no --sync", "", ExitUsage, "--sync arango://"},
		{"not an arango URL", "http://root:secret@db:8529/x", ExitUsage, "must be an arango:// or arangos:// URL"},
		{"wrong password", strings.Replace(fa.URL("w"), ":"+arangotest.Password+"@", ":nope@", 1), ExitRuntime, "auth"},
		{"nothing listening", "arango://root:secret@" + closed + "/nodius", ExitRuntime, "network"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newSyncEnv(t, tc.sync)
			args := []string{"threads", "sync"}
			if tc.sync != "" {
				args = append([]string{"--sync", tc.sync}, args...)
			}
			_, errOut, code := e.run("", args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
			if strings.Contains(errOut, "secret") || strings.Contains(errOut, "nope") {
				t.Errorf("stderr shows the password: %q", errOut)
			}
		})
	}
}

// TestSyncAfterRun: with --sync, the thread of a run is pushed; a failure is one
// warning line on stderr and nothing else; without --sync or after an interrupt,
// nothing happens.
func TestSyncAfterRun(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	const id = "ai_1709000000001_1"
	tests := []struct {
		name     string
		sync     string
		cancel   bool
		pushed   bool
		stderrOK func(string) bool
	}{
		{"pushes the thread", fa.URL("default"), false, true, func(s string) bool { return s == "" }},
		{"unreachable: one warning line", "arango://root:pw@" + closed + "/nodius", false, false, func(s string) bool {
			return strings.Count(s, "\n") == 1 && strings.Contains(s, "warning: thread "+id+" was not synced") &&
				strings.Contains(s, "threads sync` will retry")
		}},
		{"no --sync: nothing", "", false, false, func(s string) bool { return s == "" }},
		{"interrupted run: left to the next sync", fa.URL("default"), true, false, func(s string) bool { return s == "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSyncEnv(t, tc.sync)
			e.seed(threadDoc(id, "demo", "q", "a", time.Minute))
			e.env["NODIUS_AI_DB"] = e.db
			e.env["NODIUS_AI_SYNC"] = tc.sync
			var out, errOut bytes.Buffer
			f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return e.env[k] }})
			defer f.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			fa.Delete(arangotest.Threads, id)
			syncAfterRun(ctx, f, id)
			if got := fa.Doc(arangotest.Threads, id) != nil; got != tc.pushed {
				t.Errorf("pushed = %v, want %v", got, tc.pushed)
			}
			if !tc.stderrOK(errOut.String()) || out.Len() > 0 {
				t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
		})
	}
}
