package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

// env builds a getenv over a map, with HOME and XDG dirs pointing into dir so that no
// test ever reads the developer's real config file.
func env(dir string, kv map[string]string) func(string) string {
	m := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "cfg")}
	for k, v := range kv {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "cfg", "nodius-ai", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadProvider(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		flags     map[string]string
		env       map[string]string
		file      string
		provider  string
		model     string
		baseURL   string
		key       string
		keySource string
		embModel  string
		embURL    string
	}{
		{name: "nothing set", provider: ""},
		{name: "deepseek detected first",
			env:      map[string]string{"DEEPSEEK_API_KEY": "sk-ds", "OPENAI_API_KEY": "sk-oa", "ANTHROPIC_API_KEY": "sk-an"},
			provider: "deepseek", model: "deepseek-chat", baseURL: "https://api.deepseek.com", key: "sk-ds", keySource: "DEEPSEEK_API_KEY",
			// DeepSeek has no embeddings: OpenAI's key serves them.
			embModel: "text-embedding-3-small", embURL: "https://api.openai.com/v1"},
		{name: "openai before anthropic",
			env:      map[string]string{"OPENAI_API_KEY": "sk-oa", "ANTHROPIC_API_KEY": "sk-an"},
			provider: "openai", model: "gpt-4o", baseURL: "https://api.openai.com/v1", key: "sk-oa", keySource: "OPENAI_API_KEY",
			embModel: "text-embedding-3-small", embURL: "https://api.openai.com/v1"},
		{name: "anthropic alone",
			env:      map[string]string{"ANTHROPIC_API_KEY": "sk-an"},
			provider: "anthropic", model: "claude-sonnet-4-20250514", baseURL: "https://api.anthropic.com", key: "sk-an", keySource: "ANTHROPIC_API_KEY"},
		{name: "others in registry order",
			env:      map[string]string{"MISTRAL_API_KEY": "m", "GROQ_API_KEY": "g"},
			provider: "groq", model: "llama-3.3-70b-versatile", baseURL: "https://api.groq.com/openai/v1", key: "g", keySource: "GROQ_API_KEY",
			embModel: "mistral-embed", embURL: "https://api.mistral.ai/v1"},
		{name: "ollama by name needs no key",
			flags:    map[string]string{"provider": "ollama"},
			provider: "ollama", model: "llama3.1", baseURL: "http://localhost:11434/v1",
			embModel: "nomic-embed-text", embURL: "http://localhost:11434/v1"},
		{name: "bare base url is custom",
			flags:    map[string]string{"base-url": "http://127.0.0.1:9/v1", "model": "m1"},
			env:      map[string]string{"DEEPSEEK_API_KEY": "sk-ds"},
			provider: "custom", model: "m1", baseURL: "http://127.0.0.1:9/v1"},
		{name: "env base url beats file provider",
			env:      map[string]string{"NODIUS_AI_BASE_URL": "http://127.0.0.1:9/v1"},
			file:     `provider = "deepseek"`,
			provider: "custom", baseURL: "http://127.0.0.1:9/v1"},
		{name: "provider and base url together",
			flags:    map[string]string{"provider": "ollama", "base-url": "http://gpu:11434/v1"},
			provider: "ollama", model: "llama3.1", baseURL: "http://gpu:11434/v1",
			embModel: "nomic-embed-text", embURL: "http://gpu:11434/v1"},
		{name: "flag beats env beats file",
			flags:    map[string]string{"model": "flag-model"},
			env:      map[string]string{"NODIUS_AI_PROVIDER": "openai-mini", "NODIUS_AI_MODEL": "env-model", "OPENAI_API_KEY": "sk-oa"},
			file:     "provider = \"deepseek\"\nmodel = \"file-model\"",
			provider: "openai-mini", model: "flag-model", baseURL: "https://api.openai.com/v1", key: "sk-oa", keySource: "OPENAI_API_KEY",
			embModel: "text-embedding-3-small", embURL: "https://api.openai.com/v1"},
		{name: "env model beats file model",
			env:      map[string]string{"NODIUS_AI_MODEL": "env-model", "DEEPSEEK_API_KEY": "k"},
			file:     "model = \"file-model\"",
			provider: "deepseek", model: "env-model", baseURL: "https://api.deepseek.com", key: "k", keySource: "DEEPSEEK_API_KEY"},
		{name: "api key flag",
			flags:    map[string]string{"provider": "deepseek", "api-key": "sk-flag"},
			env:      map[string]string{"DEEPSEEK_API_KEY": "sk-env"},
			provider: "deepseek", model: "deepseek-chat", baseURL: "https://api.deepseek.com", key: "sk-flag", keySource: "--api-key"},
		{name: "file key does not follow a flag provider",
			flags:    map[string]string{"provider": "openai"},
			env:      map[string]string{"OPENAI_API_KEY": "sk-oa"},
			file:     `api_key = "sk-file-deepseek"`,
			provider: "openai", model: "gpt-4o", baseURL: "https://api.openai.com/v1", key: "sk-oa", keySource: "OPENAI_API_KEY",
			embModel: "text-embedding-3-small", embURL: "https://api.openai.com/v1"},
		{name: "file adds a provider",
			flags: map[string]string{"provider": "local"},
			env:   map[string]string{"LOCAL_KEY": "lk"},
			file: `[providers.local]
base_url = "http://127.0.0.1:8000/v1"
default_model = "qwen3"
api_key_env = "LOCAL_KEY"
embedding_model = "bge"
`,
			provider: "local", model: "qwen3", baseURL: "http://127.0.0.1:8000/v1", key: "lk", keySource: "LOCAL_KEY",
			embModel: "bge", embURL: "http://127.0.0.1:8000/v1"},
		{name: "file overrides a built-in",
			env:      map[string]string{"DEEPSEEK_API_KEY": "k"},
			file:     "[providers.deepseek]\ndefault_model = \"deepseek-reasoner\"",
			provider: "deepseek", model: "deepseek-reasoner", baseURL: "https://api.deepseek.com", key: "k", keySource: "DEEPSEEK_API_KEY"},
		{name: "explicit embedding settings",
			flags:    map[string]string{"embedding-model": "e5"},
			env:      map[string]string{"DEEPSEEK_API_KEY": "k", "NODIUS_AI_EMBEDDING_BASE_URL": "http://127.0.0.1:7/v1"},
			provider: "deepseek", model: "deepseek-chat", baseURL: "https://api.deepseek.com", key: "k", keySource: "DEEPSEEK_API_KEY",
			embModel: "e5", embURL: "http://127.0.0.1:7/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.file != "" {
				writeConfig(t, dir, tt.file)
			}
			cfg, err := Load(LoadOptions{Flags: tt.flags, Getenv: env(dir, tt.env)})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got := []string{cfg.Provider, cfg.Model, cfg.BaseURL, cfg.APIKey, cfg.APIKeySource, cfg.EmbeddingModel, cfg.EmbeddingBaseURL}
			want := []string{tt.provider, tt.model, tt.baseURL, tt.key, tt.keySource, tt.embModel, tt.embURL}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestLoadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeConfig(t, dir, `
source = "file:/tmp/g.json"
role = "admin"
workspace = "team"
db = "~/threads.db"
debug = true
max_tool_rounds = 8
cache_ttl = "30s"
graph_lock_wait = 2.5

[policy]
create_node = "auto"
delete_node = "deny"

[limits]
max_tokens_per_call = 1000
max_cost_usd = 0.5

[retrieval]
expand = "LLM"
`)
	cfg, err := Load(LoadOptions{Getenv: env(dir, map[string]string{"NODIUS_AI_ROLE": "viewer"})})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"source", cfg.Source, "file:/tmp/g.json"},
		{"role env beats file", cfg.Role, "viewer"},
		{"workspace", cfg.Workspace, "team"},
		{"db home expanded", cfg.DB, filepath.Join(dir, "threads.db")},
		{"debug", cfg.Debug, true},
		{"rounds", cfg.MaxToolRounds, 8},
		{"ttl", cfg.CacheTTL, 30 * time.Second},
		{"graph lock wait", cfg.GraphLockWait, 2500 * time.Millisecond},
		{"policy auto", cfg.Policy[datasource.CreateNodeAction], PolicyAuto},
		{"policy deny", cfg.Policy[datasource.DeleteNodeAction], PolicyDeny},
		{"policy default", cfg.Policy[datasource.CreateEdgeAction], PolicyAsk},
		{"limits", cfg.Limits, Limits{MaxTokensPerCall: 1000, MaxCostUSD: 0.5}.WithDefaults()},
		{"file", cfg.File, filepath.Join(dir, "cfg", "nodius-ai", "config.toml")},
		{"expand", cfg.RetrievalExpand, ExpandLLM},
		{"expand origin", cfg.Origins["retrieval.expand"], OriginFile},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := Load(LoadOptions{Getenv: env(dir, map[string]string{"XDG_DATA_HOME": filepath.Join(dir, "data")})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source != "demo" || cfg.Role != "editor" || cfg.Workspace != "default" || cfg.MaxToolRounds != 5 || cfg.CacheTTL != 2*time.Minute || cfg.GraphLockWait != 10*time.Second || cfg.Debug || cfg.RetrievalExpand != ExpandOff {
		t.Errorf("defaults: %+v", cfg)
	}
	if want := filepath.Join(dir, "data", "nodius-ai", "threads.db"); cfg.DB != want {
		t.Errorf("db %q, want %q", cfg.DB, want)
	}
	if cfg.File != "" {
		t.Errorf("file %q, want none", cfg.File)
	}
	for _, a := range datasource.ActionTypes {
		if cfg.Policy[a] != PolicyAsk {
			t.Errorf("policy %s = %s", a, cfg.Policy[a])
		}
	}
	err = cfg.RequireLLM()
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Config || !strings.Contains(ce.Message, "DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY") {
		t.Errorf("RequireLLM: %v", err)
	}
}

func TestLoadDebugFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags map[string]string
		env   string
		want  bool
	}{
		{nil, "1", true},
		{nil, "true", true},
		{nil, "0", false},
		{map[string]string{"debug": "true"}, "", true},
		{map[string]string{"debug": "false"}, "1", false},
	}
	for i, tt := range tests {
		dir := t.TempDir()
		cfg, err := Load(LoadOptions{Flags: tt.flags, Getenv: env(dir, map[string]string{"NODIUS_AI_DEBUG": tt.env})})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Debug != tt.want {
			t.Errorf("%d: debug %v, want %v", i, cfg.Debug, tt.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		flags  map[string]string
		env    map[string]string
		file   string
		path   string // explicit --config
		inMsgs []string
	}{
		{name: "unknown provider", flags: map[string]string{"provider": "nope"},
			inMsgs: []string{`unknown provider "nope"`, "deepseek, openai, anthropic", "ollama"}},
		{name: "bad role", flags: map[string]string{"role": "god"}, inMsgs: []string{`role "god"`, "viewer, editor, admin"}},
		{name: "bad policy value", file: "[policy]\ncreate_node = \"maybe\"", inMsgs: []string{"create_node", `"maybe"`, `"ask", "auto" or "deny"`}},
		{name: "bad policy key", file: "[policy]\nexplode = \"auto\"", inMsgs: []string{`"explode"`, "create_node"}},
		{name: "malformed toml", file: "provider = \"deepseek\"\nmodel = = 3\n", inMsgs: []string{"config.toml line 2"}},
		{name: "missing explicit file", path: "/nonexistent/nodius.toml", inMsgs: []string{"/nonexistent/nodius.toml"}},
		{name: "bad rounds", file: "max_tool_rounds = 0", inMsgs: []string{"max_tool_rounds"}},
		{name: "bad ttl", file: `cache_ttl = "soon"`, inMsgs: []string{"cache_ttl"}},
		{name: "nan ttl", file: `cache_ttl = nan`, inMsgs: []string{"cache_ttl = NaN", "from 0 to 8760h"}},
		{name: "inf ttl", file: `cache_ttl = inf`, inMsgs: []string{"cache_ttl = +Inf", "number of seconds"}},
		{name: "negative ttl", file: `cache_ttl = -1.5`, inMsgs: []string{"cache_ttl = -1.5"}},
		{name: "negative ttl string", file: `cache_ttl = "-2m"`, inMsgs: []string{`cache_ttl = "-2m"`}},
		{name: "overflowing ttl", file: `cache_ttl = 9223372036854775807`, inMsgs: []string{"cache_ttl = 9223372036854775807"}},
		{name: "huge ttl string", file: `cache_ttl = "100000h"`, inMsgs: []string{"cache_ttl"}},
		{name: "negative lock wait", file: `graph_lock_wait = "-1s"`, inMsgs: []string{`graph_lock_wait = "-1s"`, "from 0 to 8760h"}},
		{name: "bad lock wait", file: `graph_lock_wait = "later"`, inMsgs: []string{"graph_lock_wait"}},
		{name: "bad expand", file: "[retrieval]\nexpand = \"gpt\"", inMsgs: []string{`expand = "gpt"`, `"off" or "llm"`}},
		{name: "nan cost", file: "[limits]\nmax_cost_usd = nan", inMsgs: []string{"max_cost_usd = NaN"}},
		{name: "negative size limit", file: "[limits]\nmax_answer_bytes = -1", inMsgs: []string{"max_answer_bytes = -1"}},
		{name: "overflowing size limit", file: "[limits]\nmax_answer_bytes = 9223372036854775807", inMsgs: []string{"max_answer_bytes = 9223372036854775807", "at most"}},
		{name: "huge token budget", file: "[limits]\nmax_tokens_per_thread = 9223372036854775807", inMsgs: []string{"max_tokens_per_thread"}},
		{name: "huge stream line", file: "[limits]\nmax_stream_line_bytes = 9223372036854775000", inMsgs: []string{"max_stream_line_bytes"}},
		{name: "huge cost", file: "[limits]\nmax_cost_usd = 1e300", inMsgs: []string{"max_cost_usd"}},
		{name: "new provider without url", file: "[providers.x]\ndefault_model = \"m\"", inMsgs: []string{"[providers.x] needs a base_url"}},
		{name: "bad base url", flags: map[string]string{"base-url": "localhost:8080"}, inMsgs: []string{"http://"}},
		{name: "bad base url with a password", flags: map[string]string{"base-url": "http//u:PW@host"}, inMsgs: []string{`"http//u:***@host"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.file != "" {
				writeConfig(t, dir, tt.file)
			}
			_, err := Load(LoadOptions{Flags: tt.flags, Getenv: env(dir, tt.env), ConfigPath: tt.path})
			var ce *fault.Error
			if !errors.As(err, &ce) || ce.Code != fault.Config {
				t.Fatalf("want config_error, got %v", err)
			}
			for _, m := range tt.inMsgs {
				if !strings.Contains(ce.Message, m) {
					t.Errorf("message %q lacks %q", ce.Message, m)
				}
			}
		})
	}
}

func TestRequireLLMAndSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const secret = "sk-very-secret-123"
	cfg, err := Load(LoadOptions{Flags: map[string]string{"provider": "deepseek"}, Getenv: env(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.RequireLLM(); err == nil || !strings.Contains(err.Error(), "set DEEPSEEK_API_KEY") {
		t.Errorf("RequireLLM without key: %v", err)
	}
	cfg, err = Load(LoadOptions{Getenv: env(dir, map[string]string{"DEEPSEEK_API_KEY": secret, "NODIUS_AI_SOURCE": "arango://root:hunter2@db:8529/nodius"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.RequireLLM(); err != nil {
		t.Errorf("RequireLLM: %v", err)
	}
	if cfg.KeyHint() != "DEEPSEEK_API_KEY" {
		t.Errorf("KeyHint %q", cfg.KeyHint())
	}
	// A bare --base-url (custom provider) has no default model: say so before calling.
	custom, err := Load(LoadOptions{Flags: map[string]string{"base-url": "http://127.0.0.1:1/v1"}, Getenv: env(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := custom.RequireLLM(); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("RequireLLM without model: %v", err)
	}
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), cfg.LogValue().String()} {
		if strings.Contains(s, secret) || strings.Contains(s, "hunter2") {
			t.Errorf("secret leaked: %s", s)
		}
	}
	if !strings.Contains(cfg.String(), "api_key=set (DEEPSEEK_API_KEY)") {
		t.Errorf("String: %s", cfg.String())
	}
	_, err = Load(LoadOptions{Flags: map[string]string{"provider": "nope", "api-key": secret}, Getenv: env(dir, nil)})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks or missing: %v", err)
	}
}

// usage is the token counts a priced call reports.
type usage struct{ PromptTokens, CompletionTokens, CachedTokens int }

func TestPricingCost(t *testing.T) {
	t.Parallel()
	ds := Builtin()["deepseek"].Pricing
	tests := []struct {
		name string
		p    Pricing
		u    usage
		want float64
	}{
		{"no cache", ds, usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}, 0.28 + 0.42},
		{"cached priced apart", ds, usage{PromptTokens: 1_000_000, CachedTokens: 500_000}, 0.14 + 0.014},
		{"cached without cache price", Pricing{InputPerMillion: 1, OutputPerMillion: 2}, usage{PromptTokens: 1000, CachedTokens: 1000}, 0.001},
		{"free local", Pricing{}, usage{PromptTokens: 5000, CompletionTokens: 5000}, 0},
		{"cached above prompt clamps", ds, usage{PromptTokens: 100, CachedTokens: 1000}, 100 * 0.028 / 1e6},
	}
	for _, tt := range tests {
		if got := tt.p.Cost(tt.u.PromptTokens, tt.u.CachedTokens, tt.u.CompletionTokens); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env                map[string]string
		db, state, cfgPath string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.local/share/nodius-ai/threads.db", "/h/.local/state/nodius-ai", "/h/.config/nodius-ai/config.toml"},
		{map[string]string{"HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c"}, "/d/nodius-ai/threads.db", "/s/nodius-ai", "/c/nodius-ai/config.toml"},
		{map[string]string{"HOME": "/h", "XDG_DATA_HOME": "relative"}, "/h/.local/share/nodius-ai/threads.db", "/h/.local/state/nodius-ai", "/h/.config/nodius-ai/config.toml"},
	}
	for _, tt := range tests {
		g := func(k string) string { return tt.env[k] }
		if got := DefaultDBPath(g); got != tt.db {
			t.Errorf("db %q want %q", got, tt.db)
		}
		if got := StateDir(g); got != tt.state {
			t.Errorf("state %q want %q", got, tt.state)
		}
		if got := DefaultConfigPath(g); got != tt.cfgPath {
			t.Errorf("config %q want %q", got, tt.cfgPath)
		}
	}
}

// TestLoadArangoIgnoreServer: arango_ignore_server from the file, overridden by
// NODIUS_AI_ARANGO_IGNORE_SERVER, with where it came from.
func TestLoadArangoIgnoreServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, env  string
		want       bool
		wantOrigin string
	}{
		{"", "", false, ""},
		{"arango_ignore_server = true\n", "", true, OriginFile},
		{"arango_ignore_server = true\n", "0", false, "NODIUS_AI_ARANGO_IGNORE_SERVER"},
		{"", "1", true, "NODIUS_AI_ARANGO_IGNORE_SERVER"},
	}
	for i, tt := range tests {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{ConfigPath: path, Getenv: env(dir, map[string]string{"NODIUS_AI_ARANGO_IGNORE_SERVER": tt.env})})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ArangoIgnoreServer != tt.want || cfg.Origins["arango-ignore-server"] != tt.wantOrigin {
			t.Errorf("%d: %v from %q, want %v from %q", i, cfg.ArangoIgnoreServer, cfg.Origins["arango-ignore-server"], tt.want, tt.wantOrigin)
		}
	}
}
