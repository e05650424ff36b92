package main_test

// End-to-end tests of the default server of `auth login`, over the built binary and
// the project's stand-in of a Nodius server: a fresh user (HOME and XDG dirs in a
// temporary folder, no provider key) logs in once, and ask, approve, reject and
// threads list --remote use that server with no other flag and no config file.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// newFreshUser is a user with nothing configured: no provider key, no agent, no
// source, no token, no config file, no keyring. wsURL is where the stand-in's
// WebSocket is: the stand-in serves it on its HTTP port (not where a plain-HTTP
// Nodius server puts it), so its address is given as NODIUS_AI_WS_URL, which names
// no server, agent or source.
func newFreshUser(t *testing.T, wsURL string) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, vars: []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"NODIUS_AI_KEYRING=off",
	}}
	if wsURL != "" {
		e.vars = append(e.vars, "NODIUS_AI_WS_URL="+wsURL)
	}
	return e
}

// editingStandIn is the stand-in of a Nodius server whose assistant answers a
// question, proposes to delete error_handler when asked to delete, and whose
// editing protocol applies an approved change to the graph testgraph001.
func editingStandIn(t *testing.T) (*remotetest.Server, *servertest.Server) {
	t.Helper()
	graph, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(graph.Close)
	srv := remotetest.New(t, func(s *remotetest.Server) { s.Editing = graph })
	srv.SetChat(func(s *remotetest.Session) {
		if strings.Contains(s.Req.Message, "delete") {
			s.Token("I propose to delete it.")
			s.ProposeFull("call_del", "propose_delete_node", map[string]any{"nodeKey": "error_handler", "reason": "unused"},
				`{"type":"delete_node","payload":{"nodeKey":"error_handler"}}`, "",
				`{"instructions":[],"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":["error_handler"],"edgeKeysToDelete":[],"sheetId":"0"}`)
			return
		}
		s.Token("fetch_api calls the NBA stats API.")
		s.Usage(1426, 14)
		s.Complete("fetch_api calls the NBA stats API.")
	})
	srv.SetResume(func(s *remotetest.Session) {
		text := "Deleted."
		if !s.Req.Approved {
			text = "Understood, nothing was changed."
		}
		s.Token(text)
		s.Complete(text)
	})
	return srv, graph
}

// chats counts the questions the stand-in's assistant received.
func chats(srv *remotetest.Server) int {
	n := 0
	for _, r := range srv.Received() {
		if r.Type == "ai:chat" {
			n++
		}
	}
	return n
}

