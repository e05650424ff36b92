// Package config resolves nodius-ai's settings with the precedence flags > environment >
// config file ($XDG_CONFIG_HOME/nodius-ai/config.toml or --config), and holds the
// provider registry (base URLs, default models, key variables, pricing, context windows).
// It knows nothing of the TUI, the agent or the thread store.
package config

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"

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

// Limits stop a run with budget_exceeded. The token and cost budgets are off at zero.
// The size bounds below keep a hostile or broken model or server from exhausting
// memory, disk and time: unset (zero) means the default (DefaultLimits); each names
// its config key in the error a run stops with.
type Limits struct {
	MaxTokensPerCall   int     `toml:"max_tokens_per_call"`
	MaxTokensPerThread int     `toml:"max_tokens_per_thread"`
	MaxCostUSD         float64 `toml:"max_cost_usd"` // per thread

	MaxAnswerBytes       int `toml:"max_answer_bytes"`        // answer text of one response
	MaxReasoningBytes    int `toml:"max_reasoning_bytes"`     // reasoning of one response
	MaxToolCalls         int `toml:"max_tool_calls"`          // tool calls in one response
	MaxToolArgsBytes     int `toml:"max_tool_args_bytes"`     // arguments of one tool call
	MaxToolResultBytes   int `toml:"max_tool_result_bytes"`   // one tool result sent back to the model
	MaxRequestBytes      int `toml:"max_request_bytes"`       // one request to the model, all messages and tools
	MaxSnapshotBytes     int `toml:"max_snapshot_bytes"`      // a server: source's graph snapshot
	MaxArangoResultBytes int `toml:"max_arango_result_bytes"` // one ArangoDB response
	// MaxStreamLineBytes bounds one line (one SSE event) of a provider's stream, which
	// may carry a whole answer, reasoning or call's arguments from a server that does not
	// stream them; unset, it is the largest of those three limits plus 64 KiB for the
	// JSON around the payload.
	MaxStreamLineBytes int `toml:"max_stream_line_bytes"`
}

// StreamLineSlack is what one stream line may hold beyond its payload when
// max_stream_line_bytes is unset: the JSON around it.
const StreamLineSlack = 64 << 10

// DefaultLimits are the size bounds used when the config leaves them unset: far above
// what an honest model or graph sends (an answer of a few pages is ~20 KB), low
// enough that the process stays well under 200 MB whatever arrives.
var DefaultLimits = Limits{
	MaxAnswerBytes:       1 << 20,
	MaxReasoningBytes:    2 << 20,
	MaxToolCalls:         32,
	MaxToolArgsBytes:     128 << 10,
	MaxToolResultBytes:   1 << 20,
	MaxRequestBytes:      4 << 20,
	MaxSnapshotBytes:     32 << 20,
	MaxArangoResultBytes: 32 << 20,
}

// WithDefaults returns l with every unset size bound at its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.MaxAnswerBytes, d.MaxAnswerBytes}, {&l.MaxReasoningBytes, d.MaxReasoningBytes},
		{&l.MaxToolCalls, d.MaxToolCalls}, {&l.MaxToolArgsBytes, d.MaxToolArgsBytes},
		{&l.MaxToolResultBytes, d.MaxToolResultBytes}, {&l.MaxRequestBytes, d.MaxRequestBytes},
		{&l.MaxSnapshotBytes, d.MaxSnapshotBytes}, {&l.MaxArangoResultBytes, d.MaxArangoResultBytes},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if l.MaxStreamLineBytes <= 0 {
		l.MaxStreamLineBytes = max(l.MaxAnswerBytes, l.MaxReasoningBytes, l.MaxToolArgsBytes) + StreamLineSlack
	}
	return l
}

