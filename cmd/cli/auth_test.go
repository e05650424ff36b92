package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads"
)

// recorder is a loopback server that counts requests and those carrying an
// Authorization header.
type recorder struct {
	mu        sync.Mutex
	requests  int
	withAuth  []string
	srv       *httptest.Server
	handle    func(w http.ResponseWriter, r *http.Request)
	validTok  string
	revokeTok string
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.requests++
		if a := r.Header.Get("Authorization"); a != "" {
			rec.withAuth = append(rec.withAuth, r.Method+" "+r.URL.Path+" "+a)
		}
		h := rec.handle
		rec.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) valid() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.validTok
}

func (r *recorder) counts() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, append([]string(nil), r.withAuth...)
}

// fakeAuth answers /api/auth/login and /api/auth/me as the real server does (recorded
// in the shared fixtures, 07-http.jsonl): alice/pw logs in; a new login revokes the previous token.
func (r *recorder) fakeAuth(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	user := map[string]any{"userId": "u1", "username": "alice", "roles": []string{"editor"}, "workspaces": []string{"w1"}}
	switch req.URL.Path {
	case "/api/auth/login":
		var b struct{ Username, Password string }
		_ = json.NewDecoder(req.Body).Decode(&b)
		if b.Username != "alice" || b.Password != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"success":false,"error":"Invalid username or password"}`))
			return
		}
		r.mu.Lock()
		r.revokeTok, r.validTok = r.validTok, "tok-"+time.Now().Format("150405.000000000")
		tok := r.validTok
		r.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "token": tok, "user": user})
	case "/api/auth/me":
		tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
		r.mu.Lock()
		valid, revoked := r.validTok, r.revokeTok
		r.mu.Unlock()
		switch {
		case tok != "" && tok == valid:
			_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "user": user})
		case tok != "" && tok == revoked:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"success":false,"error":"Token has been revoked"}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"success":false,"error":"Invalid token"}`))
		}
	default:
		http.NotFound(w, req)
	}
}

