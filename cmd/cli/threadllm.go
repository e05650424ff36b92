package cli

import (
	"context"
	"net/url"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

// originThreadLLM is where the provider, base URL and model came from when they
// are the thread's (for the config command's kind of message).
const originThreadLLM = "the thread's recorded model"

// llmGiven reports whether the person chose a model endpoint: a provider, base URL
// or model set by a flag, a variable or the config file. A provider found from a
// key in the environment, and the registry's defaults, are no choice.
func llmGiven(cfg *config.Config) bool {
	for _, k := range []string{"provider", "base-url", "model"} {
		o := cfg.Origins[k]
		if strings.HasPrefix(o, "--") || strings.HasPrefix(o, "NODIUS_AI_") || o == config.OriginFile {
			return true
		}
	}
	return false
}

// useThreadLLM makes the endpoint th last ran with the one in effect when the
// person chose none (flags > environment > config file stay first): a thread is
// continued and decided with the model it was asked with, as it is on its source.
// The key still comes from the flags, environment or config file, as it would for
// that endpoint typed as flags. A thread from a document (threads import, threads
// sync --pull) is never given one: its record was written elsewhere. It must run
// before the runtime is built.
func (f *Factory) useThreadLLM(ctx context.Context, th convo.Thread) error {
	cfg, err := f.Config()
	if err != nil || llmGiven(cfg) || th.Provider == "" || th.Provider == convo.ProviderMCP {
		return err
	}
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	rec, err := store.ThreadLLM(ctx, th.ID)
	if err != nil {
		return err
	}
	if rec.Provider == config.CustomProvider && rec.BaseURL == "" {
		return nil // nowhere to go
	}
	if imported, err := store.Imported(ctx, th.ID); err != nil || imported {
		return err
	}
	flags := map[string]string{}
	if f.flags != nil {
		flags = setFlags(f.flags)
	}
	if rec.Provider != config.CustomProvider {
		flags["provider"] = rec.Provider
	}
	if rec.BaseURL != "" && (rec.Provider == config.CustomProvider || rec.BaseURL != cfg.Providers[rec.Provider].BaseURL) {
		flags["base-url"] = rec.BaseURL
	}
	if rec.Model != "" {
		flags["model"] = rec.Model
	}
	nc, err := config.Load(config.LoadOptions{Getenv: f.IO.Getenv, Flags: flags, ConfigPath: flags["config"]})
	if err != nil {
		return nil // a provider this version does not know: the configured one stays
	}
	cfg.Provider, cfg.Entry, cfg.Model, cfg.BaseURL = nc.Provider, nc.Entry, nc.Model, nc.BaseURL
	cfg.APIKey, cfg.APIKeySource = nc.APIKey, nc.APIKeySource
	cfg.EmbeddingModel, cfg.EmbeddingBaseURL = nc.EmbeddingModel, nc.EmbeddingBaseURL
	cfg.EmbeddingProvider, cfg.EmbeddingAPIKey = nc.EmbeddingProvider, nc.EmbeddingAPIKey
	for _, k := range []string{"provider", "base-url", "model"} {
		if _, ok := flags[k]; ok {
			cfg.Origins[k] = originThreadLLM
		}
	}
	cfg.Origins["api-key"] = nc.Origins["api-key"]
	return nil
}

// recordLLM wraps emit so that the thread a run works on records the endpoint it
// runs with (never the key), for the next approve, reject or continued question
// to go on with (see useThreadLLM).
func recordLLM(ctx context.Context, rt *Runtime, emit func(convo.Event)) func(convo.Event) {
	if rt == nil || rt.Remote != nil || rt.Provider == nil || rt.Store == nil || rt.Config == nil {
		return emit
	}
	l := threads.LLM{Provider: rt.Config.Provider, Model: rt.Config.Model, BaseURL: endpointSpec(rt.Config.BaseURL)}
	return func(e convo.Event) {
		if e.Type == convo.EventThread && e.ThreadID != "" {
			// A thread an MCP client drives keeps its client's name; a failure
			// here costs only the memory of the model, never the run.
			if cur, err := rt.Store.ThreadLLM(ctx, e.ThreadID); err == nil && cur.Provider != convo.ProviderMCP && cur != l {
				_ = rt.Store.SetThreadLLM(ctx, e.ThreadID, l)
			}
		}
		emit(e)
	}
}

// endpointSpec is a base URL as a thread may keep it: without user info, query
// parameters that may hold a secret, or a fragment. A URL that does not parse is
// not kept.
func endpointSpec(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	u.User = nil
	return withoutSecretParams(u).String()
}

// credentialFree reports whether a URL carries no user info and no secret query
// parameter: it may then be printed in a command for the person to run.
func credentialFree(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.User != nil {
		return false
	}
	for k := range u.Query() {
		if fault.SecretParam(k) {
			return false
		}
	}
	return true
}

// rerunFlags are the global flags typed on this command line that a command
// printed for the person to run next needs to work the same: the threads
// database, the config file, the endpoint, the workspace, the role and the source.
// Secrets are never printed (--api-key, --token, a URL with a password): they come
// from the environment or the config file, or the person types them again.
func (f *Factory) rerunFlags() string {
	if f.flags == nil {
		return ""
	}
	var b strings.Builder
	for _, name := range []string{"config", "db", "provider", "base-url", "model", "embedding-model", "workspace", "role", "ws-url", "source"} {
		fl := f.flags.Lookup(name)
		if fl == nil || !fl.Changed || fl.Value.String() == "" {
			continue
		}
		v := fl.Value.String()
		switch name {
		case "base-url", "ws-url":
			if !credentialFree(v) {
				continue
			}
		case "source":
			spec := sourceSpec(v) // a file path made absolute
			if !strings.HasPrefix(v, "file:") && spec != v {
				continue // it holds a credential
			}
			v = spec
		}
		b.WriteString(" --" + name + " " + shellQuote(v))
	}
	return b.String()
}
