package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/internal/credstore"
)

// A login file that cannot be read does not stop a command, but the user is told
// that the default server of auth login is not used (instead of silently finding
// the demo graph), once; config shows it; the auth commands say it as their error.
func TestUnreadableLoginFileIsSaid(t *testing.T) {
	t.Parallel()
	cfgDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgDir, "nodius-ai"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "nodius-ai", "hosts.json"), []byte("{bad"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}
	const said = "the default server of auth login is not used"

	_, errOut, code := runCLI(t, "", env, "threads", "list")
	if code != 0 || strings.Count(errOut, said) != 1 || !strings.Contains(errOut, "hosts.json is not valid") {
		t.Errorf("threads list: code %d, stderr %q; want one warning naming the login file", code, errOut)
	}
	out, errOut, code := runCLI(t, "", env, "config")
	if code != 0 || !strings.Contains(out, "default server") || !strings.Contains(out, said) || strings.Contains(errOut, said) {
		t.Errorf("config: code %d, out %q, stderr %q; want a default server row saying it, once", code, out, errOut)
	}
	_, errOut, code = runCLI(t, "", env, "auth", "status")
	if code == 0 || !strings.Contains(errOut, "hosts.json is not valid") || strings.Contains(errOut, said) {
		t.Errorf("auth status: code %d, stderr %q; want its own error only", code, errOut)
	}
}

// loggedIn writes a login file with one login, the default server, its token in
// the file.
func loggedIn(t *testing.T, cfgDir, host, token string) {
	t.Helper()
	dir := filepath.Join(cfgDir, "nodius-ai")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"default":"` + host + `","hosts":{"` + host + `":{"user":"alice","where":"file","token":"` + token + `"}}}`
	if err := os.WriteFile(filepath.Join(dir, "hosts.json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Naming the default server again as the source (--source server:URL of the
// server logged in to) keeps threads list --remote on it, with its stored token,
// instead of asking to log in.
func TestRemoteThreadsOfTheLoginNamedAsSource(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"threads":[]}`)
	}))
	t.Cleanup(srv.Close)
	host, err := credstore.Host(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	loggedIn(t, cfgDir, host, "tok-stored")
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}

	out, errOut, code := runCLI(t, "", env, "--source", "server:"+srv.URL, "threads", "list", "--remote")
	if code != 0 || !strings.Contains(out+errOut, "no thread") {
		t.Fatalf("threads list --remote --source server:LOGIN: code %d, %q %q", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) == 0 || auths[0] != "/api/ai/threads Bearer tok-stored" {
		t.Errorf("requests %q, want the threads asked with the stored token", auths)
	}
}

// Logging out of the default server says what commands use next: the demo graph,
// or what a variable or the config file names — not the demo when it is not.
func TestLogoutOfTheDefaultSaysWhatIsUsedNext(t *testing.T) {
	t.Parallel()
	const host = "http://127.0.0.1:9"
	tests := []struct {
		env       []string
		want, not string
	}{
		{nil, "commands use the demo graph again", "names"},
		{[]string{"NODIUS_AI_SOURCE", "file:graph.json"}, "commands use the source file:graph.json, which NODIUS_AI_SOURCE names", "demo"},
		{[]string{"NODIUS_AI_AGENT", "server:http://127.0.0.1:7"}, "commands use server:http://127.0.0.1:7, which NODIUS_AI_AGENT names", "demo"},
	}
	for _, tt := range tests {
		cfgDir := t.TempDir()
		loggedIn(t, cfgDir, host, "tok-stored")
		env := mergeEnv(map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}, tt.env...)
		_, errOut, code := runCLI(t, "", env, "auth", "logout")
		if code != 0 || !strings.Contains(errOut, "it was the default server") || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, tt.not) {
			t.Errorf("%v: auth logout: code %d, %q; want %q", tt.env, code, errOut, tt.want)
		}
	}
}

// With logins but no default, auth status offers an auth switch that runs as
// printed: it names a server logged in to, not a placeholder.
func TestStatusWithoutDefaultOffersARunnableSwitch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"user":{"username":"alice"}}`)
	}))
	t.Cleanup(srv.Close)
	host, err := credstore.Host(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	loggedIn(t, cfgDir, host, "tok-stored")
	p := filepath.Join(cfgDir, "nodius-ai", "hosts.json")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `"default":"`+host+`",`, "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}
	out, _, code := runCLI(t, "", env, "auth", "status")
	want := "'nodius-ai auth switch --server " + host + "'"
	if code != 0 || !strings.Contains(out, "No default server") || !strings.Contains(out, want) {
		t.Fatalf("auth status: code %d, %q; want %s", code, out, want)
	}
	if _, errOut, code := runCLI(t, "", env, "auth", "switch", "--server", host); code != 0 {
		t.Errorf("the printed auth switch: code %d, %q", code, errOut)
	}
}

// A --token typed while the default server of auth login is in use, with no server
// named, is sent to none: the command says so once, with the flag that sends it.
func TestTokenFlagWithOnlyTheDefaultServerIsSaid(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"threads":[]}`)
	}))
	t.Cleanup(srv.Close)
	host, err := credstore.Host(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	loggedIn(t, cfgDir, host, "tok-stored")
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}

	_, errOut, code := runCLI(t, "", env, "--token", "tok-typed", "threads", "list", "--remote")
	want := "To send it there, name it: --agent server:" + host
	if code != 0 || strings.Count(errOut, "sent to none") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("threads list --remote --token: code %d, %q; want one warning ending %q", code, errOut, want)
	}
	mu.Lock()
	if len(auths) != 1 || auths[0] != "Bearer tok-stored" {
		t.Errorf("sent %q, want the stored token only", auths)
	}
	mu.Unlock()
	// Named, it is sent, and nothing is said.
	_, errOut, code = runCLI(t, "", env, "--token", "tok-typed", "--agent", "server:"+host, "threads", "list", "--remote")
	if code != 0 || strings.Contains(errOut, "sent to none") {
		t.Errorf("with --agent: code %d, %q", code, errOut)
	}
	mu.Lock()
	if len(auths) != 2 || auths[1] != "Bearer tok-typed" {
		t.Errorf("sent %q, want the typed token to the named server", auths)
	}
	mu.Unlock()
}