// storedFile reads the login file under cfgDir.
func storedFile(t *testing.T, cfgDir string) string {
	t.Helper()
	p := filepath.Join(cfgDir, "nodius-ai", "hosts.json")
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestAuthLoginStatusLogout(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t)
	rec.handle = rec.fakeAuth
	cfgDir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "NODIUS_AI_KEYRING": "off"}
	server := rec.srv.URL

	// Without a terminal or --yes, a password login is refused before anything is sent.
	_, errOut, code := runCLI(t, "pw\n", env, "auth", "login", "--server", server, "--username", "alice")
	if code != ExitUsage || !strings.Contains(errOut, "revoke") || !strings.Contains(errOut, "--with-token") {
		t.Fatalf("login without --yes: code %d, %q", code, errOut)
	}
	if n, _ := rec.counts(); n != 0 {
		t.Fatalf("%d requests sent before confirmation", n)
	}

	// A wrong password: an auth error, nothing stored.
	_, errOut, code = runCLI(t, "nope\n", env, "auth", "login", "--server", server, "--username", "alice", "--yes")
	if code != ExitRuntime || !strings.Contains(errOut, "auth") || !strings.Contains(errOut, "Invalid username or password") {
		t.Fatalf("wrong password: code %d, %q", code, errOut)
	}
	if s := storedFile(t, cfgDir); strings.Contains(s, "tok-") {
		t.Fatalf("a refused login stored %s", s)
	}

	// The password login works, says what it revokes, and never prints the token.
	out, errOut, code := runCLI(t, "pw\n", env, "auth", "login", "--server", server, "--username", "alice", "--yes")
	if code != 0 || !strings.Contains(errOut, "revoke") || !strings.Contains(errOut, "Logged in") {
		t.Fatalf("login: code %d, %q", code, errOut)
	}
	first := rec.valid()
	if strings.Contains(out+errOut, first) {
		t.Fatal("login printed the token")
	}
	if s := storedFile(t, cfgDir); !strings.Contains(s, first) {
		t.Fatalf("token not stored in the file: %s", s)
	}

	out, _, code = runCLI(t, "", env, "auth", "status")
	if code != 0 || !strings.Contains(out, "✓") || !strings.Contains(out, "alice") || strings.Contains(out, first) {
		t.Fatalf("status: code %d, %q", code, out)
	}
	// config shows where the token comes from, not the token.
	out, _, code = runCLI(t, "", mergeEnv(env, "NODIUS_AI_AGENT", "server:"+server), "config")
	if code != 0 || !strings.Contains(out, "auth login for") || strings.Contains(out, first) {
		t.Fatalf("config: code %d, %q", code, out)
	}

	// Another login (the web editor's) revokes ours: status says so in one sentence.
	if _, err := http.Post(server+"/api/auth/login", "application/json", strings.NewReader(`{"username":"alice","password":"pw"}`)); err != nil {
		t.Fatal(err)
	}
	out, _, code = runCLI(t, "", env, "auth", "status")
	if code != ExitRuntime || !strings.Contains(out, "revoked by a newer login") || !strings.Contains(out, "--with-token") {
		t.Fatalf("status after revocation: code %d, %q", code, out)
	}

	// --with-token: a revoked token is refused and not stored; the current one is.
	_, errOut, code = runCLI(t, first+"\n", env, "auth", "login", "--server", server, "--with-token")
	if code != ExitRuntime || !strings.Contains(errOut, "auth") || !strings.Contains(errOut, "revoked") || strings.Contains(errOut, first) {
		t.Fatalf("with a revoked token: code %d, %q", code, errOut)
	}
	web := rec.valid()
	_, errOut, code = runCLI(t, web+"\n", env, "auth", "login", "--server", server, "--with-token")
	if code != 0 || strings.Contains(errOut, "revoke") {
		t.Fatalf("with-token: code %d, %q", code, errOut)
	}
	if rec.valid() != web {
		t.Fatal("--with-token revoked the web session")
	}
	if s := storedFile(t, cfgDir); !strings.Contains(s, web) || strings.Contains(s, first) {
		t.Fatalf("stored after --with-token: %s", s)
	}

	_, errOut, code = runCLI(t, "", env, "auth", "logout")
	if code != 0 || !strings.Contains(errOut, "Forgot") {
		t.Fatalf("logout: code %d, %q", code, errOut)
	}
	if s := storedFile(t, cfgDir); strings.Contains(s, web) {
		t.Fatalf("logout left the token: %s", s)
	}
	if rec.valid() != web {
		t.Fatal("logout revoked the token on the server")
	}
}

func mergeEnv(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// importThread stores, through `threads import`, a thread document that records
// source and holds one pending proposal, and returns its id.
func importThread(t *testing.T, env map[string]string, source string) string {
	t.Helper()
	now := time.Now().Truncate(time.Millisecond)
	th := convo.Thread{ID: "ai_imported1", GraphKey: "g1", Workspace: "default", Title: "from elsewhere",
		Status: convo.Active, Source: source, CreatedAt: now, UpdatedAt: now}
	tr := threads.Transcript{
		Thread: th,
		Messages: []convo.Message{
			{ThreadID: th.ID, Role: convo.User, Content: "add a node", Status: convo.Complete, CreatedAt: now},
			{ThreadID: th.ID, Role: convo.Assistant, Status: convo.Complete, CreatedAt: now,
				ToolCalls: []convo.ToolCall{{ID: "call_1", Name: "propose_create_node", Arguments: `{}`}}},
		},
		Proposals: []convo.Proposal{{ID: "call_1", ThreadID: th.ID, ToolCallID: "call_1", Tool: "propose_create_node",
			Action:   datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{TypeKey: "t", Sheet: "0"}},
			Decision: convo.Pending, Reason: "because", CreatedAt: now}},
	}
	b, err := json.Marshal(threads.DocumentOf(tr))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, string(b), env, "threads", "import", "-")
	if code != 0 {
		t.Fatalf("import: code %d, %q", code, errOut)
	}
	return strings.TrimSpace(out)
}

