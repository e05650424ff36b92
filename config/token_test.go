package config

import "testing"

// The token for a server: the configured one (flag > environment > file) only for
// the server the configuration names, else the one stored for exactly that host.
func TestServerToken(t *testing.T) {
	t.Parallel()
	stored := map[string]string{
		"https://nodius.example:443": "stored-main",
		"http://127.0.0.1:8426":      "stored-local",
	}
	lookup := func(host string) (string, string, error) { return stored[host], "keyring", nil }
	tests := []struct {
		name       string
		flags      map[string]string
		env        map[string]string
		thread     string // a source adopted from a thread's record
		target     string
		want, from string
	}{
		{"flag for the agent", map[string]string{"agent": "server:https://nodius.example", "token": "flag-tok"},
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "", "https://nodius.example/ws", "flag-tok", "--token"},
		{"env for the agent", map[string]string{"agent": "server:https://nodius.example"},
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "", "https://nodius.example:443", "env-tok", "NODIUS_AI_TOKEN"},
		{"env for a source", map[string]string{"source": "server:http://127.0.0.1:8426"},
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "", "http://127.0.0.1:8426/api", "env-tok", "NODIUS_AI_TOKEN"},
		{"stored when no token is configured", map[string]string{"agent": "server:https://nodius.example"},
			nil, "", "https://nodius.example", "stored-main", "auth login for https://nodius.example:443 (keyring)"},
		{"configured token not for another host", map[string]string{"agent": "server:https://nodius.example", "token": "flag-tok"},
			nil, "", "https://evil.example", "", ""},
		{"configured token not for another port", map[string]string{"agent": "server:https://nodius.example", "token": "flag-tok"},
			nil, "", "https://nodius.example:8443", "", ""},
		{"configured token not for http of the same name", map[string]string{"agent": "server:https://nodius.example", "token": "flag-tok"},
			nil, "", "http://nodius.example", "", ""},
		{"another host's stored token, never", nil, nil, "", "https://evil.example", "", ""},
		{"a thread's recorded host gets no configured token", nil,
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "server:http://evil.example:9", "http://evil.example:9", "", ""},
		{"a thread's recorded host gets its own stored token only", nil,
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "server:http://127.0.0.1:8426", "http://127.0.0.1:8426", "stored-local", "auth login for http://127.0.0.1:8426 (keyring)"},
		{"configured token for another server stays home", map[string]string{"source": "server:https://nodius.example"},
			map[string]string{"NODIUS_AI_TOKEN": "env-tok"}, "", "http://127.0.0.1:8426", "stored-local", "auth login for http://127.0.0.1:8426 (keyring)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(LoadOptions{Flags: tt.flags, Getenv: func(k string) string {
				if k == "HOME" || k == "XDG_CONFIG_HOME" {
					return "/nonexistent"
				}
				return tt.env[k]
			}})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Stored = lookup
			if tt.thread != "" {
				cfg.Source, cfg.Origins["source"] = tt.thread, OriginThread
			}
			got, from, err := cfg.ServerToken(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || from != tt.from {
				t.Errorf("ServerToken(%s) = %q from %q, want %q from %q", tt.target, got, from, tt.want, tt.from)
			}
		})
	}
	cfg := &Config{Token: "tok", Agent: "server:ftp://x", Stored: lookup}
	if tok, _, err := cfg.ServerToken("ftp://x"); tok != "" || err != nil {
		t.Errorf("a non-http server gets %q, %v", tok, err)
	}
}