// Config is the resolved configuration of one command run.
type Config struct {
	File string // the config file read, "" when none
	// Unknown are the settings of the file that nodius-ai does not know (ignored;
	// see RequireKnown).
	Unknown []UnknownSetting

	// LLM. APIKey is never printed, logged or stored.
	Provider         string // registry name, or "custom" for a bare --base-url
	Entry            ProviderEntry
	Model            string
	BaseURL          string
	APIKey           string
	APIKeySource     string // where the key came from, for messages: "DEEPSEEK_API_KEY", "--api-key", ...
	EmbeddingModel   string
	EmbeddingBaseURL string
	// EmbeddingProvider is the registry name serving embeddings ("" when none): the
	// chat provider when it has embeddings, else the first one whose key is set.
	EmbeddingProvider string
	EmbeddingAPIKey   string // never printed, logged or stored

	// Agent is which runtime answers: "local" (the in-process agent) or
	// "server:URL" (the Nodius server's own assistant over its WebSocket).
	Agent string
	// Login is the default server `auth login` recorded (its host key, such as
	// "https://nodius.example:443"; "" when none). It is the lowest layer of the
	// agent and the source: see Load.
	Login string
	// OwnModel names the setting that chose nodius-ai's own model ("--model",
	// "NODIUS_AI_PROVIDER", OriginFile; "" when none did): with a login's default
	// server, it makes the local agent answer rather than the server's.
	OwnModel string

	// Data.
	Source   string // "demo", "file:PATH", "arango://...", "server:URL"
	Fallback string // arango URL behind a server: source
	Token    string // bearer JWT for server:
	// WSURL overrides where the Nodius server's WebSocket is (--ws-url,
	// NODIUS_AI_WS_URL, ws_url); empty: derived from the server URL.
	WSURL     string
	Workspace string // default "default"
	DB        string // threads database path
	Sync      string // arango URL for thread sync, "" when off

	// Stored is where auth login's tokens are looked up by host (nil: none); see
	// ServerToken, the only way a token for a server is chosen.
	Stored StoredToken

	Role          string // viewer | editor | admin
	MaxToolRounds int
	CacheTTL      time.Duration
	// GraphLockWait is how long applying a change to a file: graph, or to the
	// collections of an arango:// graph, waits for another writer before it gives up
	// (the proposal stays pending).
	GraphLockWait time.Duration
	Policy        map[datasource.ActionType]Policy
	Limits        Limits
	Debug         bool
	// ArangoIgnoreServer writes to an arango:// source even while a Nodius server
	// runs on the database (arango_ignore_server, NODIUS_AI_ARANGO_IGNORE_SERVER):
	// only for a graph nobody edits in the web editor.
	ArangoIgnoreServer bool
	// RetrievalExpand is how questions are expanded before text search: ExpandOff,
	// or ExpandLLM (one small call to the chat model per new question).
	RetrievalExpand string

	Providers map[string]ProviderEntry // the registry, with the file's additions

	// Origins says where each setting came from, by flag name ("model", "db", ...;
	// an environment-only setting by its variable): "--model", "NODIUS_AI_MODEL",
	// OriginFile, OriginDefault, "detected from DEEPSEEK_API_KEY". A setting left
	// unset has no entry. For the config command.
	Origins map[string]string
}

// Values of retrieval.expand ([retrieval] expand in the config file).
const (
	ExpandOff = "off"
	ExpandLLM = "llm"
)

// Where a setting came from, besides a flag ("--db") or a variable ("NODIUS_AI_DB").
const (
	OriginFile    = "the config file"
	OriginDefault = "default"
	// OriginLogin is a server taken from the default of `auth login`: below the
	// config file, above the built-in defaults.
	OriginLogin = "auth login"
)

// LoadOptions are the inputs of Load. Flags holds only the flags the user set,
// keyed by flag name without dashes ("provider", "base-url", "db", ...).
type LoadOptions struct {
	Flags      map[string]string
	Getenv     func(string) string
	ConfigPath string // --config; "" means the default path (missing file is fine)
	// Login is the default server of `auth login` (a host key; "" when none): used
	// when no flag, variable or file names an agent or a source.
	Login string
}

