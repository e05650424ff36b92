package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Defaults of the settings, used when no flag, variable or config file sets them.
const (
	DefaultSource        = "demo"
	DefaultAgent         = "local"
	DefaultRole          = "editor"
	DefaultWorkspace     = "default"
	DefaultMaxToolRounds = 5
	DefaultCacheTTL      = 2 * time.Minute
	DefaultGraphLockWait = 10 * time.Second
	// CustomProvider names the provider behind a bare --base-url.
	CustomProvider = "custom"
)

// Roles a user may have; a viewer is offered no write tools.
var validRoles = []string{"viewer", "editor", "admin"}

// fileProvider is a [providers.NAME] table. Embeddings is a pointer so that a file can
// turn a built-in provider's embeddings off.
type fileProvider struct {
	Type           ProviderType `toml:"type"`
	BaseURL        string       `toml:"base_url"`
	DefaultModel   string       `toml:"default_model"`
	APIKeyEnv      string       `toml:"api_key_env"`
	Embeddings     *bool        `toml:"embeddings"`
	EmbeddingModel string       `toml:"embedding_model"`
	Pricing        Pricing      `toml:"pricing"`
	ContextWindow  int          `toml:"context_window"`
}

// fileConfig is the TOML file. Pointers tell "not set" from a zero value.
type fileConfig struct {
	Provider           string                  `toml:"provider"`
	Model              string                  `toml:"model"`
	BaseURL            string                  `toml:"base_url"`
	APIKey             string                  `toml:"api_key"`
	EmbeddingModel     string                  `toml:"embedding_model"`
	EmbeddingBaseURL   string                  `toml:"embedding_base_url"`
	Agent              string                  `toml:"agent"`
	Source             string                  `toml:"source"`
	Fallback           string                  `toml:"fallback"`
	Token              string                  `toml:"token"`
	WSURL              string                  `toml:"ws_url"`
	Workspace          string                  `toml:"workspace"`
	DB                 string                  `toml:"db"`
	Sync               string                  `toml:"sync"`
	Role               string                  `toml:"role"`
	Debug              *bool                   `toml:"debug"`
	ArangoIgnoreServer *bool                   `toml:"arango_ignore_server"`
	MaxToolRounds      *int                    `toml:"max_tool_rounds"`
	CacheTTL           any                     `toml:"cache_ttl"`       // "2m" or seconds
	GraphLockWait      any                     `toml:"graph_lock_wait"` // "10s" or seconds
	Policy             map[string]string       `toml:"policy"`
	Limits             Limits                  `toml:"limits"`
	Retrieval          fileRetrieval           `toml:"retrieval"`
	Providers          map[string]fileProvider `toml:"providers"`
}

// fileRetrieval is the [retrieval] table.
type fileRetrieval struct {
	Expand string `toml:"expand"` // "off" (default) or "llm"
}

// configError is the one way this package fails: exit code 2, one clear sentence.
func configError(err error, format string, args ...any) *fault.Error {
	return &fault.Error{Code: fault.Config, Message: fmt.Sprintf(format, args...), Err: err}
}

