// Package config resolves nodius-ai's settings with the precedence flags > environment >
// config file ($XDG_CONFIG_HOME/nodius-ai/config.toml or --config), and holds the
// provider registry (base URLs, default models, key variables, pricing, context windows).
// It knows nothing of the TUI, the agent or the thread store.
package config

import (
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

// ProviderType is how a provider is spoken to.
type ProviderType string

const (
	OpenAICompatible ProviderType = "openai-compatible"
	Anthropic        ProviderType = "anthropic"
)

// Pricing in USD per million tokens. CachedInput prices prompt tokens served from the
// provider's prefix cache.
type Pricing struct {
	InputPerMillion       float64 `toml:"input_per_million"`
	CachedInputPerMillion float64 `toml:"cached_input_per_million"`
	OutputPerMillion      float64 `toml:"output_per_million"`
}

// ProviderEntry is one provider of the registry. Adding a provider is one entry
// (built in, or a [providers.NAME] table in the config file).
type ProviderEntry struct {
	Name           string       `toml:"-"`
	Type           ProviderType `toml:"type"`
	BaseURL        string       `toml:"base_url"`
	DefaultModel   string       `toml:"default_model"`
	APIKeyEnv      string       `toml:"api_key_env"` // empty: no key needed (ollama)
	Embeddings     bool         `toml:"embeddings"`
	EmbeddingModel string       `toml:"embedding_model"`
	Pricing        Pricing      `toml:"pricing"`
	ContextWindow  int          `toml:"context_window"` // tokens
}

// Policy is what happens to a proposed action type: ask a person, apply at once, or
// never offer the tool.
type Policy string

const (
	PolicyAsk  Policy = "ask"
	PolicyAuto Policy = "auto"
	PolicyDeny Policy = "deny"
)

// Limits stop a run with budget_exceeded; zero means no limit.
type Limits struct {
	MaxTokensPerCall   int     `toml:"max_tokens_per_call"`
	MaxTokensPerThread int     `toml:"max_tokens_per_thread"`
	MaxCostUSD         float64 `toml:"max_cost_usd"` // per thread
}

// Config is the resolved configuration of one command run.
type Config struct {
	File string // the config file read, "" when none

	// LLM. APIKey is never printed, logged or stored.
	Provider         string // registry name, or "custom" for a bare --base-url
	Entry            ProviderEntry
	Model            string
	BaseURL          string
	APIKey           string
	APIKeySource     string // where the key came from, for messages: "DEEPSEEK_API_KEY", "--api-key", ...
	EmbeddingModel   string
	EmbeddingBaseURL string

	// Data.
	Source    string // "demo", "file:PATH", "arango://...", "server:URL"
	Fallback  string // arango URL behind a server: source
	Token     string // bearer JWT for server:
	Workspace string // default "default"
	DB        string // threads database path
	Sync      string // arango URL for thread sync, "" when off

	Role          string // viewer | editor | admin
	MaxToolRounds int
	CacheTTL      time.Duration
	Policy        map[datasource.ActionType]Policy
	Limits        Limits
	Debug         bool

	Providers map[string]ProviderEntry // the registry, with the file's additions
}

// LoadOptions are the inputs of Load. Flags holds only the flags the user set,
// keyed by flag name without dashes ("provider", "base-url", "db", ...).
type LoadOptions struct {
	Flags      map[string]string
	Getenv     func(string) string
	ConfigPath string // --config; "" means the default path (missing file is fine)
}
