package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/credstore"
	"github.com/nodius/nodius-ai/rag"
)

// Factory hands commands what they need, built on first use and shared within one
// run: the resolved configuration, the data source, the thread store.
type Factory struct {
	IO    *IOStreams
	flags *pflag.FlagSet

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error

	srcOnce sync.Once
	src     datasource.Source
	srcErr  error
	// quietSearchHint keeps searchHint silent (arango setup, which is the remedy).
	quietSearchHint bool

	rt     *Runtime
	logger *slog.Logger

	expOnce  sync.Once
	expander rag.Expander

	closers []io.Closer

	// unknownNote names the config file's unknown settings until they are said
	// (by Close, or by the command that refuses them or shows them).
	unknownNote string
	// loginNote says why the default server of auth login is not used (the login
	// file cannot be read) until it is said; quietLogin is set by the auth
	// commands, which report that file's errors themselves.
	loginNote  string
	quietLogin bool
	// tokenNote says that --token, typed on this command line, goes to no server
	// (see unusedTokenFlag), until it is said.
	tokenNote string
}

// NewFactory returns a Factory over the given streams.
func NewFactory(ios *IOStreams) *Factory { return &Factory{IO: ios} }

// Config resolves flags > environment > config file > the default server of
// auth login, once. Settings of the file that nodius-ai does not know are refused
// by the commands that run the assistant (Runtime); the others go on without them
// and say so once, as a warning when the command ends (Close).
func (f *Factory) Config() (*config.Config, error) {
	f.cfgOnce.Do(func() {
		login, err := f.loginDefault()
		if err != nil {
			f.loginNote = fmt.Sprintf("%v — the default server of auth login is not used", err)
		}
		f.cfg, f.cfgErr = f.loadConfig(login)
		if f.cfgErr == nil {
			f.unknownNote = f.cfg.UnknownText()
			f.tokenNote = unusedTokenFlag(f.cfg)
		}
	})
	return f.cfg, f.cfgErr
}

// loadConfig resolves the configuration with login as the default server of auth
// login (auth login and auth switch resolve it again with the new default, to say
// what it does).
func (f *Factory) loadConfig(login string) (*config.Config, error) {
	opts := config.LoadOptions{Getenv: f.IO.Getenv, Flags: map[string]string{}, Login: login}
	if f.flags != nil {
		opts.Flags = setFlags(f.flags)
		opts.ConfigPath = opts.Flags["config"]
	}
	cfg, err := config.Load(opts)
	if err != nil {
		return nil, err
	}
	cfg.Stored = f.storedToken
	return cfg, nil
}

// unusedTokenFlag is the warning for a --token typed while the default server of
// auth login is in use and no server is named: the flag is sent nowhere (the
// default server gets its own stored token), which a user who typed it would not
// expect without being told. "" otherwise.
func unusedTokenFlag(cfg *config.Config) string {
	if cfg.Token == "" || cfg.Origins["token"] != "--token" || cfg.ConfiguredServer() != "" {
		return ""
	}
	if _, origin := cfg.Server(); origin != config.OriginLogin {
		return ""
	}
	note := tokenNote(cfg)
	return "a" + note[1:] + " To send it there, name it: --agent server:" + cfg.Login
}

// loginDefault is the default server auth login recorded ("" when none). A login
// file that cannot be read is an error to say, not to stop on: commands that name
// no server then use the demo graph, and the user must learn why (a silent
// fallback would look like the login was lost).
func (f *Factory) loginDefault() (string, error) {
	s, err := f.credStore()
	if err != nil {
		return "", nil // no home: nothing was stored
	}
	return s.Default()
}

// Source opens the configured data source, once.
func (f *Factory) Source(ctx context.Context) (datasource.Source, error) {
	f.srcOnce.Do(func() {
		cfg, err := f.Config()
		if err != nil {
			f.srcErr = err
			return
		}
		f.src, f.srcErr = openSource(ctx, cfg, f.IO)
		if c, ok := f.src.(io.Closer); ok {
			f.closers = append(f.closers, c)
		}
		if f.srcErr == nil {
			f.searchHint(ctx, f.src)
		}
	})
	return f.src, f.srcErr
}

// Close releases what the factory opened (database, connections), and warns of
// the config file's unknown settings when nothing said them yet.
func (f *Factory) Close() {
	if f.unknownNote != "" {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s; ignored\n", f.unknownNote)
		f.unknownNote = ""
	}
	if f.tokenNote != "" && !f.quietLogin {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", f.tokenNote)
		f.tokenNote = ""
	}
	if f.loginNote != "" && !f.quietLogin {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", f.loginNote)
		f.loginNote = ""
	}
	for i := len(f.closers) - 1; i >= 0; i-- {
		_ = f.closers[i].Close()
	}
	f.closers = nil
}

// localAgent makes nodius-ai's own agent the one in effect when the server's
// assistant is only the default of auth login, for a command that works on this
// terminal's threads (undo): a default is no choice. An agent the user named stays.
func (f *Factory) localAgent() {
	if cfg, err := f.Config(); err == nil && cfg.Origins["agent"] == config.OriginLogin {
		cfg.Agent = config.DefaultAgent
		cfg.Origins["agent"] = config.OriginDefault
	}
}

// remoteAgent makes the default server's assistant the agent for a command on the
// server's own threads (--remote) when the local agent is in effect only because
// nodius-ai's own model was chosen: the threads are the default server's all the
// same. So when the source is the default server named again (--source
// server:URL of that very server): the user is logged in to it, and its threads
// are the ones meant. An agent the user named (--agent local) stays.
func (f *Factory) remoteAgent() {
	cfg, err := f.Config()
	if err != nil || cfg.Login == "" || serverAgent(cfg) != "" || !strings.HasPrefix(cfg.Origins["agent"], config.OriginDefault) {
		return
	}
	switch {
	case cfg.Origins["source"] == config.OriginLogin:
		cfg.Agent = "server:" + cfg.Login
	case sameHost(cfg.Source, cfg.Login):
		cfg.Agent = cfg.Source
	default:
		return
	}
	cfg.Origins["agent"] = config.OriginLogin
}

// sameHost reports whether source is a server: source on the server of host key
// login (scheme, host and port).
func sameHost(source, login string) bool {
	u, ok := strings.CutPrefix(source, "server:")
	if !ok {
		return false
	}
	h, err := credstore.Host(u)
	return err == nil && h == login
}

// noRemoteServer is the usage error of a --remote command with no server.
func noRemoteServer() error {
	return usageError("--remote needs a server: log in with 'nodius-ai auth login --server URL', or pass --agent server:URL (or set NODIUS_AI_AGENT)")
}

// keepLocalThread makes nodius-ai's own agent the one in effect for a thread it
// answered (arg: an id or a unique prefix; a thread of the server's assistant, or
// none found, changes nothing) when the server's assistant is only the default of
// auth login: a thread continues with the runtime it started with, so a command
// printed before the login (approve THREAD) still runs as printed.
func (f *Factory) keepLocalThread(ctx context.Context, arg string) {
	cfg, err := f.Config()
	if err != nil || arg == "" || cfg.Origins["agent"] != config.OriginLogin {
		return
	}
	store, err := f.Store(ctx)
	if err != nil {
		return
	}
	id, err := threadsResolve(ctx, store, arg)
	if err != nil {
		return
	}
	if _, remote, err := store.RemoteOf(ctx, id); err == nil && !remote {
		f.localAgent()
	}
}
