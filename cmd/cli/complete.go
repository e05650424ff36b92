package cli

import (
	"context"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/threads"
)

// threadArgCommands take thread ids as positional arguments (all of them, or only
// the first), for shell completion.
var threadArgCommands = map[string]bool{ // command path → every argument is an id
	"nodius-ai threads show": false, "nodius-ai threads export": false, "nodius-ai threads rename": false,
	"nodius-ai threads archive": false, "nodius-ai threads delete": true,
	"nodius-ai approve": false, "nodius-ai reject": false, "nodius-ai undo": false,
}

// formatWords are the values --format may take somewhere; each command's own are
// read from its flag's help text, in the order it gives them.
var formatWords = []string{"text", "markdown", "json", "table", "toon"}

// addCompletions teaches the shell completion (nodius-ai completion bash|zsh|fish)
// the values of every flag that has a fixed set, the graph keys of the current
// source, and thread ids with their titles.
func addCompletions(f *Factory, root *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	graphs := func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeGraphs(cmd.Context(), f), cobra.ShellCompDirectiveNoFileComp
	}
	threadIDs := func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeThreads(cmd.Context(), f, prefix), cobra.ShellCompDirectiveNoFileComp
	}
	providers := []string{}
	for name := range config.Builtin() {
		providers = append(providers, name)
	}
	sort.Strings(providers)

	reg := func(c *cobra.Command, fs *pflag.FlagSet) {
		fs.VisitAll(func(fl *pflag.Flag) {
			var fn cobra.CompletionFunc
			switch fl.Name {
			case "graph":
				fn = graphs
			case "thread":
				fn = threadIDs
			case "format":
				var vals []string
				type at struct {
					i int
					w string
				}
				var found []at
				for _, w := range formatWords {
					if i := strings.Index(fl.Usage, w); i >= 0 {
						found = append(found, at{i, w})
					}
				}
				sort.Slice(found, func(a, b int) bool { return found[a].i < found[b].i })
				for _, x := range found {
					vals = append(vals, x.w)
				}
				fn = fixed(vals...)
			case "on-proposal":
				fn = fixed("pending", "reject", "approve")
			case "role":
				fn = fixed("viewer", "editor", "admin")
			case "provider":
				fn = fixed(providers...)
			case "source":
				fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return []cobra.Completion{"demo", "file:", "arango://", "arangos://", "server:"}, cobra.ShellCompDirectiveNoSpace
				}
			case "delimiter":
				fn = fixed(",", "tab", "pipe")
			case "agent":
				fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return []cobra.Completion{"local", "server:"}, cobra.ShellCompDirectiveNoSpace
				}
			default:
				return
			}
			_ = c.RegisterFlagCompletionFunc(fl.Name, fn) // already registered: keep the first
		})
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		reg(c, c.LocalNonPersistentFlags())
		if c == root {
			reg(c, c.PersistentFlags())
		}
		if all, ok := threadArgCommands[c.CommandPath()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) > 0 && !all {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return threadIDs(cmd, args, prefix)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeGraphs lists the graph keys of the configured source.
func completeGraphs(ctx context.Context, f *Factory) []cobra.Completion {
	src, err := f.Source(ctx)
	if err != nil {
		return nil
	}
	return graphKeys(ctx, src)
}

// completeThreads lists thread ids starting with prefix, most recent first, each with
// its title as the description ("id\ttitle").
func completeThreads(ctx context.Context, f *Factory, prefix string) []cobra.Completion {
	s, err := f.Store(ctx)
	if err != nil {
		return nil
	}
	ts, err := s.List(ctx, threads.ListOptions{All: true, Limit: 500})
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, t := range ts {
		if !strings.HasPrefix(t.ID, prefix) && !strings.HasPrefix(strings.TrimPrefix(t.ID, "ai_"), prefix) {
			continue
		}
		title := termtext.OneLine(t.Title)
		if title == "" {
			title = "(untitled)"
		}
		out = append(out, cobra.CompletionWithDesc(t.ID, t.GraphKey+": "+threadCell(title, 60)))
	}
	return out
}