// Load resolves the configuration: flags > environment > config file > defaults.
// A missing provider is not an error here (inspect and threads work offline); the
// commands that talk to a model call RequireLLM.
func Load(opts LoadOptions) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	flags := opts.Flags
	if flags == nil {
		flags = map[string]string{}
	}
	path := opts.ConfigPath
	if path == "" {
		path = flags["config"]
	}
	fc, file, unknown, err := readFile(path, getenv)
	if err != nil {
		return nil, err
	}

	cfg := &Config{File: file, Unknown: unknown, Origins: map[string]string{}}
	// pick returns the first non-empty value of flag, env, file, default, and notes
	// in cfg.Origins which one it was (for the config command).
	pick := func(flag, env, fileVal, def string) string {
		name := flag
		if name == "" {
			name = env
		}
		if v, ok := flags[flag]; ok && v != "" {
			cfg.Origins[name] = "--" + flag
			return v
		}
		if env != "" {
			if v := getenv(env); v != "" {
				cfg.Origins[name] = env
				return v
			}
		}
		if fileVal != "" {
			cfg.Origins[name] = OriginFile
			return fileVal
		}
		if def != "" {
			cfg.Origins[name] = OriginDefault
		}
		return def
	}

	// Registry: built-ins, then the file's additions and overrides.
	cfg.Providers = Builtin()
	var extra []string
	for name, fp := range fc.Providers {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" || name == CustomProvider {
			return nil, configError(nil, "%s: [providers.%s] is not a valid provider name", file, name)
		}
		if fp.Type != "" && fp.Type != OpenAICompatible && fp.Type != Anthropic {
			return nil, configError(nil, "%s: [providers.%s] type %q is not one of %q or %q", file, name, fp.Type, OpenAICompatible, Anthropic)
		}
		e, known := cfg.Providers[name]
		if !known {
			if fp.BaseURL == "" {
				return nil, configError(nil, "%s: [providers.%s] needs a base_url", file, name)
			}
			e.Type = OpenAICompatible
			extra = append(extra, name)
		}
		e = e.merge(ProviderEntry{Type: fp.Type, BaseURL: fp.BaseURL, DefaultModel: fp.DefaultModel, APIKeyEnv: fp.APIKeyEnv,
			EmbeddingModel: fp.EmbeddingModel, Pricing: fp.Pricing, ContextWindow: fp.ContextWindow})
		if fp.Embeddings != nil {
			e.Embeddings = *fp.Embeddings
		}
		cfg.Providers[name] = e
	}
	sort.Strings(extra)
	for name, e := range cfg.Providers {
		e.Name = name
		cfg.Providers[name] = e
	}
	order := append(slices.Clone(builtinOrder), extra...)

	if err := resolveLLM(cfg, flags, getenv, fc, order); err != nil {
		return nil, err
	}
	resolveEmbeddings(cfg, pick, getenv, fc, order)

	if err := resolveServers(cfg, pick, fc, opts.Login, ownModel(flags, getenv, fc)); err != nil {
		return nil, err
	}
	cfg.Fallback = pick("fallback", "NODIUS_AI_FALLBACK", fc.Fallback, "")
	cfg.Token = pick("token", "NODIUS_AI_TOKEN", fc.Token, "")
	cfg.WSURL = pick("ws-url", "NODIUS_AI_WS_URL", fc.WSURL, "")
	cfg.Workspace = pick("workspace", "NODIUS_AI_WORKSPACE", fc.Workspace, DefaultWorkspace)
	cfg.DB = pick("db", "NODIUS_AI_DB", fc.DB, "")
	if cfg.DB == "" {
		cfg.DB = DefaultDBPath(getenv)
	}
	cfg.DB = expandHome(cfg.DB, getenv)
	cfg.Sync = pick("sync", "NODIUS_AI_SYNC", fc.Sync, "")
	cfg.Role = strings.ToLower(pick("role", "NODIUS_AI_ROLE", fc.Role, DefaultRole))
	if !slices.Contains(validRoles, cfg.Role) {
		return nil, configError(nil, "role %q is not one of viewer, editor, admin", cfg.Role)
	}

	debug := fc.Debug != nil && *fc.Debug
	if v := getenv("NODIUS_AI_DEBUG"); v != "" {
		debug = truthy(v)
	}
	if v, ok := flags["debug"]; ok {
		debug = truthy(v)
	}
	cfg.Debug = debug
	cfg.ArangoIgnoreServer = fc.ArangoIgnoreServer != nil && *fc.ArangoIgnoreServer
	switch v := getenv("NODIUS_AI_ARANGO_IGNORE_SERVER"); {
	case v != "":
		cfg.ArangoIgnoreServer = truthy(v)
		cfg.Origins["arango-ignore-server"] = "NODIUS_AI_ARANGO_IGNORE_SERVER"
	case fc.ArangoIgnoreServer != nil:
		cfg.Origins["arango-ignore-server"] = OriginFile
	}
	switch {
	case flags["debug"] != "":
		cfg.Origins["debug"] = "--debug"
	case getenv("NODIUS_AI_DEBUG") != "":
		cfg.Origins["debug"] = "NODIUS_AI_DEBUG"
	case fc.Debug != nil:
		cfg.Origins["debug"] = OriginFile
	}

	cfg.MaxToolRounds = DefaultMaxToolRounds
	if fc.MaxToolRounds != nil {
		if *fc.MaxToolRounds < 1 {
			return nil, configError(nil, "%s: max_tool_rounds must be at least 1, not %d", file, *fc.MaxToolRounds)
		}
		cfg.MaxToolRounds = *fc.MaxToolRounds
		cfg.Origins["max_tool_rounds"] = OriginFile
	}
	cfg.CacheTTL, err = cacheTTL(fc.CacheTTL, file)
	if err != nil {
		return nil, err
	}
	cfg.GraphLockWait = DefaultGraphLockWait
	if fc.GraphLockWait != nil {
		if cfg.GraphLockWait, err = duration("graph_lock_wait", fc.GraphLockWait, file); err != nil {
			return nil, err
		}
		cfg.Origins["graph_lock_wait"] = OriginFile
	}

	cfg.Policy = make(map[datasource.ActionType]Policy, len(datasource.ActionTypes))
	for _, t := range datasource.ActionTypes {
		cfg.Policy[t] = PolicyAsk
	}
	for k, v := range fc.Policy {
		t := datasource.ActionType(k)
		if !slices.Contains(datasource.ActionTypes, t) {
			names := make([]string, len(datasource.ActionTypes))
			for i, a := range datasource.ActionTypes {
				names[i] = string(a)
			}
			return nil, configError(nil, "%s: [policy] %q is not an action type (known: %s)", file, k, strings.Join(names, ", "))
		}
		p := Policy(strings.ToLower(v))
		if p != PolicyAsk && p != PolicyAuto && p != PolicyDeny {
			return nil, configError(nil, "%s: [policy] %s = %q must be \"ask\", \"auto\" or \"deny\"", file, k, v)
		}
		cfg.Policy[t] = p
	}

	switch v := strings.ToLower(strings.TrimSpace(fc.Retrieval.Expand)); v {
	case "", ExpandOff:
		cfg.RetrievalExpand = ExpandOff
	case ExpandLLM:
		cfg.RetrievalExpand = ExpandLLM
		cfg.Origins["retrieval.expand"] = OriginFile
	default:
		return nil, configError(nil, "%s: [retrieval] expand = %q is not one of %q or %q", file, fc.Retrieval.Expand, ExpandOff, ExpandLLM)
	}

	if err := checkLimits(fc.Limits, file); err != nil {
		return nil, err
	}
	cfg.Limits = fc.Limits.WithDefaults()
	return cfg, nil
}

