package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/arango"
)

// threadArango answers the go-driver the way ArangoDB does, for the thread queries
// of datasource/arango only (nodius_ai_threads): opening the database, and cursors
// over the upsert and pull queries, evaluated in Go. Any query text not among
// arango.Queries() is refused as a syntax error and recorded. failKey makes the
// upsert of one thread answer 503.
type threadArango struct {
	srv *httptest.Server

	mu      sync.Mutex
	docs    map[string]map[string]any
	unknown []string
	failKey string
}

const fakeDB, fakeUser, fakePass = "nodius", "root", "pw"

func newThreadArango(t *testing.T) *threadArango {
	t.Helper()
	f := &threadArango{docs: map[string]map[string]any{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *threadArango) url(ws string) string {
	return fmt.Sprintf("arango://%s:%s@%s/%s?workspace=%s", fakeUser, fakePass, strings.TrimPrefix(f.srv.URL, "http://"), fakeDB, ws)
}

func (f *threadArango) put(doc map[string]any) {
	b, _ := json.Marshal(doc)
	var d map[string]any
	_ = json.Unmarshal(b, &d)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs[d["_key"].(string)] = d
}

func (f *threadArango) doc(key string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.docs[key]
}

func (f *threadArango) setFail(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failKey = key
}

func fakeReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fakeError(w http.ResponseWriter, status, num int, msg string) {
	fakeReply(w, status, map[string]any{"error": true, "code": status, "errorNum": num, "errorMessage": msg})
}

func (f *threadArango) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(fakeUser+":"+fakePass)) {
		fakeError(w, 401, 11, "not authorized to execute this request")
		return
	}
	prefix := "/_db/" + fakeDB + "/_api/"
	switch {
	case r.Method == http.MethodGet && r.URL.Path == prefix+"database/current":
		fakeReply(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"name": fakeDB, "id": "1"}})
	case r.Method == http.MethodPost && r.URL.Path == prefix+"cursor":
		var req struct {
			Query    string         `json:"query"`
			BindVars map[string]any `json:"bindVars"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fakeError(w, 400, 600, "malformed JSON")
			return
		}
		res, status := f.exec(req.Query, req.BindVars)
		if status != 0 {
			fakeError(w, status, 1501, "refused by the fake")
			return
		}
		if res == nil {
			res = []any{}
		}
		fakeReply(w, 201, map[string]any{"error": false, "code": 201, "hasMore": false, "result": res})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, prefix+"cursor/"):
		fakeReply(w, 202, map[string]any{"error": false, "code": 202})
	default:
		fakeError(w, 404, 404, "unknown path "+r.URL.Path)
	}
}

// exec evaluates the thread queries. It tells them apart by their fixed text: the
// pull ("lastUpdatedTime > @since"), the one-thread read and the upsert.
func (f *threadArango) exec(q string, b map[string]any) ([]any, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(arango.Queries(), q) || !strings.Contains(q, "nodius_ai_threads") {
		f.unknown = append(f.unknown, q)
		return nil, 400
	}
	ws, _ := b["ws"].(string)
	switch {
	case strings.HasPrefix(q, "UPSERT"):
		key, ts := b["key"].(string), b["ts"].(float64)
		if key == f.failKey {
			return nil, 503
		}
		doc := b["doc"].(map[string]any)
		old, ok := f.docs[key]
		written := !ok || (old["workspace"] == ws && old["lastUpdatedTime"].(float64) < ts)
		stored := old
		if written {
			doc["_key"], doc["_id"], doc["_rev"] = key, "nodius_ai_threads/"+key, "1"
			f.docs[key] = doc
			stored = doc
		}
		return []any{map[string]any{"written": written, "stored": stored["lastUpdatedTime"]}}, 0
	case strings.Contains(q, "@since"):
		since := b["since"].(float64)
		var out []any
		for _, d := range f.docs {
			if d["workspace"] == ws && d["lastUpdatedTime"].(float64) > since {
				out = append(out, d)
			}
		}
		return out, 0
	default:
		if d, ok := f.docs[b["key"].(string)]; ok && d["workspace"] == ws {
			return []any{d}, 0
		}
		return nil, 0
	}
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

// webThread is a thread the web client wrote (seed 001's AIThreadDocument), with a
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
	fa := newThreadArango(t)
	const id = "ai_1709000000000_7"
	webTime := time.Now().Add(-time.Hour).UnixMilli()
	fa.put(webThread(id, "acme", webTime))
	e := newSyncEnv(t, fa.url("acme"), llmtest.Turn{Text: "Then filter-games keeps the home games."})

	out, errOut, code := e.runSync("threads", "sync", "--pull")
	if code != 0 || !strings.Contains(out, "pulled 1, skipped 0, failed 0") || strings.Contains(out, "pushed") {
		t.Fatalf("pull: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(out, "workspace acme") || strings.Contains(out, fakePass) {
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
	doc := fa.doc(id)
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
	if len(fa.unknown) > 0 {
		t.Errorf("queries outside arango.Queries(): %q", fa.unknown)
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
	fa := newThreadArango(t)
	e := newSyncEnv(t, fa.url("default"), llmtest.Turn{Text: "fetch-api downloads the games."})
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
	doc := fa.doc(first.ThreadID)
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
	other := newSyncEnv(t, fa.url("acme"))
	other.db = e.db
	out, _, code = other.runSync("threads", "sync", "--push")
	if code != 0 || !strings.Contains(out, "pushed 0") || !strings.Contains(out, "1 thread(s) of other workspaces not pushed") {
		t.Errorf("push to another workspace: exit %d, %q", code, out)
	}
}

// TestThreadsSyncFailureRetried: a thread the database refuses is reported (exit 1)
// while the others go; the next sync sends it.
func TestThreadsSyncFailureRetried(t *testing.T) {
	t.Parallel()
	fa := newThreadArango(t)
	e := newSyncEnv(t, fa.url("default"))
	e.seed(
		threadDoc("ai_1709000000001_1", "demo", "first", "a", 2*time.Minute),
		threadDoc("ai_1709000000002_1", "demo", "second", "b", time.Minute),
	)
	fa.setFail("ai_1709000000001_1")
	out, errOut, code := e.runSync("threads", "sync")
	if code != ExitRuntime || !strings.Contains(out, "pushed 1, pulled 0, skipped 1, failed 1") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errOut, "push thread ai_1709000000001_1") || !strings.Contains(errOut, "again to retry") {
		t.Errorf("stderr %q should name the thread and say how to retry", errOut)
	}
	fa.setFail("")
	out, errOut, code = e.runSync("threads", "sync")
	if code != 0 || !strings.Contains(out, "pushed 1, pulled 0") || fa.doc("ai_1709000000001_1") == nil {
		t.Errorf("retry: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestThreadsSyncConfigErrors(t *testing.T) {
	t.Parallel()
	fa := newThreadArango(t)
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
		{"wrong password", strings.Replace(fa.url("w"), ":"+fakePass+"@", ":nope@", 1), ExitRuntime, "auth"},
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
	fa := newThreadArango(t)
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
		{"pushes the thread", fa.url("default"), false, true, func(s string) bool { return s == "" }},
		{"unreachable: one warning line", "arango://root:pw@" + closed + "/nodius", false, false, func(s string) bool {
			return strings.Count(s, "\n") == 1 && strings.Contains(s, "warning: thread "+id+" was not synced") &&
				strings.Contains(s, "threads sync` will retry")
		}},
		{"no --sync: nothing", "", false, false, func(s string) bool { return s == "" }},
		{"interrupted run: left to the next sync", fa.url("default"), true, false, func(s string) bool { return s == "" }},
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
			fa.mu.Lock()
			delete(fa.docs, id)
			fa.mu.Unlock()
			syncAfterRun(ctx, f, id)
			if got := fa.doc(id) != nil; got != tc.pushed {
				t.Errorf("pushed = %v, want %v", got, tc.pushed)
			}
			if !tc.stderrOK(errOut.String()) || out.Len() > 0 {
				t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
		})
	}
}