// A thread imported from elsewhere whose recorded source is server:http://ANYHOST
// makes approve, reject, undo and threads show --pictures send nothing there — no
// token, no request — even when a token and another source are configured; each
// says how to name the source to use it.
func TestImportedThreadSourceGetsNoCredential(t *testing.T) {
	t.Parallel()
	evil := newRecorder(t)
	home := newRecorder(t) // the user's own server
	base := map[string]string{"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db"), "NODIUS_AI_TOKEN": "my-secret-token",
		"XDG_CONFIG_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}
	id := importThread(t, base, "server:"+evil.srv.URL)
	otherSource := mergeEnv(base, "NODIUS_AI_SOURCE", "server:"+home.srv.URL)
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"approve", base, []string{"approve", id}},
		{"reject", base, []string{"reject", id}},
		{"undo", base, []string{"undo", id}},
		{"show pictures", base, []string{"threads", "show", id, "--pictures"}},
		{"approve, another source configured", otherSource, []string{"approve", id}},
		{"show pictures, another source configured", otherSource, []string{"threads", "show", id, "--pictures"}},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, "", tt.env, tt.args...)
		if strings.Contains(out+errOut, "my-secret-token") {
			t.Errorf("%s printed the token", tt.name)
		}
		if !strings.Contains(out+errOut, "--source "+"server:"+evil.srv.URL) && !strings.HasPrefix(tt.name, "undo") {
			t.Errorf("%s: code %d, does not say how to use the source: %s%s", tt.name, code, out, errOut)
		}
		if strings.HasPrefix(tt.name, "approve") || tt.name == "reject" {
			if code != ExitUsage {
				t.Errorf("%s: code %d, want %d: %s", tt.name, code, ExitUsage, errOut)
			}
		}
	}
	if n, auth := evil.counts(); n != 0 || len(auth) != 0 {
		t.Errorf("the thread's recorded host got %d requests, with a credential: %v", n, auth)
	}
}

// A thread started here on a server keeps its recorded source, but the configured
// token (NODIUS_AI_TOKEN) is for the configured server only: drawing the thread's
// pictures sends it nothing; once auth login stored a token for exactly that
// server, that token (and only it) goes there.
func TestRecordedSourceGetsOnlyItsOwnStoredToken(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t)
	rec.handle = rec.fakeAuth
	db := filepath.Join(t.TempDir(), "threads.db")
	env := map[string]string{"NODIUS_AI_DB": db, "NODIUS_AI_TOKEN": "my-secret-token",
		"XDG_CONFIG_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}
	s, err := threads.Open(t.Context(), db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.CreateThread(t.Context(), convo.Thread{GraphKey: "g1", Workspace: "default", Source: "server:" + rec.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	call := convo.ToolCall{ID: "call_1", Name: "propose_create_node", Arguments: `{}`}
	for _, m := range []*convo.Message{
		{ThreadID: th.ID, Role: convo.User, Content: "add a node"},
		{ThreadID: th.ID, Role: convo.Assistant, Status: convo.Complete, ToolCalls: []convo.ToolCall{call}},
	} {
		if err := s.SaveMessage(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	err = s.SaveProposal(t.Context(), convo.Proposal{ID: call.ID, ThreadID: th.ID, ToolCallID: call.ID, Tool: call.Name, Decision: convo.Pending,
		Action: datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{TypeKey: "t", Sheet: "0"}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	showPictures := func() {
		t.Helper()
		runCLI(t, "", env, "threads", "show", th.ID, "--pictures")
	}
	showPictures()
	if _, auth := rec.counts(); len(auth) != 0 {
		t.Fatalf("the thread's recorded server got a credential it was not issued: %v", auth)
	}
	if _, err := http.Post(rec.srv.URL+"/api/auth/login", "application/json", strings.NewReader(`{"username":"alice","password":"pw"}`)); err != nil {
		t.Fatal(err)
	}
	tok := rec.valid()
	if _, errOut, code := runCLI(t, tok+"\n", env, "auth", "login", "--server", rec.srv.URL, "--with-token"); code != 0 {
		t.Fatalf("login: %d %s", code, errOut)
	}
	before := len(func() []string { _, a := rec.counts(); return a }())
	showPictures()
	_, auth := rec.counts()
	for _, a := range auth {
		if strings.Contains(a, "my-secret-token") {
			t.Errorf("the configured token reached the thread's server: %s", a)
		}
	}
	if len(auth) == before {
		t.Errorf("the stored token for the thread's own server was not used: %v", auth)
	}
}