// resolveServers picks the agent and the source. A login's default server (login,
// a host key) comes below the config file: when nothing names an agent or a source,
//
//   - the source is the server (its graphs are the ones --graph names);
//   - the agent is the server's own assistant (it holds the model and its key),
//     unless nodius-ai's own model was chosen — own, the setting that chose it
//     ("--model", "NODIUS_AI_PROVIDER", the config file): then the local agent
//     answers, on the server's graphs. A provider's key in the environment
//     (DEEPSEEK_API_KEY, …) is no such choice: other tools use those variables too.
//
// A source named at a higher layer (even the login's server: `--source server:URL`
// keeps nodius-ai's agent, reading from the server) leaves the agent local; an agent
// named as a server makes that server the default source, as before.
func resolveServers(cfg *Config, pick func(flag, env, fileVal, def string) string, fc fileConfig, login, own string) error {
	cfg.Login, cfg.OwnModel = login, own
	cfg.Agent = strings.TrimSpace(pick("agent", "NODIUS_AI_AGENT", fc.Agent, ""))
	source := pick("source", "NODIUS_AI_SOURCE", fc.Source, "")
	loginSpec := ""
	if login != "" {
		loginSpec = "server:" + login
	}
	if cfg.Agent == "" {
		switch {
		case loginSpec != "" && own == "" && source == "":
			cfg.Agent = loginSpec
			cfg.Origins["agent"] = OriginLogin
		case loginSpec != "" && own != "" && source == "":
			cfg.Agent = DefaultAgent
			cfg.Origins["agent"] = OriginDefault + " (" + own + " chose nodius-ai's own model)"
		default:
			cfg.Agent = DefaultAgent
			cfg.Origins["agent"] = OriginDefault
		}
	}
	if cfg.Agent != DefaultAgent && (!strings.HasPrefix(cfg.Agent, "server:") || strings.TrimPrefix(cfg.Agent, "server:") == "") {
		return configError(nil, "agent %q is not local or server:URL — use --agent local, or --agent server:https://your-nodius-server", RedactURL(cfg.Agent))
	}
	cfg.Source = source
	switch {
	case source != "":
	case strings.HasPrefix(cfg.Agent, "server:"):
		// The server's assistant reads graphs on the server: by default, so does
		// this client (to preview the changes it proposes).
		cfg.Source = cfg.Agent
		cfg.Origins["source"] = "the agent (" + cfg.Origins["agent"] + ")"
		if cfg.Origins["agent"] == OriginLogin {
			cfg.Origins["source"] = OriginLogin
		}
	case loginSpec != "":
		cfg.Source = loginSpec
		cfg.Origins["source"] = OriginLogin
	default:
		cfg.Source = DefaultSource
		cfg.Origins["source"] = OriginDefault
	}
	return nil
}

