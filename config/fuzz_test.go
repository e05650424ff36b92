package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodius/nodius-ai/internal/fault"
)

// FuzzLoad: no config file makes Load panic; it fails with a config_error or gives
// settings that hold (durations finite and ≥ 0, limits set, a known role).
func FuzzLoad(f *testing.F) {
	for _, s := range []string{"", `provider = "deepseek"`, `cache_ttl = "2m"`, `cache_ttl = nan`, `cache_ttl = -1`,
		"[limits]\nmax_cost_usd = inf\nmax_answer_bytes = 10", "max_tool_rounds = 0", "[policy]\ncreate_node = \"auto\"",
		"[providers.x]\nbase_url = \"http://h/v1\"\npricing = { input_per_million = nan }", `role = "admin"`, "= ="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string {
			switch k {
			case "HOME":
				return dir
			case "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME":
				return dir
			}
			return ""
		}
		cfg, err := Load(LoadOptions{Getenv: getenv, ConfigPath: path})
		if err != nil {
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.Config {
				t.Fatalf("Load failed without a config_error: %v", err)
			}
			return
		}
		if cfg.CacheTTL < 0 || cfg.MaxToolRounds < 1 || cfg.Limits.MaxAnswerBytes <= 0 || cfg.Limits.MaxToolCalls <= 0 || cfg.Limits.MaxCostUSD < 0 {
			t.Fatalf("Load accepted %q: ttl %v, rounds %d, limits %+v", content, cfg.CacheTTL, cfg.MaxToolRounds, cfg.Limits)
		}
	})
}