// RequireLLM says, as a config_error, what to set when no usable provider is
// configured. Load does not fail on this so that offline commands still run.
func (c *Config) RequireLLM() error {
	if c == nil || c.Provider == "" {
		msg := "no LLM provider configured — set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY, " +
			"or pass --base-url for an OpenAI-compatible server (ollama needs no key: --provider ollama)"
		if c != nil && c.Login != "" {
			// Logged in, yet nodius-ai's own agent was left to answer (--source or
			// --agent local named): the server's assistant needs no key here.
			msg += ", or let the assistant of the server you logged in to answer: --agent server:" + c.Login
		}
		return &fault.Error{Code: fault.Config, Message: msg}
	}
	if c.APIKey == "" && c.Entry.APIKeyEnv != "" {
		return &fault.Error{Code: fault.Config, Message: fmt.Sprintf("no API key for %s — set %s or pass --api-key", c.Provider, c.Entry.APIKeyEnv)}
	}
	if c.BaseURL == "" && c.Entry.Type != Anthropic {
		return &fault.Error{Code: fault.Config, Message: fmt.Sprintf("provider %s has no base URL — pass --base-url or set base_url in [providers.%s]", c.Provider, c.Provider)}
	}
	if strings.TrimSpace(c.Model) == "" {
		return &fault.Error{Code: fault.Config, Message: fmt.Sprintf("no model for %s — pass --model or set NODIUS_AI_MODEL", c.Provider)}
	}
	return nil
}

// KeyHint names what the user should set when the provider rejects the key
// ("DEEPSEEK_API_KEY", or "--api-key" when the key came from the flag).
func (c *Config) KeyHint() string {
	switch {
	case c.APIKeySource != "" && c.APIKeySource != "the config file":
		return c.APIKeySource
	case c.Entry.APIKeyEnv != "":
		return c.Entry.APIKeyEnv
	}
	return "NODIUS_AI_API_KEY"
}

// String describes the configuration without secrets (the API key, the token and
// passwords in URLs never appear). fmt's %v and %+v use it too.
func (c *Config) String() string {
	if c == nil {
		return "<nil config>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "provider=%s model=%s base_url=%s api_key=%s", orNone(c.Provider), orNone(c.Model), orNone(RedactURL(c.BaseURL)), keyState(c.APIKey, c.APIKeySource))
	if c.EmbeddingBaseURL != "" {
		fmt.Fprintf(&b, " embedding=%s@%s", orNone(c.EmbeddingModel), RedactURL(c.EmbeddingBaseURL))
	}
	fmt.Fprintf(&b, " source=%s workspace=%s db=%s role=%s max_tool_rounds=%d", RedactURL(c.Source), c.Workspace, c.DB, c.Role, c.MaxToolRounds)
	if c.Sync != "" {
		fmt.Fprintf(&b, " sync=%s", RedactURL(c.Sync))
	}
	if c.Agent != "" && c.Agent != DefaultAgent {
		fmt.Fprintf(&b, " agent=%s", RedactURL(c.Agent))
	}
	if c.Token != "" {
		b.WriteString(" token=set")
	}
	if c.File != "" {
		fmt.Fprintf(&b, " file=%s", c.File)
	}
	return b.String()
}

// GoString keeps %#v from dumping the key.
func (c *Config) GoString() string { return "config.Config{" + c.String() + "}" }

// LogValue keeps slog from dumping the key.
func (c *Config) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("provider", c.Provider), slog.String("model", c.Model),
		slog.String("base_url", RedactURL(c.BaseURL)), slog.String("api_key", keyState(c.APIKey, c.APIKeySource)),
		slog.String("source", RedactURL(c.Source)), slog.String("role", c.Role), slog.String("file", c.File))
}

func keyState(key, from string) string {
	if key == "" {
		return "unset"
	}
	if from != "" {
		return "set (" + from + ")"
	}
	return "set"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// RedactURL hides the password of a USER:PASS@ URL (arango://, server:), for display.
func RedactURL(s string) string { return fault.MaskCredentials(s) }