// ownModel names the setting that chose nodius-ai's own model (provider, base URL,
// model or API key, as a flag, a NODIUS_AI_ variable or in the config file), or "".
func ownModel(flags map[string]string, getenv func(string) string, fc fileConfig) string {
	for _, s := range []struct{ flag, env, file string }{
		{"provider", "NODIUS_AI_PROVIDER", fc.Provider},
		{"base-url", "NODIUS_AI_BASE_URL", fc.BaseURL},
		{"model", "NODIUS_AI_MODEL", fc.Model},
		{"api-key", "NODIUS_AI_API_KEY", fc.APIKey},
	} {
		switch {
		case strings.TrimSpace(flags[s.flag]) != "":
			return "--" + s.flag
		case strings.TrimSpace(getenv(s.env)) != "":
			return s.env
		case strings.TrimSpace(s.file) != "":
			return OriginFile
		}
	}
	return ""
}

// resolveLLM picks the provider, model, base URL and key. A base URL set at a higher
// layer than any provider name means a custom OpenAI-compatible server (so that
// `--base-url http://localhost:8080/v1` is never sent a DeepSeek key from the file).
func resolveLLM(cfg *Config, flags map[string]string, getenv func(string) string, fc fileConfig, order []string) error {
	type layered struct {
		val   string
		layer int // 3 flag, 2 env, 1 file, 0 unset
		from  string
	}
	get := func(flag, env, fileVal string) layered {
		if v := strings.TrimSpace(flags[flag]); v != "" {
			return layered{v, 3, "--" + flag}
		}
		if v := strings.TrimSpace(getenv(env)); v != "" {
			return layered{v, 2, env}
		}
		if v := strings.TrimSpace(fileVal); v != "" {
			return layered{v, 1, OriginFile}
		}
		return layered{}
	}
	prov := get("provider", "NODIUS_AI_PROVIDER", fc.Provider)
	base := get("base-url", "NODIUS_AI_BASE_URL", fc.BaseURL)
	model := get("model", "NODIUS_AI_MODEL", fc.Model)
	key := get("api-key", "NODIUS_AI_API_KEY", fc.APIKey)

	name := strings.ToLower(prov.val)
	switch {
	case base.layer > prov.layer:
		name = CustomProvider
	case name == "":
		for _, n := range order {
			e := cfg.Providers[n]
			if e.APIKeyEnv != "" && getenv(e.APIKeyEnv) != "" && (n != "openai-mini") {
				name = n
				break
			}
		}
		if name == "" && key.val != "" {
			// A key with no provider: the detection order's first provider that takes keys.
			name = order[0]
		}
	}
	if name == "" {
		return nil // nothing configured: RequireLLM explains what to set
	}

	var entry ProviderEntry
	if name == CustomProvider {
		entry = ProviderEntry{Name: CustomProvider, Type: OpenAICompatible, BaseURL: base.val}
	} else {
		e, ok := cfg.Providers[name]
		if !ok {
			return configError(nil, "unknown provider %q (known: %s; or pass --base-url for an OpenAI-compatible server)", prov.val, strings.Join(order, ", "))
		}
		entry = e
	}
	cfg.Provider = name
	cfg.Entry = entry
	cfg.BaseURL = entry.BaseURL
	cfg.Origins["provider"] = prov.from
	if prov.from == "" {
		cfg.Origins["provider"] = "detected"
		if entry.APIKeyEnv != "" && getenv(entry.APIKeyEnv) != "" {
			cfg.Origins["provider"] = "detected from " + entry.APIKeyEnv
		}
		if name == CustomProvider {
			cfg.Origins["provider"] = base.from
		}
	}
	cfg.Origins["base-url"] = "the provider registry"
	if base.val != "" {
		cfg.BaseURL = base.val
		cfg.Origins["base-url"] = base.from
	}
	cfg.Model = entry.DefaultModel
	cfg.Origins["model"] = "the provider's default"
	if model.val != "" {
		cfg.Model = model.val
		cfg.Origins["model"] = model.from
	}
	// An explicit key set at a lower layer than the provider name (a file's api_key
	// under --provider openai) belonged to another provider: the provider's own
	// variable wins over it.
	envKey := ""
	if entry.APIKeyEnv != "" {
		envKey = getenv(entry.APIKeyEnv)
	}
	switch {
	case key.val != "" && (key.layer >= prov.layer || envKey == ""):
		cfg.APIKey, cfg.APIKeySource = key.val, key.from
	case envKey != "":
		cfg.APIKey, cfg.APIKeySource = envKey, entry.APIKeyEnv
	}
	cfg.Origins["api-key"] = cfg.APIKeySource
	if cfg.BaseURL != "" && !strings.Contains(cfg.BaseURL, "://") {
		return configError(nil, "base URL %q must start with http:// or https://", RedactURL(cfg.BaseURL))
	}
	return nil
}