func TestLoginMakesTheServerTheDefault(t *testing.T) {
	t.Parallel()
	srv, graph := editingStandIn(t)
	e := newFreshUser(t, srv.WSURL)
	key := servertest.SeedGraphKey

	// Before: the demo source, where the server's graph is unknown.
	r := e.run("", "ask", "--graph", key, "what does fetch_api do?")
	if r.code != 2 || !strings.Contains(r.stderr, "demo") {
		t.Fatalf("before login: exit %d, %s", r.code, r.stderr)
	}

	r = e.run("tok-alice\n", "auth", "login", "--server", srv.URL, "--with-token")
	if r.code != 0 || !strings.Contains(r.stderr, "is now the default server") || !strings.Contains(r.stderr, "its assistant answers") {
		t.Fatalf("login: exit %d, %s", r.code, r.stderr)
	}

	// The server's assistant answers, with no other flag and no key.
	r = e.run("", "ask", "--graph", key, "what does fetch_api do?")
	if r.code != 0 || r.stdout != "fetch_api calls the NBA stats API.\n" || chats(srv) != 1 {
		t.Fatalf("ask after login: exit %d, stdout %q, stderr %s, %d questions on the server", r.code, r.stdout, r.stderr, chats(srv))
	}

	// A proposal, approved without naming the server: applied on the server's graph.
	r = e.run("", "ask", "--graph", key, "--format", "json", "delete error_handler")
	evs := events(t, r.stdout)
	if r.code != 3 || len(evs) == 0 {
		t.Fatalf("ask for a change: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	thread := evs[0]["thread_id"].(string)
	r = e.run("", "approve", thread)
	if r.code != 0 || !strings.Contains(r.stdout, "Deleted.") {
		t.Fatalf("approve: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	if _, ok := graph.Live(key).NodeSheet("error_handler"); ok {
		t.Fatal("approved, but the server's graph still has the node")
	}

	// The server's threads, a web client's included; one of them rejected by its id.
	web := srv.NewThread(key, &remotetest.Pending{ToolCall: map[string]any{"id": "w1", "name": "propose_delete_node", "args": map[string]any{"nodeKey": "fetch_api"}},
		Action: json.RawMessage(`{"type":"delete_node","payload":{"nodeKey":"fetch_api"}}`)},
		map[string]any{"role": "user", "content": "remove the fetch node"})
	r = e.run("", "threads", "list", "--remote", "--format", "json")
	var list []struct {
		ID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 || len(list) != 3 || !strings.Contains(r.stdout, web.ID) {
		t.Fatalf("threads list --remote: exit %d, %v, %s %s", r.code, err, r.stdout, r.stderr)
	}
	r = e.run("", "reject", web.ID, "--remote", "--graph", key)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing was changed") || srv.Thread(web.ID).Pending != nil {
		t.Fatalf("reject --remote: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}

	// config and auth status say where the server comes from.
	r = e.run("", "config", "--format", "json")
	var rep struct {
		Settings []struct{ Name, Value, Origin string } `json:"settings"`
		Error    string                                 `json:"chat_error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range rep.Settings {
		got[s.Name] = s.Value + " from " + s.Origin
	}
	for name, want := range map[string]string{
		"default server": srv.URL + " from auth login",
		"agent":          "server:" + srv.URL + " from auth login",
		"source":         "server:" + srv.URL + " from auth login",
		"token":          "**** (set, hidden) from auth login for " + srv.URL,
	} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("config: %s = %q, want %q", name, got[name], want)
		}
	}
	if rep.Error != "" {
		t.Errorf("config says the chat needs a provider, with the server's assistant: %s", rep.Error)
	}
	r = e.run("", "auth", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "Default server: "+srv.URL+", from auth login: its assistant answers") {
		t.Errorf("auth status: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}

	// The precedence: a named source wins over the login.
	r = e.run("", "--source", "demo", "ask", "--graph", key, "what does fetch_api do?")
	if r.code != 2 || !strings.Contains(r.stderr, "demo") {
		t.Errorf("--source demo after login: exit %d, %s", r.code, r.stderr)
	}
	r = e.run("", "config", "--format", "json")
	if !strings.Contains(r.stdout, "default server") {
		t.Errorf("config lost the default server: %s", r.stdout)
	}
}

// With a provider key in the environment the server's assistant still answers (the
// documented rule); with nodius-ai's own model chosen (NODIUS_AI_BASE_URL, MODEL) the
// local agent answers — on the server's live graph either way.
func TestLoginDefaultWithAProvider(t *testing.T) {
	t.Parallel()
	srv, graph := editingStandIn(t)
	key := servertest.SeedGraphKey
	e := newFreshUser(t, srv.WSURL)
	if r := e.run("tok-alice\n", "auth", "login", "--server", srv.URL, "--with-token"); r.code != 0 {
		t.Fatalf("login: %d %s", r.code, r.stderr)
	}

	withKey := append(append([]string(nil), e.vars...), "DEEPSEEK_API_KEY=sk-test-secret-key")
	k := &env{t: t, dir: e.dir, vars: withKey}
	r := k.run("", "ask", "--graph", key, "what does fetch_api do?")
	if r.code != 0 || r.stdout != "fetch_api calls the NBA stats API.\n" || chats(srv) != 1 {
		t.Fatalf("with DEEPSEEK_API_KEY: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}

	// nodius-ai's own model: the local agent reads the server's graph (its nodes are
	// in what the model is sent) and answers with the fake model.
	llm := llmtest.Start(t, llmtest.Turn{Text: "It fetches players."})
	own := &env{t: t, dir: e.dir, vars: append(append([]string(nil), e.vars...),
		"NODIUS_AI_BASE_URL="+llm.OpenAIURL(), "NODIUS_AI_MODEL=fake-model", "NODIUS_AI_API_KEY=sk-test-secret-key")}
	if _, ok := graph.Live(key).NodeSheet("fetch_api"); !ok {
		t.Fatal("the seeded graph has no fetch_api")
	}
	r = own.run("", "ask", "--graph", key, "what does fetch_api do?")
	if r.code != 0 || r.stdout != "It fetches players.\n" || chats(srv) != 1 {
		t.Fatalf("with NODIUS_AI_BASE_URL: exit %d, %q %s (%d questions on the server)", r.code, r.stdout, r.stderr, chats(srv))
	}
	reqs := llm.ChatRequests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Body), "fetch_api") {
		t.Errorf("the local agent was not given the server's graph")
	}
	// The server's threads are the default server's with either agent.
	r = own.run("", "threads", "list", "--remote", "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"graph": "`+key+`"`) {
		t.Errorf("threads list --remote with nodius-ai's own model: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	r = own.run("", "--agent", "local", "threads", "list", "--remote")
	if r.code != 2 || !strings.Contains(r.stderr, "--remote needs a server") {
		t.Errorf("threads list --remote --agent local: exit %d, %s", r.code, r.stderr)
	}
	r = own.run("", "auth", "status")
	if !strings.Contains(r.stdout, "nodius-ai's own agent answers, as NODIUS_AI_BASE_URL chose, on its graphs") {
		t.Errorf("auth status with own model: %s", r.stdout)
	}
}

// Several logins: the last is the default, auth switch chooses another, and logging
// out of the default leaves none (the demo again), said in one line.
func TestSeveralLogins(t *testing.T) {
	t.Parallel()
	a := remotetest.New(t)
	b := remotetest.New(t)
	a.SetChat(func(s *remotetest.Session) { s.Token("from A"); s.Complete("from A") })
	b.SetChat(func(s *remotetest.Session) { s.Token("from B"); s.Complete("from B") })
	e := newFreshUser(t, "")
	ask := func(ws string) result {
		t.Helper()
		w := &env{t: t, dir: e.dir, vars: append(append([]string(nil), e.vars...), "NODIUS_AI_WS_URL="+ws)}
		return w.run("", "ask", "--graph", "g1", "hello")
	}
	for _, s := range []*remotetest.Server{a, b} {
		if r := e.run("tok-alice\n", "auth", "login", "--server", s.URL, "--with-token"); r.code != 0 {
			t.Fatalf("login: %d %s", r.code, r.stderr)
		}
	}
	if r := ask(b.WSURL); r.code != 0 || r.stdout != "from B\n" {
		t.Fatalf("the last login is not the default: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r := e.run("", "auth", "switch", "--server", a.URL)
	if r.code != 0 || !strings.Contains(r.stderr, a.URL+" (logged in as alice) is now the default server") {
		t.Fatalf("switch: %d %s", r.code, r.stderr)
	}
	if r := ask(a.WSURL); r.code != 0 || r.stdout != "from A\n" {
		t.Fatalf("after switch: %d %q %s", r.code, r.stdout, r.stderr)
	}
	// Two logins: switch alone toggles.
	if r := e.run("", "auth", "switch"); r.code != 0 || !strings.Contains(r.stderr, b.URL) {
		t.Fatalf("switch alone: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "auth", "switch", "--server", "http://127.0.0.1:1"); r.code != 2 || !strings.Contains(r.stderr, "auth login --server http://127.0.0.1:1") {
		t.Fatalf("switch to a server never logged in to: %d %s", r.code, r.stderr)
	}
	// Logging out of the default: none, in one line; the other login stays.
	r = e.run("", "auth", "logout", "--server", b.URL)
	if r.code != 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
		!strings.Contains(r.stderr, "it was the default server, so there is none now: commands use the demo graph again") ||
		!strings.Contains(r.stderr, "auth switch --server "+a.URL) {
		t.Fatalf("logout of the default: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "ask", "--graph", "demo", "--format", "json", "hello"); r.code != 2 || !strings.Contains(r.stderr, "no LLM provider") {
		t.Fatalf("after logout, the local agent on the demo: %d %s", r.code, r.stderr)
	}
	r = e.run("", "auth", "status")
	if !strings.Contains(r.stdout, "No default server") || !strings.Contains(r.stdout, a.URL) {
		t.Fatalf("status: %s", r.stdout)
	}
}

// A token set with NODIUS_AI_TOKEN and no server named: auth status says it is sent
// to none, in a sentence that reads right.
func TestAuthStatusTokenWithoutServer(t *testing.T) {
	t.Parallel()
	e := newFreshUser(t, "")
	e.vars = append(e.vars, "NODIUS_AI_TOKEN=jwt-secret-sig")
	r := e.runR("", "auth", "status")
	want := "A token is set by NODIUS_AI_TOKEN (hidden), but no server is named by --agent, --source, NODIUS_AI_AGENT, NODIUS_AI_SOURCE or the config file, so it is sent to none."
	if r.code != 0 || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "only.") {
		t.Fatalf("auth status: exit %d\n%s", r.code, r.stdout)
	}
}

// --config takes a regular file of bounded size: a device, a FIFO and a directory
// are refused at once with one sentence and exit 2. A misspelt key is a warning with
// a suggestion for a command that does not run the assistant, an error for one
// that does.
func TestConfigFileKinds(t *testing.T) {
	t.Parallel()
	e := newFreshUser(t, "")
	fifo := filepath.Join(e.dir, "config.fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for path, what := range map[string]string{"/dev/zero": "a device", fifo: "a named pipe", e.dir: "a directory"} {
		start := time.Now()
		r := e.run("", "--config", path, "threads", "list")
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "is "+what+", not a regular file") {
			t.Errorf("--config %s: exit %d, %q", path, r.code, r.stderr)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("--config %s took %v", path, d)
		}
	}

	bad := filepath.Join(e.dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("max_tool_round = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const hint = "unknown setting max_tool_round (did you mean max_tool_rounds?)"
	r := e.run("", "--config", bad, "threads", "list")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: config file "+bad+": "+hint+"; ignored") {
		t.Errorf("offline command with a misspelt key: exit %d, %q", r.code, r.stderr)
	}
	r = e.run("", "--config", bad, "ask", "--graph", "demo", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, hint) || strings.Contains(r.stderr, "warning") {
		t.Errorf("ask with a misspelt key: exit %d, %q", r.code, r.stderr)
	}
}

// A thread this terminal's agent answered before the login is still its: the
// "Decide with" command printed then runs with the local agent, on the thread's own
// source, and nothing of it goes to the default server.
func TestLocalThreadKeepsItsAgentAfterLogin(t *testing.T) {
	t.Parallel()
	srv := remotetest.New(t)
	e := newEnv(t, proposeNode("p1"), llmtest.Turn{Text: "Created log-result."})
	e.vars = append(e.vars, "NODIUS_AI_KEYRING=off")
	r := e.run("", "ask", "--graph", "demo", "add a log node")
	if r.code != 3 {
		t.Fatalf("ask: exit %d %s", r.code, r.stderr)
	}
	thread := regexp.MustCompile(`nodius-ai approve (ai_\S+)`).FindStringSubmatch(r.stderr)
	if thread == nil {
		t.Fatalf("no command printed: %s", r.stderr)
	}
	// The user logs in; the provider settings of this shell stay as they were.
	if r := e.run("tok-alice\n", "auth", "login", "--server", srv.URL, "--with-token"); r.code != 0 {
		t.Fatalf("login: %d %s", r.code, r.stderr)
	}
	r = e.run("", "approve", thread[1])
	if r.code != 0 || !strings.Contains(r.stdout, "Created log-result.") {
		t.Fatalf("approve after login: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	// Without nodius-ai's own model, the login's default would be the server's
	// assistant: the thread still stays with the local agent.
	bare := &env{t: t, dir: e.dir, vars: slicesWithout(e.vars, "NODIUS_AI_BASE_URL", "NODIUS_AI_API_KEY", "NODIUS_AI_MODEL", "NODIUS_AI_SOURCE")}
	before := len(srv.Received()) // the login's check of the token
	r = bare.run("", "ask", "--thread", thread[1], "and then?")
	if strings.Contains(r.stderr, "not by a server") || len(srv.Received()) != before {
		t.Fatalf("a local thread went to the login's server: exit %d, %s, %v", r.code, r.stderr, srv.Received()[before:])
	}
}
