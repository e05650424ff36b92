package main_test

// End-to-end tests of the built binary with --agent server:URL against the
// stand-in of the Nodius server's assistant (agent/remote/remotetest): no provider
// key anywhere, the answers come from the server's WebSocket.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

const jwt = "eyJhbGciOiJIUzI1NiJ9.dXNlcg.jwt-secret-sig"

// newRemoteEnv is a user with a Nodius login and no provider key, pointed at the
// stand-in server through NODIUS_AI_AGENT and NODIUS_AI_TOKEN.
func newRemoteEnv(t *testing.T) (*env, *remotetest.Server) {
	t.Helper()
	dir := t.TempDir()
	srv := remotetest.New(t, func(s *remotetest.Server) { s.Token = jwt })
	e := &env{t: t, dir: dir}
	e.vars = []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"NODIUS_AI_AGENT=server:" + srv.URL,
		"NODIUS_AI_WS_URL=" + srv.WSURL,
		"NODIUS_AI_TOKEN=" + jwt,
		// Proposals are completed for display from the demo graph; it is not the
		// server's, so no approved change is applied from here (no editing socket).
		"NODIUS_AI_SOURCE=demo",
	}
	return e, srv
}

// runR runs the binary and checks the token never shows.
func (e *env) runR(stdin string, args ...string) result {
	e.t.Helper()
	r := e.run(stdin, args...)
	if strings.Contains(r.stdout+r.stderr, "jwt-secret-sig") {
		e.t.Fatalf("the token was printed:\n%s\n%s", r.stdout, r.stderr)
	}
	return r
}

func answerWithTool(s *remotetest.Session) {
	s.Token("fetch-api ")
	s.ToolStart("tc_1", "read_node_detail")
	s.Usage(1426, 14)
	s.ToolResult("tc_1", `{"_key":"fetch-api","type":"api-call"}`)
	s.Token("calls the NBA stats API.")
	s.Usage(1614, 8)
	s.Complete("fetch-api calls the NBA stats API.")
}