// resolveEmbeddings picks the embedding endpoint: explicit settings first, then the
// chat provider when it has embeddings, else the first registry provider with
// embeddings whose key is set (DeepSeek has none: OpenAI's key then serves, as the Nodius server does).
func resolveEmbeddings(cfg *Config, pick func(flag, env, fileVal, def string) string, getenv func(string) string, fc fileConfig, order []string) {
	model := pick("embedding-model", "NODIUS_AI_EMBEDDING_MODEL", fc.EmbeddingModel, "")
	base := pick("", "NODIUS_AI_EMBEDDING_BASE_URL", fc.EmbeddingBaseURL, "")
	switch {
	case base != "":
		cfg.EmbeddingProvider = cfg.Provider
		if cfg.EmbeddingProvider == "" {
			cfg.EmbeddingProvider = CustomProvider
		}
		cfg.EmbeddingBaseURL, cfg.EmbeddingAPIKey = base, cfg.APIKey
		if model == "" {
			model = cfg.Entry.EmbeddingModel
		}
	case cfg.Provider != "" && cfg.Entry.Embeddings:
		cfg.EmbeddingProvider = cfg.Provider
		cfg.EmbeddingBaseURL, cfg.EmbeddingAPIKey = cfg.BaseURL, cfg.APIKey
		if model == "" {
			model = cfg.Entry.EmbeddingModel
		}
	case cfg.Provider == CustomProvider && model != "":
		// A custom server with an explicit embedding model: assume it serves /embeddings.
		cfg.EmbeddingProvider = CustomProvider
		cfg.EmbeddingBaseURL, cfg.EmbeddingAPIKey = cfg.BaseURL, cfg.APIKey
	default:
		for _, n := range order {
			e := cfg.Providers[n]
			if e.Embeddings && e.APIKeyEnv != "" && getenv(e.APIKeyEnv) != "" {
				cfg.EmbeddingProvider = n
				cfg.EmbeddingBaseURL, cfg.EmbeddingAPIKey = e.BaseURL, getenv(e.APIKeyEnv)
				if model == "" {
					model = e.EmbeddingModel
				}
				break
			}
		}
	}
	if cfg.EmbeddingBaseURL == "" {
		cfg.EmbeddingProvider = ""
	}
	cfg.EmbeddingModel = model
}

