// Package cli holds nodius-ai's commands. Each command gets a *Factory that resolves
// configuration, the data source, the thread store and the provider lazily, so that
// `version` or `inspect toon` never need an API key or a database.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes, which scripts rely on (docs/reference.md).
const (
	ExitOK          = 0
	ExitRuntime     = 1
	ExitUsage       = 2
	ExitProposal    = 3
	ExitInterrupted = 130
)

// ExitError ends a command with a given exit code. A nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks a bad flag or argument (exit 2).
func usageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// globalFlags are the persistent flags every command shares.
var globalFlags = []struct{ name, usage string }{
	{"config", "config file (default $XDG_CONFIG_HOME/nodius-ai/config.toml)"},
	{"provider", "LLM provider name (deepseek, openai, anthropic, ollama, ...)"},
	{"model", "model name"},
	{"base-url", "base URL of an OpenAI-compatible endpoint"},
	{"api-key", "API key (prefer the provider's environment variable)"},
	{"embedding-model", "embedding model for vector search"},
	{"agent", "which runtime answers: local (default) or server:URL (the Nodius server's own assistant)"},
	{"source", "data source: demo, file:PATH, arango://..., server:URL"},
	{"fallback", "ignored with a server: source, which reads the live graph from the server (kept so existing configurations still load)"},
	{"token", "bearer token (JWT) for a server: source"},
	{"ws-url", "the Nodius server's WebSocket address (default: wss://HOST:PORT/ws for https, ws://HOST:PORT+2000/ for http)"},
	{"workspace", "workspace of the graphs (default \"default\")"},
	{"db", "threads database (default $XDG_DATA_HOME/nodius-ai/threads.db)"},
	{"sync", "arango:// URL to sync threads with"},
	{"role", "viewer, editor or admin (a viewer is offered no write tools)"},
}

// NewRootCmd builds the command tree around one Factory.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "nodius-ai",
		Short: "Ask questions about Nodius workflow graphs from the terminal",
		Long: `nodius-ai is a terminal client for the Nodius AI assistant.

Ask about a graph, watch the answer stream, see which tools the assistant used,
approve or reject the edits it proposes, and look through past conversations.`,
		Example: `  nodius-ai chat --graph demo
  echo "what does fetch-api do?" | nodius-ai ask --graph demo
  cat notes.txt | nodius-ai ask --graph demo "summarise this"
  nodius-ai inspect context --source file:examples/nba.json --graph nba "fetch api"
  nodius-ai config                 # the settings in effect, and where each came from
  source <(nodius-ai completion bash)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: flagError(c, err)}
	})
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().BoolP("version", "v", false, "print the version")
	pf := root.PersistentFlags()
	for _, g := range globalFlags {
		pf.String(g.name, "", g.usage)
	}
	pf.Bool("debug", false, "write debug logs to stderr (or set NODIUS_AI_DEBUG=1)")
	f.flags = pf

	root.AddCommand(
		newVersionCmd(f),
		newInspectCmd(f),
		newAskCmd(f),
		newApproveCmd(f, true),
		newApproveCmd(f, false),
		newUndoCmd(f),
		newChatCmd(f),
		newThreadsCmd(f),
		newEmbedCmd(f),
		newArangoCmd(f),
		newMCPCmd(f),
		newConfigCmd(f),
		newGraphCmd(f),
		newAuthCmd(f),
	)
	sentenceArgs(root)
	addCompletions(f, root)
	wrapHelp(root, helpWidth(f.IO))
	return root
}

// Execute runs the command line and returns the process exit code. Errors are
// printed here, once, as one sentence on stderr.
func Execute(ctx context.Context, io *IOStreams, args []string) int {
	f := NewFactory(io)
	defer f.Close()
	root := NewRootCmd(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return code // the command already said what happened
	}
	err = graphNotFound(ctx, f, err)
	code = exitCode(err)
	fmt.Fprintln(io.ErrOut, "nodius-ai: "+userMessage(err))
	return code
}

// exitCode classifies an error once, at the edge.
func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if ce, ok := fault.As(err); ok {
		switch ce.Code {
		case fault.Config, fault.Decision:
			return ExitUsage
		case fault.Interrupted:
			return ExitInterrupted
		}
		return ExitRuntime
	}
	if isCobraUsage(err) {
		return ExitUsage
	}
	return ExitRuntime
}

// isCobraUsage recognises cobra's own argument errors (unknown command, wrong arg count).
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// setFlags returns the flags the user set, by name (for config.Load).
func setFlags(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	// VisitAll + Changed, not Visit: persistent flags are parsed by the subcommand's
	// merged flag set, which marks the shared *Flag as changed but not this set.
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed {
			m[fl.Name] = fl.Value.String()
		}
	})
	return m
}
