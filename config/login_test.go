package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

const loginHost = "http://127.0.0.1:8426"

// The default server of auth login is the lowest layer of the agent and the
// source: with nothing else set, the server's assistant answers on the server's
// graphs; a provider key alone keeps it so; nodius-ai's own model (named as a flag,
// a NODIUS_AI_ variable or in the file) makes the local agent answer on the
// server's graphs; anything naming an agent or a source wins over the login.
func TestLoginDefault(t *testing.T) {
	t.Parallel()
	const srv = "server:" + loginHost
	tests := []struct {
		name        string
		login       string
		flags       map[string]string
		env         map[string]string
		file        string
		agent, from string
		source, src string
	}{
		{name: "no login", agent: "local", from: OriginDefault, source: "demo", src: OriginDefault},
		{name: "login, no provider", login: loginHost, agent: srv, from: OriginLogin, source: srv, src: OriginLogin},
		{name: "login, a provider key in the environment", login: loginHost, env: map[string]string{"DEEPSEEK_API_KEY": "sk"},
			agent: srv, from: OriginLogin, source: srv, src: OriginLogin},
		{name: "login, --model", login: loginHost, env: map[string]string{"DEEPSEEK_API_KEY": "sk"}, flags: map[string]string{"model": "m"},
			agent: "local", from: "default (--model chose nodius-ai's own model)", source: srv, src: OriginLogin},
		{name: "login, NODIUS_AI_BASE_URL", login: loginHost, env: map[string]string{"NODIUS_AI_BASE_URL": "http://127.0.0.1:1/v1"},
			agent: "local", from: "default (NODIUS_AI_BASE_URL chose nodius-ai's own model)", source: srv, src: OriginLogin},
		{name: "login, provider in the file", login: loginHost, file: `provider = "ollama"`,
			agent: "local", from: "default (the config file chose nodius-ai's own model)", source: srv, src: OriginLogin},
		{name: "login, --agent local", login: loginHost, flags: map[string]string{"agent": "local"},
			agent: "local", from: "--agent", source: srv, src: OriginLogin},
		{name: "login, a source named", login: loginHost, env: map[string]string{"NODIUS_AI_SOURCE": "file:/g.json"},
			agent: "local", from: OriginDefault, source: "file:/g.json", src: "NODIUS_AI_SOURCE"},
		{name: "login, the login's server named as the source", login: loginHost, flags: map[string]string{"source": srv},
			agent: "local", from: OriginDefault, source: srv, src: "--source"},
		{name: "login, another server named as the agent", login: loginHost, file: `agent = "server:https://other.example"`,
			agent: "server:https://other.example", from: OriginFile, source: "server:https://other.example", src: "the agent (the config file)"},
		{name: "login, demo named", login: loginHost, flags: map[string]string{"source": "demo"},
			agent: "local", from: OriginDefault, source: "demo", src: "--source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.file != "" {
				writeConfig(t, dir, tt.file)
			}
			cfg, err := Load(LoadOptions{Flags: tt.flags, Getenv: env(dir, tt.env), Login: tt.login})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Agent != tt.agent || cfg.Origins["agent"] != tt.from {
				t.Errorf("agent = %q from %q, want %q from %q", cfg.Agent, cfg.Origins["agent"], tt.agent, tt.from)
			}
			if cfg.Source != tt.source || cfg.Origins["source"] != tt.src {
				t.Errorf("source = %q from %q, want %q from %q", cfg.Source, cfg.Origins["source"], tt.source, tt.src)
			}
			server, origin := cfg.Server()
			switch {
			case tt.login == "" && server != "":
				t.Errorf("Server() = %q with no login and no server named", server)
			case tt.src == OriginLogin && (server != loginHost || origin != OriginLogin):
				t.Errorf("Server() = %q from %q, want the login's %s", server, origin, loginHost)
			}
		})
	}
}

// The configured token (NODIUS_AI_TOKEN, --token) goes to a server the
// configuration names, never to the default server of auth login: that one gets
// the token stored for it.
func TestLoginDefaultGetsItsStoredToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := Load(LoadOptions{Getenv: env(dir, map[string]string{"NODIUS_AI_TOKEN": "env-tok"}), Login: loginHost})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Stored = func(host string) (string, string, error) {
		if host == loginHost {
			return "stored-tok", "keyring", nil
		}
		return "", "", nil
	}
	tok, from, err := cfg.ServerToken(loginHost)
	if err != nil || tok != "stored-tok" || !strings.HasPrefix(from, "auth login for "+loginHost) {
		t.Errorf("ServerToken = %q from %q, %v; want the stored token", tok, from, err)
	}
	if s := cfg.ConfiguredServer(); s != "" {
		t.Errorf("ConfiguredServer = %q: the login's default is not named by the configuration", s)
	}
}