// MaxFileBytes bounds the config file: a few kilobytes is a large one, and a bound
// keeps a wrong --config (a disk image, a log) from being read whole into memory.
const MaxFileBytes = 1 << 20

// readFile decodes the TOML file. An explicit path must exist; the default path may
// not. Only a regular file of at most MaxFileBytes is read: a device (/dev/zero)
// would never end and a FIFO would block until someone writes to it. Settings the
// file has but nodius-ai does not know are returned, not refused (see
// Config.Unknown).
func readFile(path string, getenv func(string) string) (fileConfig, string, []UnknownSetting, error) {
	var fc fileConfig
	explicit := path != ""
	if !explicit {
		path = DefaultConfigPath(getenv)
		if path == "" {
			return fc, "", nil, nil
		}
	}
	path = expandHome(path, getenv)
	data, err := readRegular(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return fc, "", nil, nil
		}
		var ce *fault.Error
		if errors.As(err, &ce) {
			return fc, "", nil, ce
		}
		return fc, "", nil, configError(err, "cannot read config file %s: %v", path, unwrapPathError(err))
	}
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fc, "", nil, configError(err, "config file %s line %d: %s", path, pe.Position.Line, pe.Message)
		}
		return fc, "", nil, configError(err, "config file %s: %v", path, err)
	}
	var unknown []UnknownSetting
	seen := map[string]bool{}
	for _, k := range md.Undecoded() {
		// The keys of an unknown table are not listed apart from it: "[limit]" is
		// one mistake, not one per line under it.
		if len(k) > 1 && seen[k[:len(k)-1].String()] {
			seen[k.String()] = true
			continue
		}
		seen[k.String()] = true
		unknown = append(unknown, UnknownSetting{Key: k.String(), Suggestion: suggestKey(k)})
	}
	return fc, path, unknown, nil
}

// readRegular reads path when it is a regular file of at most MaxFileBytes. The
// type is checked before opening (opening a FIFO blocks) and again on the open
// file (the path may have been replaced in between).
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regularConfig(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularConfig(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, configError(nil, "config file %s is larger than %d KiB: is it the right file?", path, MaxFileBytes>>10)
	}
	return data, nil
}

