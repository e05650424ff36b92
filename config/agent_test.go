package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/internal/fault"
)

func TestLoadAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte("agent = \"server:https://file.example\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		flags, env map[string]string
		path       string
		agent      string
		source     string
	}{
		{name: "default", agent: "local", source: "demo"},
		{name: "env", env: map[string]string{"NODIUS_AI_AGENT": "server:http://127.0.0.1:8426"}, agent: "server:http://127.0.0.1:8426", source: "server:http://127.0.0.1:8426"},
		{name: "flag over env", flags: map[string]string{"agent": "local"}, env: map[string]string{"NODIUS_AI_AGENT": "server:http://x"}, agent: "local", source: "demo"},
		{name: "file", path: file, agent: "server:https://file.example", source: "server:https://file.example"},
		{name: "explicit source kept", flags: map[string]string{"agent": "server:http://x", "source": "demo"}, agent: "server:http://x", source: "demo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(LoadOptions{Flags: tt.flags, Getenv: env(dir, tt.env), ConfigPath: tt.path})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Agent != tt.agent || cfg.Source != tt.source {
				t.Fatalf("agent %q source %q, want %q %q", cfg.Agent, cfg.Source, tt.agent, tt.source)
			}
		})
	}
	for _, bad := range []string{"remote", "server:", "https://x"} {
		_, err := Load(LoadOptions{Flags: map[string]string{"agent": bad}, Getenv: env(dir, nil)})
		if ce, ok := fault.As(err); !ok || ce.Code != fault.Config || !strings.Contains(ce.Message, "server:URL") {
			t.Fatalf("agent %q: %v", bad, err)
		}
	}
}
