package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/expand"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
)

// Runtime is everything a conversation needs, wired from the configuration.
type Runtime struct {
	Config    *config.Config
	Source    datasource.Source
	Store     *threads.Store
	Retriever *rag.Retriever
	Agent     *agent.Agent
	// Runner answers: the local Agent, or the server's assistant (Remote) with
	// --agent server:URL.
	Runner       runner
	Remote       *remote.Runner
	Provider     llm.Provider // nil when no provider is configured
	DefaultGraph string       // the graph to use when --graph is not given ("" if unknown)
	Logger       *slog.Logger
	// Loading passes on what loading a large graph is doing, to the TUI's status
	// bar or a terminal line; nothing is shown until a command sets where.
	Loading *progressRelay
}

// progressRelay passes the retriever's progress reports (rag.Options.Progress) to
// whoever shows them at the time. A nil relay (a remote runtime) ignores all.
type progressRelay struct {
	mu sync.Mutex
	to func(stage string)
}

func (p *progressRelay) report(stage string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	to := p.to
	p.mu.Unlock()
	if to != nil {
		to(stage)
	}
}

// set makes to receive the reports from now on; nil stops them.
func (p *progressRelay) set(to func(stage string)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.to = to
	p.mu.Unlock()
}

// Runtime wires the agent once. A missing provider is not an error here: the agent
// reports it when a question is sent (so the TUI can still open and browse threads).
func (f *Factory) Runtime(ctx context.Context) (*Runtime, error) {
	if f.rt != nil {
		return f.rt, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if err := cfg.RequireKnown(); err != nil {
		f.unknownNote = "" // the error says it
		return nil, err
	}
	if url := serverAgent(cfg); url != "" {
		return f.remoteRuntime(ctx, cfg, url)
	}
	src, err := f.Source(ctx)
	if err != nil {
		return nil, err
	}
	store, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	logger := f.Logger()
	emb, err := f.Embedder()
	if err != nil {
		logger.Warn("embeddings disabled", "error", err.Error())
		emb = nil
	}
	opts := rag.DefaultOptions()
	opts.CacheTTL = cfg.CacheTTL
	opts.Store = f.IndexStore()
	opts.Expander = f.Expander()
	loading := &progressRelay{}
	opts.Progress = loading.report
	retriever := rag.New(src, opts, emb)

	rt := &Runtime{Config: cfg, Source: src, Store: store, Retriever: retriever, Logger: logger,
		DefaultGraph: defaultGraph(ctx, cfg, src), Loading: loading}
	aopts := agent.Options{
		Source: src, Retriever: retriever, Store: store,
		Role: cfg.Role, MaxToolRounds: cfg.MaxToolRounds, Policy: cfg.Policy, Limits: cfg.Limits,
		Pricing: cfg.Entry.Pricing, ContextWindow: cfg.Entry.ContextWindow,
		Workspace: cfg.Workspace, Logger: logger,
		SourceSpec: sourceSpec(cfg.Source), SourceChosen: f.sourceChosen(),
		CommandFlags: f.rerunFlags(),
	}
	if err := cfg.RequireLLM(); err != nil {
		aopts.NoProvider = err
	} else {
		p, err := llm.FromConfig(cfg, nil, f.Logger())
		if err != nil {
			return nil, err
		}
		rt.Provider = p
		aopts.Provider = p
		aopts.Retry = &llm.RetryOptions{}
	}
	rt.Agent = agent.New(aopts)
	rt.Runner = localOnly{runner: rt.Agent, store: store}
	f.rt = rt
	return rt, nil
}

// Embedder returns the configured embedding client, or nil when none is configured.
func (f *Factory) Embedder() (rag.Embedder, error) {
	cfg, err := f.Config()
	if err != nil || cfg.EmbeddingModel == "" {
		return nil, err
	}
	e, err := llm.EmbedderFromConfig(cfg, nil, f.Logger())
	if err != nil || e == nil {
		return nil, err
	}
	return e, nil
}

// Expander returns the query expander retrieval.expand = "llm" asks for, nil when
// expansion is off. Without a usable chat model it says so on stderr and returns
// nil: questions are then searched as asked.
func (f *Factory) Expander() rag.Expander {
	f.expOnce.Do(func() { f.expander = f.newExpander() })
	return f.expander
}

func (f *Factory) newExpander() rag.Expander {
	cfg, err := f.Config()
	if err != nil || cfg.RetrievalExpand != config.ExpandLLM {
		return nil
	}
	warn := func(why string) {
		fmt.Fprintf(f.IO.ErrOut, "warning: retrieval.expand = \"llm\" is set but %s; questions are searched as asked\n", why)
	}
	if err := cfg.RequireLLM(); err != nil {
		warn("no chat model is configured")
		return nil
	}
	p, err := llm.FromConfig(cfg, nil, f.Logger())
	if err != nil {
		warn(err.Error())
		return nil
	}
	dir := ""
	if f.IO.Getenv("NODIUS_AI_INDEX_CACHE") != "off" {
		dir = expand.Dir(f.IO.Getenv)
	}
	x, err := expand.New(expand.Options{Model: p, Dir: dir})
	if err != nil {
		warn(err.Error())
		return nil
	}
	return x
}

// Logger writes structured JSON logs to $XDG_STATE_HOME/nodius-ai/nodius-ai.log, and
// to stderr too with --debug or NODIUS_AI_DEBUG=1. API keys are never logged: the
// config's LogValue redacts them and nothing else holds one.
func (f *Factory) Logger() *slog.Logger {
	if f.logger != nil {
		return f.logger
	}
	cfg, _ := f.Config()
	var ws []io.Writer
	level := slog.LevelInfo
	if dir := config.StateDir(f.IO.Getenv); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err == nil {
			if fh, err := os.OpenFile(filepath.Join(dir, "nodius-ai.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				ws = append(ws, fh)
				f.closers = append(f.closers, fh)
			}
		}
	}
	if cfg != nil && cfg.Debug {
		ws = append(ws, f.IO.ErrOut)
		level = slog.LevelDebug
	}
	if len(ws) == 0 {
		f.logger = slog.New(slog.DiscardHandler)
	} else {
		f.logger = slog.New(slog.NewJSONHandler(io.MultiWriter(ws...), &slog.HandlerOptions{Level: level}))
	}
	return f.logger
}

// defaultGraph is the graph used when --graph is not given: the demo graph with the
// demo source, the only graph of a file source.
func defaultGraph(ctx context.Context, cfg *config.Config, src datasource.Source) string {
	if cfg == nil || cfg.Source == "" || cfg.Source == "demo" {
		return "demo"
	}
	if one, ok := src.(interface{ GraphKey() string }); ok {
		return one.GraphKey()
	}
	if gk, ok := src.(interface{ GraphKeys() []string }); ok {
		if keys := gk.GraphKeys(); len(keys) == 1 {
			return keys[0]
		}
	}
	return ""
}