// regularConfig refuses a config path that is not a regular file, naming what it is.
func regularConfig(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		if fi.Size() > MaxFileBytes {
			return configError(nil, "config file %s is larger than %d KiB: is it the right file?", path, MaxFileBytes>>10)
		}
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return configError(nil, "config file %s is %s, not a regular file: give the path of a TOML file", path, what)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// cacheTTL reads cache_ttl: a duration string ("2m", "0s") or a number of seconds,
// finite and between 0 (no cache) and maxDuration.
func cacheTTL(v any, file string) (time.Duration, error) {
	if v == nil {
		return DefaultCacheTTL, nil
	}
	return duration("cache_ttl", v, file)
}

// maxDuration bounds every duration setting: a year is more than any wait needs, and
// far from the overflow of time.Duration.
const maxDuration = 365 * 24 * time.Hour

// duration reads a duration setting given as a string ("2m", "30s") or a number of
// seconds. NaN, infinities, negative values and values past a year are refused with a
// sentence saying what is allowed: they would silently turn a cache or a wait off.
func duration(key string, v any, file string) (time.Duration, error) {
	bad := func(err error, got any) (time.Duration, error) {
		return 0, configError(err, "%s: %s = %v is not allowed: give a duration from 0 to 8760h, like \"2m\" or \"30s\", or a number of seconds", file, key, got)
	}
	switch t := v.(type) {
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(t))
		if err != nil || d < 0 || d > maxDuration {
			return bad(err, strconv.Quote(t))
		}
		return d, nil
	case int64:
		if t < 0 || t > int64(maxDuration/time.Second) {
			return bad(nil, t)
		}
		return time.Duration(t) * time.Second, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > maxDuration.Seconds() {
			return bad(nil, t)
		}
		return time.Duration(t * float64(time.Second)), nil
	}
	return bad(nil, fmt.Sprintf("%v", v))
}

// maxLimit bounds every count and size limit (1 TiB, a trillion tokens): far above
// anything a machine can hold, low enough that a limit plus the slack added to it
// (WithDefaults, the stream line) or a sum of them never overflows into a negative
// number, which would turn a bound into none.
const maxLimit int64 = 1 << 40

// maxCostLimit bounds max_cost_usd for the same reason (a billion dollars).
const maxCostLimit = 1e9

// checkLimits refuses negative, non-finite and overflowing limits, naming the key.
func checkLimits(l Limits, file string) error {
	if math.IsNaN(l.MaxCostUSD) || math.IsInf(l.MaxCostUSD, 0) || l.MaxCostUSD < 0 || l.MaxCostUSD > maxCostLimit {
		return configError(nil, "%s: [limits] max_cost_usd = %v is not allowed: give a number of dollars from 0 to %g (0 means no limit)", file, l.MaxCostUSD, float64(maxCostLimit))
	}
	for _, f := range []struct {
		key string
		v   int
	}{
		{"max_tokens_per_call", l.MaxTokensPerCall}, {"max_tokens_per_thread", l.MaxTokensPerThread},
		{"max_answer_bytes", l.MaxAnswerBytes}, {"max_reasoning_bytes", l.MaxReasoningBytes},
		{"max_tool_calls", l.MaxToolCalls}, {"max_tool_args_bytes", l.MaxToolArgsBytes},
		{"max_tool_result_bytes", l.MaxToolResultBytes}, {"max_request_bytes", l.MaxRequestBytes},
		{"max_snapshot_bytes", l.MaxSnapshotBytes}, {"max_arango_result_bytes", l.MaxArangoResultBytes},
		{"max_stream_line_bytes", l.MaxStreamLineBytes},
	} {
		if f.v < 0 || int64(f.v) > maxLimit {
			return configError(nil, "%s: [limits] %s = %d is not allowed: give a number ≥ 0 and at most %d (0 means the default)", file, f.key, f.v, maxLimit)
		}
	}
	return nil
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return strings.EqualFold(strings.TrimSpace(v), "yes") || strings.EqualFold(strings.TrimSpace(v), "on")
	}
	return b
}

// expandHome turns a leading ~/ into $HOME/.
func expandHome(p string, getenv func(string) string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h := home(getenv); h != "" {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}