// A config file that is not a regular file is refused at once with one sentence
// (a device would never end, a FIFO would block); a huge one is refused unread.
func TestConfigFileMustBeRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# comment\n", MaxFileBytes/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"/dev/zero", "is a device, not a regular file"},
		{fifo, "is a named pipe, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "is larger than 1024 KiB"},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			_, err := Load(LoadOptions{Getenv: env(dir, nil), ConfigPath: tt.path})
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("--config %s: Load is still reading", tt.path)
		}
		var ce *fault.Error
		if !errors.As(err, &ce) || ce.Code != fault.Config || !strings.Contains(ce.Message, tt.want) {
			t.Errorf("--config %s: %v, want a config_error saying %q", tt.path, err, tt.want)
		}
	}
}

// A setting the file has and nodius-ai does not know is kept aside with the known
// key it most likely meant: Load goes on (offline commands run), RequireKnown
// refuses (the assistant does not run).
func TestUnknownSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want string // UnknownText contains
	}{
		{"max_tool_round = 3", "unknown setting max_tool_round (did you mean max_tool_rounds?)"},
		{"providr = \"x\"", "unknown setting providr (did you mean provider?)"},
		{"[retrieval]\nexpnd = \"llm\"", "unknown setting retrieval.expnd (did you mean retrieval.expand?)"},
		{"[limits]\nmax_cost = 1.0", "unknown setting limits.max_cost (did you mean limits.max_cost_usd?)"},
		{"max_cost_usd = 1.0", "unknown setting max_cost_usd (did you mean max_cost_usd under [limits]?)"},
		{"[providers.local]\nbase_url = \"http://x/v1\"\nbasurl = \"y\"", "unknown setting providers.local.basurl (did you mean providers.local.base_url?)"},
		{"colour = \"blue\"", "unknown setting colour"},
		{"[limit]\nmax_cost_usd = 1.0", "unknown setting limit (did you mean limits?)"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		writeConfig(t, dir, tt.file)
		cfg, err := Load(LoadOptions{Getenv: env(dir, nil)})
		if err != nil {
			t.Fatalf("%q: Load = %v, want the unknown setting kept aside", tt.file, err)
		}
		if got := cfg.UnknownText(); !strings.Contains(got, tt.want) || strings.Count(got, "unknown setting") != 1 {
			t.Errorf("%q: %q, want %q once", tt.file, got, tt.want)
		}
		err = cfg.RequireKnown()
		var ce *fault.Error
		if !errors.As(err, &ce) || ce.Code != fault.Config || !strings.Contains(ce.Message, tt.want) {
			t.Errorf("%q: RequireKnown = %v", tt.file, err)
		}
	}
	dir := t.TempDir()
	writeConfig(t, dir, "max_tool_rounds = 3")
	if cfg, err := Load(LoadOptions{Getenv: env(dir, nil)}); err != nil || cfg.UnknownText() != "" || cfg.RequireKnown() != nil {
		t.Errorf("a known setting: %v %q", err, cfg.UnknownText())
	}
	if got := (UnknownSetting{Key: "a"}).String(); got != "a" {
		t.Errorf("no suggestion: %q", got)
	}
}

// Logged in, with nodius-ai's own agent left to answer and no model for it (the
// source named, or --agent local), the missing-provider error also gives the
// flag that lets the logged-in server's assistant answer, as it would run.
func TestRequireLLMNamesTheLoginsAssistant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := Load(LoadOptions{Getenv: env(dir, nil), Flags: map[string]string{"source": "server:" + loginHost}, Login: loginHost})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Agent != DefaultAgent {
		t.Fatalf("agent %q, want the local one (the source is named)", cfg.Agent)
	}
	err = cfg.RequireLLM()
	if err == nil || !strings.Contains(err.Error(), "--agent server:"+loginHost) {
		t.Errorf("RequireLLM = %v, want it to offer --agent server:%s", err, loginHost)
	}
	noLogin, err := Load(LoadOptions{Getenv: env(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := noLogin.RequireLLM(); err == nil || strings.Contains(err.Error(), "--agent server:") {
		t.Errorf("without a login: %v", err)
	}
}
