package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// newUndoCmd builds undo: reverse the last applied change of a thread.
func newUndoCmd(f *Factory) *cobra.Command {
	var dryRun, force bool
	cmd := &cobra.Command{
		Use:   "undo THREAD [--dry-run] [--force] [--source S]",
		Short: "Reverse the last applied change of a thread that is not yet undone",
		Long: `Reverse the last change of a thread that was approved and applied, and is not yet
undone; run it again to walk back further. The change is reversed exactly (created
nodes and edges removed, changed fields and positions put back, deleted nodes and
their edges restored), on the thread's own data source unless --source is given,
once, and all of it or nothing on a graph file.

If the graph changed since (a node edited, a created node given new edges), undo
refuses and says what changed; --force reverses only what still matches and lists
what it left. --dry-run shows what would be reverted and changes nothing. The
assistant is told of the undo on the thread's next question.

An undo interrupted before it was recorded (killed) is finished and reported by the
next undo (or dry run) of the thread, which then stops there: it never walks back one
change further than asked.

Exit 0 when reversed, 2 when nothing is left to undo, 1 when it cannot be applied.`,
		Args:    cobra.ExactArgs(1),
		Example: "  nodius-ai undo ai_k3m9x2q7 --dry-run\n  nodius-ai undo ai_k3m9x2q7",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if err := refuseServerUndo(ctx, f, args[0]); err != nil {
				return err
			}
			f.localAgent()
			if serverAgent(cfg) != "" {
				return usageError("undo works on this terminal's threads: run it without --agent server:URL")
			}
			id, err := f.adoptThreadSource(ctx, args[0], true)
			if err != nil {
				return err
			}
			rt, err := f.Runtime(ctx)
			if err != nil {
				return err
			}
			u, ok := rt.Runner.(interface {
				Undo(context.Context, agent.UndoRequest) (agent.UndoResult, error)
			})
			if !ok {
				return usageError("undo works on this terminal's threads: run it without --agent server:URL")
			}
			res, err := u.Undo(ctx, agent.UndoRequest{ThreadID: id, DryRun: dryRun, Force: force})
			if res.ProposalID != "" {
				printUndo(f.IO.Out, res, err == nil)
			}
			if err != nil {
				return err
			}
			if !dryRun && isDemo(cfg.Source) {
				fmt.Fprintln(f.IO.ErrOut, "Note: "+demoNote+".")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be reverted; change nothing")
	cmd.Flags().BoolVar(&force, "force", false, "when the graph changed since, reverse only what still matches and list what is left")
	return cmd
}

// printUndo says what an undo reverses (or reversed, or would).
func printUndo(w io.Writer, res agent.UndoResult, ok bool) {
	s := termtext.Reveal // decided on: direction controls shown, not hidden
	applied := ""
	if !res.AppliedAt.IsZero() {
		applied = " (applied " + res.AppliedAt.Local().Format(time.DateTime) + ")"
	}
	fmt.Fprintf(w, "Undo in thread %s: %s%s\n", s(res.ThreadID), s(res.Change), applied)
	verb := "Reverted"
	if res.DryRun || !ok {
		verb = "Would revert"
	}
	if len(res.Reversed) > 0 {
		fmt.Fprintf(w, "%s:\n", verb)
		for _, r := range res.Reversed {
			fmt.Fprintf(w, "  - %s\n", s(r))
		}
	}
	if len(res.Already) > 0 {
		fmt.Fprintln(w, "Already as before:")
		for _, r := range res.Already {
			fmt.Fprintf(w, "  - %s\n", s(r))
		}
	}
	if len(res.Left) > 0 {
		fmt.Fprintln(w, "Left as it is (the graph changed since):")
		for _, r := range res.Left {
			fmt.Fprintf(w, "  - %s\n", s(r))
		}
	}
	switch {
	case !ok:
	case res.Finished:
		fmt.Fprintf(w, "Undone at %s: this finishes an undo that was interrupted before it was recorded; nothing more was undone (run undo again to walk back further).\n",
			res.UndoneAt.Local().Format(time.DateTime))
	case res.DryRun:
		fmt.Fprintln(w, "Dry run: nothing was changed.")
	default:
		fmt.Fprintf(w, "Undone at %s.\n", res.UndoneAt.Local().Format(time.DateTime))
	}
}

// Undo undoes a local thread's last applied change with the in-process agent; a copy
// of a server thread is refused, as for a decision.
func (l localOnly) Undo(ctx context.Context, req agent.UndoRequest) (agent.UndoResult, error) {
	if err := l.check(ctx, req.ThreadID); err != nil {
		return agent.UndoResult{ThreadID: req.ThreadID}, err
	}
	a, ok := l.runner.(*agent.Agent)
	if !ok {
		return agent.UndoResult{ThreadID: req.ThreadID}, usageError("undo works on this terminal's threads only")
	}
	return a.Undo(ctx, req)
}

// refuseServerUndo refuses, in words, to undo a graph the server's assistant created
// (home mode's create_graph, approved here): the server's POST /api/graph/delete
// removes a graph with all its nodes and edges whatever they are, and from here
// nothing tells whether the graph was opened or edited since (the server saves
// open graphs from memory every 30 s, and an editor's copy would outlive the
// deletion). So it is left to the person, in Nodius. Any other change of a thread
// of the server's assistant is refused too; nil for this terminal's own threads:
// undo goes on.
func refuseServerUndo(ctx context.Context, f *Factory, arg string) error {
	store, err := f.Store(ctx)
	if err != nil {
		return nil // undo says it in its own words
	}
	id, err := threadsResolve(ctx, store, arg)
	if err != nil {
		return nil
	}
	// Only a thread of the server's assistant: a graph a local source made is
	// undone by the source (it checks the graph is as made).
	rem, remote, err := store.RemoteOf(ctx, id)
	if err != nil || !remote {
		return nil
	}
	// Any other change of such a thread is not undone here either. Said here, in
	// undo's words: the refusal further on (localOnly) tells to pass --agent
	// server:URL, which undo refuses in turn.
	other := &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
		"thread %s is the server's assistant's (%s): undo reverses this terminal's own changes only — undo the assistant's in the Nodius web client",
		termtext.Strip(id), termtext.Strip(rem.Server))}
	u, err := store.LastUndoable(ctx, id)
	if err != nil || u == nil || u.Action.Type != datasource.CreateGraphAction {
		return other
	}
	p, err := store.Proposal(ctx, id, u.ProposalID)
	if err != nil || p.Result == nil || p.Result.Graph == nil || p.Result.Graph.Key == "" {
		return other
	}
	key := p.Result.Graph.Key
	what, list := "graph", "Workflows"
	if c := u.Action.CreateGraph; c != nil && c.Type == "htmlClass" {
		what, list = "HTML class", "HTML classes"
	}
	name := termtext.Strip(key)
	if c := u.Action.CreateGraph; c != nil && strings.TrimSpace(c.Name) != "" {
		name = fmt.Sprintf("%q", termtext.Strip(c.Name))
	}
	server := rem.Server
	return &ExitError{Code: ExitRuntime, Err: fmt.Errorf(
		"undo cannot delete the %s %s (key %s) that the assistant of %s created: the server's delete removes a graph and everything in it, and nothing here tells whether it was opened or edited since — if you no longer want it, delete it in the Nodius web client (home page, %s, the ⋮ menu of %s, Delete)",
		what, name, termtext.Strip(key), server, list, name)}
}