func TestRemoteAsk(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	srv.SetChat(answerWithTool)

	r := e.runR("", "ask", "--graph", "demo", "what does fetch-api do?")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "fetch-api ") || !strings.HasSuffix(r.stdout, "calls the NBA stats API.\n") {
		t.Fatalf("ask: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = e.runR("which node filters?", "ask", "--graph", "demo", "--format", "json")
	evs := events(t, r.stdout)
	if r.code != 0 || types(evs) != "thread,token,tool_start,usage,tool_result,token,usage,complete" {
		t.Fatalf("json: code %d events %s stderr %s", r.code, types(evs), r.stderr)
	}
	if evs[2]["name"] != "read_node_detail" || evs[3]["prompt_tokens"] != 1426.0 || evs[7]["text"] != "fetch-api calls the NBA stats API." || evs[7]["thread_id"] != evs[0]["thread_id"] {
		t.Fatalf("events %v", evs)
	}
	reqs := srv.Received()
	if len(reqs) != 2 || reqs[1].Message != "which node filters?" || strings.Contains(reqs[1].Raw, "token") || reqs[1].ID <= 0 {
		t.Fatalf("received %d requests, the second %q", len(reqs), reqs[len(reqs)-1].Message)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations %v", v)
	}

	// With the server gone, what was seen is still there.
	threadID := evs[0]["thread_id"].(string)
	srv.Close()
	r = e.runR("", "threads", "list", "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, threadID) {
		t.Fatalf("threads list offline: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "threads", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "[server] what does fetch-api do?") {
		t.Fatalf("threads list offline, table: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "threads", "show", threadID)
	if r.code != 0 || !strings.Contains(r.stdout, "NBA stats API") || !strings.Contains(r.stdout, "read_node_detail") {
		t.Fatalf("threads show offline: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "threads", "search", "NBA")
	if r.code != 0 || !strings.Contains(r.stdout, threadID[:8]) {
		t.Fatalf("threads search offline: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "threads", "export", threadID)
	if r.code != 0 || !strings.Contains(r.stdout, "NBA stats API") {
		t.Fatalf("threads export offline: %d %s", r.code, r.stderr)
	}
	// The server is unreachable now: a network error, exit 1.
	r = e.runR("", "ask", "--graph", "demo", "again?")
	if r.code != 1 || !strings.Contains(r.stderr, "network") {
		t.Fatalf("unreachable: %d %s", r.code, r.stderr)
	}
}

const deleteFetch = `{"type":"delete_node","payload":{"nodeKey":"fetch-api"}}`

func proposeDelete(s *remotetest.Session) {
	s.Token("I propose to delete it.")
	s.ProposeFull("call_del", "propose_delete_node", map[string]any{"nodeKey": "fetch-api", "reason": "it is no longer used"}, deleteFetch, "",
		`{"instructions":[],"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":["fetch-api"],"edgeKeysToDelete":[],"sheetId":"0"}`)
}

func TestRemoteProposalApproveReject(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	srv.SetChat(proposeDelete)
	srv.SetResume(func(s *remotetest.Session) {
		word := "Deleted."
		if !s.Req.Approved {
			word = "Kept, because: " + s.Req.Feedback
		}
		s.Token(word)
		s.Complete(word)
	})

	r := e.runR("", "ask", "--graph", "demo", "--format", "json", "delete fetch-api")
	evs := events(t, r.stdout)
	if r.code != 3 || types(evs) != "thread,token,tool_start,proposal" {
		t.Fatalf("ask: code %d events %s stderr %s", r.code, types(evs), r.stderr)
	}
	p := evs[3]
	action, _ := p["action"].(map[string]any)
	payload, _ := action["payload"].(map[string]any)
	if !strings.HasPrefix(p["id"].(string), "call_del@") || p["tool"] != "propose_delete_node" || p["reason"] != "it is no longer used" || action["type"] != "delete_node" {
		t.Fatalf("proposal %v", p)
	}
	if edges, _ := payload["removedEdges"].([]any); len(edges) == 0 {
		t.Fatalf("the proposal was not completed from the server: source: %v", payload)
	}
	threadID := evs[0]["thread_id"].(string)

	// This terminal has no editing connection to the graph (the source is not the
	// server's): nothing is approved — the server would record the change as
	// executed the moment it sent ai:apply_action — said in words, exit 1; the
	// proposal stays pending here and on the server.
	r = e.runR("", "approve", threadID[:10], "--format", "json")
	evs = events(t, r.stdout)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was approved") || !strings.Contains(r.stderr, "no editing connection") ||
		strings.Contains(r.stdout, "Deleted.") {
		t.Fatalf("approve: code %d events %s stderr %s", r.code, types(evs), r.stderr)
	}
	if reqs := srv.Received(); len(reqs) != 1 || reqs[0].Type != "ai:chat" {
		t.Fatalf("sent %+v after the chat", reqs)
	}
	r = e.runR("", "threads", "show", threadID, "--format", "json")
	if strings.Contains(r.stdout, "not_applied") || !strings.Contains(r.stdout, "pending") {
		t.Fatalf("not kept pending: %s", r.stdout)
	}
	r = e.runR("", "reject", threadID, "--feedback", "keep fetch-api")
	if r.code != 0 || !strings.Contains(r.stdout, "Kept, because: keep fetch-api") {
		t.Fatalf("reject after the refused approval: %d %q %s", r.code, r.stdout, r.stderr)
	}

	// A second proposal, rejected with feedback.
	r = e.runR("", "ask", "--thread", threadID, "delete it again")
	if r.code != 3 || !strings.Contains(r.stdout+r.stderr, "approve") {
		t.Fatalf("second ask: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "reject", threadID, "--feedback", "keep fetch-api")
	if r.code != 0 || !strings.Contains(r.stdout, "Kept, because: keep fetch-api") {
		t.Fatalf("reject: %d %q %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Received()
	if last := reqs[len(reqs)-1]; last.Approved || last.Feedback != "keep fetch-api" {
		t.Fatalf("reject sent %+v", last)
	}

	// --on-proposal reject decides at once.
	r = e.runR("", "ask", "--graph", "demo", "--on-proposal", "reject", "delete fetch-api")
	if r.code != 0 || !strings.Contains(r.stdout, "Kept, because") {
		t.Fatalf("on-proposal reject: %d %q %s", r.code, r.stdout, r.stderr)
	}

	// The local agent refuses to decide a server's proposal (it would apply it here).
	srv.SetChat(proposeDelete)
	r = e.runR("", "ask", "--graph", "demo", "--format", "json", "delete fetch-api")
	id := events(t, r.stdout)[0]["thread_id"].(string)
	local := append([]string{}, e.vars...)
	e.vars = append(e.vars, "NODIUS_AI_AGENT=local", "NODIUS_AI_BASE_URL=http://127.0.0.1:1/v1", "NODIUS_AI_API_KEY=x", "NODIUS_AI_MODEL=m")
	r = e.runR("", "approve", id)
	e.vars = local
	if r.code != 2 || !strings.Contains(r.stderr, "--agent server:") {
		t.Fatalf("local approve of a server thread: %d %s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations %v", v)
	}
}

func TestRemoteThreadsAndWebClientProposal(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	web := srv.NewThread("demo", &remotetest.Pending{ToolCall: map[string]any{"id": "w1", "name": "propose_delete_node", "args": map[string]any{"nodeKey": "fetch-api"}},
		Action: json.RawMessage(deleteFetch)},
		map[string]any{"role": "user", "content": "remove the fetch node"},
		map[string]any{"role": "assistant", "content": "I propose to remove it."})
	old := srv.NewThread("demo", nil, map[string]any{"role": "user", "content": "hello"}, map[string]any{"role": "assistant", "content": "hi"})
	srv.NewThread("other-graph", nil)
	srv.SetResume(func(s *remotetest.Session) { s.Token("Removed."); s.Complete("Removed.") })

	r := e.runR("", "threads", "list", "--remote", "--graph", "demo", "--format", "json")
	var list []struct {
		ID       string `json:"thread_id"`
		Pending  bool   `json:"has_pending_action"`
		Messages int    `json:"messages"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("list: %v %d %s %s", err, r.code, r.stdout, r.stderr)
	}
	if len(list) != 2 || list[0].ID != old.ID || list[1].ID != web.ID || !list[1].Pending || list[0].Pending || list[1].Messages != 3 {
		t.Fatalf("list %+v", list)
	}
	r = e.runR("", "threads", "list", "--remote", "--graph", "demo")
	if r.code != 0 || strings.Count(r.stdout, "pending") != 1 {
		t.Fatalf("table: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "threads", "list", "--remote")
	if r.code != 0 || !strings.Contains(r.stdout, "other-graph") {
		t.Fatalf("every graph: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The web client's thread, shown from the server's history.
	r = e.runR("", "threads", "show", web.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "remove the fetch node") || !strings.Contains(r.stdout, "I propose to remove it.") {
		t.Fatalf("show web thread: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// The id as the table shows it (cut with …) resolves against the server's list.
	if !strings.Contains(e.runR("", "threads", "list", "--remote", "--graph", "demo").stdout, web.ID[:39]+"…") {
		t.Fatal("the table does not show the cut id")
	}
	r = e.runR("", "threads", "show", web.ID[:39]+"…", "--remote")
	if r.code != 0 || !strings.Contains(r.stdout, "remove the fetch node") {
		t.Fatalf("show the id as listed: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// Without --remote the web client's thread is unknown here.
	r = e.runR("", "approve", web.ID)
	if r.code == 0 || !strings.Contains(r.stderr, "--remote") {
		t.Fatalf("approve without --remote: %d %s", r.code, r.stderr)
	}
	r = e.runR("", "reject", web.ID, "--remote", "--graph", "demo", "--feedback", "not now")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed.") {
		t.Fatalf("reject --remote: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if srv.Thread(web.ID).Pending != nil {
		t.Fatal("the server still waits")
	}
	// The exchange is kept locally under the server's id.
	r = e.runR("", "threads", "show", web.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "Removed.") {
		t.Fatalf("show: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// Deleting on the server: refused without a confirmation when not on a terminal.
	r = e.runR("", "threads", "delete", "--remote", old.ID)
	if r.code != 2 || srv.Thread(old.ID) == nil {
		t.Fatalf("delete without --yes: %d %s", r.code, r.stderr)
	}
	r = e.runR("", "threads", "delete", "--remote", "--yes", old.ID, web.ID)
	if r.code != 0 || srv.Thread(old.ID) != nil || srv.Thread(web.ID) != nil {
		t.Fatalf("delete --yes: %d %s", r.code, r.stderr)
	}
	r = e.runR("", "threads", "show", web.ID)
	if r.code == 0 {
		t.Fatalf("the local copy outlived the server's thread: %s", r.stdout)
	}
	if strings.Contains(r.stderr, "panic") {
		t.Fatal(r.stderr)
	}
	r = e.runR("", "threads", "delete", "--remote", "--yes", old.ID)
	if r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Fatalf("delete twice: %d %s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations %v", v)
	}
}

func TestRemoteErrorsAndExitCodes(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	cases := []struct {
		code, want string
		exit       int
	}{
		{"rate_limit", "rate_limit", 1},
		{"auth_error", "auth_error", 1},
		{"context_length", "context_length", 1},
		{"", "internal", 1},
	}
	for _, tc := range cases {
		srv.SetChat(func(s *remotetest.Session) {
			b, _ := json.Marshal(map[string]any{"type": "ai:error", "_id": s.Req.ID, "error": "Le service IA a un problème", "code": tc.code, "retryable": tc.code == "rate_limit"})
			s.Raw(string(b))
		})
		r := e.runR("", "ask", "--graph", "demo", "--format", "json", "q")
		evs := events(t, r.stdout)
		last := evs[len(evs)-1]
		if r.code != tc.exit || last["type"] != "error" || last["code"] != tc.want || last["retryable"] != (tc.code == "rate_limit") {
			t.Fatalf("%s: exit %d events %v stderr %s", tc.code, r.code, evs, r.stderr)
		}
		if !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%s: stderr %s", tc.code, r.stderr)
		}
	}
	srv.SetChat(func(s *remotetest.Session) { s.Raw(`{"type":"ai:token","_id":` + fmt.Sprint(s.Req.ID) + `}`) })
	r := e.runR("", "ask", "--graph", "demo", "q")
	if r.code != 1 || !strings.Contains(r.stderr, "internal") || !strings.Contains(r.stderr, "malformed") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("malformed: %d %s", r.code, r.stderr)
	}

	// A bad token: the server's auth error at once, exit 1, never retried, the token never shown.
	e.vars = append(e.vars, "NODIUS_AI_TOKEN=not-the-jwt")
	start := time.Now()
	r = e.runR("", "ask", "--graph", "demo", "q")
	// (POST /api/sync, asked before the socket is opened, refuses it first.)
	if r.code != 1 || !strings.Contains(r.stderr, "auth") || strings.Contains(r.stderr, "not-the-jwt") || srv.AuthFailures() > 1 ||
		!strings.Contains(r.stderr, "auth login --server "+srv.URL) {
		t.Fatalf("bad token: %d %s (%d refusals)", r.code, r.stderr, srv.AuthFailures())
	}
	t.Logf("bad token answered in %s", time.Since(start).Round(time.Millisecond))
	r = e.runR("", "threads", "list", "--remote", "--graph", "demo")
	if r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("bad token, threads: %d %s", r.code, r.stderr)
	}

	// Usage errors: exit 2.
	for _, args := range [][]string{
		{"ask", "--agent", "remote", "--graph", "demo", "q"},
		{"ask", "--agent", "server:", "--graph", "demo", "q"},
		{"threads", "list", "--remote", "--agent", "local"},
		{"ask", "--graph", "demo", "--on-tool-limit", "maybe", "q"},
	} {
		r := e.runR("", args...)
		if r.code != 2 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
}

// TestRemoteCtrlCStopsOnlyThisRun: Ctrl-C closes this run's socket and sends no
// ai:interrupt (the real server's aborts every user's session).
func TestRemoteCtrlCStopsOnlyThisRun(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	srv.SetChat(func(s *remotetest.Session) {
		s.Token("one two ")
		for s.Sleep(50 * time.Millisecond) {
			s.Token("more ")
		}
	})
	cmd := exec.Command(binary, "ask", "--graph", "demo", "tell me everything")
	cmd.Env = e.vars
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	go func() {
		var got []byte
		buf := make([]byte, 256)
		signalled := false
		for {
			n, err := stdout.Read(buf)
			got = append(got, buf[:n]...)
			if !signalled && bytes.Contains(got, []byte("two")) {
				signalled = true
				close(seen)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		t.Fatal("no token arrived")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, stderr %s", err, stderr.String())
	}
	if ints := srv.Interrupts(); len(ints) != 0 {
		t.Fatalf("ai:interrupt sent: %+v", ints)
	}
	r := e.runR("", "threads", "list", "--format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("threads: %v %q", err, r.stdout)
	}
	r = e.runR("", "threads", "show", list[0]["id"].(string), "--format", "json")
	if !strings.Contains(r.stdout, "interrupted") || !strings.Contains(r.stdout, "one two") {
		t.Fatalf("partial answer not kept: %s", r.stdout)
	}
}

// TestRemoteChatTmux runs `chat --agent server:URL` in tmux: the server's assistant
// answers on screen, then proposes to delete a node; the dialog shows the change
// with the edges it takes (read through the server: source), and `a` approves it.
func TestRemoteChatTmux(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	e, srv := newRemoteEnv(t)
	srv.SetChat(func(s *remotetest.Session) {
		switch {
		case strings.Contains(s.Req.Message, "delete"):
			proposeDelete(s)
		case strings.Contains(s.Req.Message, "story"):
			s.Token("Once upon a time ")
			for s.Sleep(50 * time.Millisecond) {
				s.Token("and on ")
			}
		default:
			answerWithTool(s)
		}
	})
	srv.SetResume(func(s *remotetest.Session) {
		s.Token("Done: fetch-api was deleted.")
		s.Complete("Done: fetch-api was deleted.")
	})

	term := tmuxtest.Start(t, 110, 40, e.dir, append(e.vars, "NO_COLOR=1", "TERM=xterm-256color"), binary, "chat", "--graph", "demo")
	term.Wait("New conversation")
	term.Type("what does fetch-api do?")
	term.Keys("Enter")
	s := term.Wait("calls the NBA stats API")
	if !strings.Contains(s, "read_node_detail") {
		t.Errorf("no tool badge on screen:\n%s", s)
	}
	t.Logf("answer:\n%s", s)

	term.Type("delete fetch-api")
	term.Keys("Enter")
	s = term.Wait("Proposed change")
	for _, want := range []string{"node fetch-api", "attached to it", "it is no longer used"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, s)
		}
	}
	t.Logf("proposal dialog:\n%s", s)
	time.Sleep(600 * time.Millisecond) // past the dialog's key guard
	term.Keys("a")
	// No editing connection here: nothing is approved on the server, said so.
	term.Wait("nothing was approved")
	reqs := srv.Received()
	if last := reqs[len(reqs)-1]; last.Type != "ai:chat" {
		t.Fatalf("requests %d, last %s approved=%v", len(reqs), last.Type, last.Approved)
	}
	if reqs[1].ThreadID == "" {
		t.Fatalf("the second question did not continue the server's thread")
	}
	// Still pending: rejected from the dialog, so the chat can go on.
	term.Keys("C-p")
	time.Sleep(600 * time.Millisecond)
	term.Keys("r")
	term.Wait("Done: fetch-api was deleted.")

	// Esc while the answer streams stops it by closing its socket, never with
	// ai:interrupt.
	term.Type("tell me a long story")
	term.Keys("Enter")
	term.Wait("Once upon a time")
	before := srv.Disconnects()
	term.Keys("Escape")
	deadline := time.Now().Add(10 * time.Second)
	for srv.Disconnects() == before {
		if time.Now().After(deadline) {
			t.Fatalf("the run's socket stayed open after esc:\n%s", term.Screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ints := srv.Interrupts(); len(ints) != 0 {
		t.Fatalf("ai:interrupt sent: %+v", ints)
	}
	term.Keys("C-c")
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations %v", v)
	}
}

// TestRemoteToolLimit: the tool-round limit is a choice: exit 3 and a sentence
// without a decision, approve continues, reject or --on-tool-limit summary asks for
// the answer now.
func TestRemoteToolLimit(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	srv.SetChat(func(s *remotetest.Session) {
		for i := 0; i < 5; i++ {
			s.ToolStart("call_1_0", "search_nodes")
			s.Usage(1500, 10)
			s.ToolResult("call_1_0", "[9]{_key}:\n  root")
		}
		s.ToolLimit(5, 10)
	})
	srv.SetResume(func(s *remotetest.Session) {
		text := "Summary now."
		if s.Req.Approved {
			text = "Searched further."
		}
		s.Token(text)
		s.Complete(text)
	})
	r := e.runR("", "ask", "--graph", "demo", "search everything")
	if r.code != 3 || !strings.Contains(r.stderr, "used its 5 tool rounds") || !strings.Contains(r.stderr, "approve") ||
		strings.Contains(r.stdout+r.stderr, "roundsUsed") || strings.Contains(r.stdout+r.stderr, `"type"`) {
		t.Fatalf("tool limit: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "ask", "--graph", "demo", "--format", "json", "search everything")
	evs := events(t, r.stdout)
	last := evs[len(evs)-1]
	if r.code != 3 || last["type"] != "tool_limit" || last["rounds_used"] != 5.0 || last["max_extended"] != 10.0 {
		t.Fatalf("json: %d %v", r.code, evs)
	}
	r = e.runR("", "approve", last["thread_id"].(string))
	reqs := srv.Received()
	if r.code != 0 || !strings.Contains(r.stdout, "Searched further.") || !reqs[len(reqs)-1].Approved {
		t.Fatalf("approve: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = e.runR("", "ask", "--graph", "demo", "--on-tool-limit", "summary", "search everything")
	reqs = srv.Received()
	if r.code != 0 || !strings.Contains(r.stdout, "Summary now.") || reqs[len(reqs)-1].Approved || reqs[len(reqs)-1].Type != "ai:resume" {
		t.Fatalf("--on-tool-limit summary: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations %v", v)
	}
}
