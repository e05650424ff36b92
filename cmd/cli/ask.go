package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// askOptions are the flags shared by ask, approve, reject (and chat without a terminal).
type askOptions struct {
	Graph      string
	Thread     string
	Continue   bool
	Format     string // text | markdown | json
	OnProposal string // pending | reject | approve
	// OnToolLimit is what to do when the assistant stops at its tool-round limit:
	// "" (ask: exit 3), continue (more rounds) or summary (an answer now), for the
	// in-process agent and the server's alike: finishRun reads agent.Result.ToolLimit.
	OnToolLimit string
	Question    string
}

func addOutputFlags(cmd *cobra.Command, o *askOptions) {
	cmd.Flags().StringVar(&o.Format, "format", "text", "output: text (raw answer), markdown (rendered on a terminal) or json (NDJSON events)")
	cmd.Flags().StringVar(&o.OnProposal, "on-proposal", "pending", "when the assistant proposes a graph edit: pending (keep it, exit 3), reject, or approve")
}

func addThreadFlags(cmd *cobra.Command, o *askOptions) {
	cmd.Flags().StringVarP(&o.Graph, "graph", "g", "", "graph key (default: the demo graph with the demo source)")
	cmd.Flags().StringVarP(&o.Thread, "thread", "t", "", "continue this thread (id or unique prefix)")
	cmd.Flags().BoolVarP(&o.Continue, "continue", "c", false, "continue the latest thread of the graph")
}

func (o *askOptions) validate() error {
	switch o.Format {
	case "text", "markdown", "json":
	default:
		return usageError("--format must be text, markdown or json (got %q)", o.Format)
	}
	switch o.OnProposal {
	case "pending", "reject", "approve":
	default:
		return usageError("--on-proposal must be pending, reject or approve (got %q)", o.OnProposal)
	}
	switch o.OnToolLimit {
	case "", "continue", "summary":
	default:
		return usageError("--on-tool-limit must be continue or summary (got %q)", o.OnToolLimit)
	}
	if o.Thread != "" && o.Continue {
		return usageError("--thread and --continue cannot be used together")
	}
	return nil
}

func newAskCmd(f *Factory) *cobra.Command {
	o := &askOptions{}
	cmd := &cobra.Command{
		Use:   "ask --graph KEY [QUESTION...]",
		Short: "Ask one question and print the answer (for scripts and pipes)",
		Long: `Ask one question about a graph and print the answer as it streams.

The question is the arguments followed by standard input when something is piped in
(cat notes.txt | nodius-ai ask "summarise this" sends both). With --format text
only the answer goes to standard output; json prints one event per line. When the
assistant proposes a graph edit, the proposal is kept in the thread and the command
exits 3 (decide it later with 'nodius-ai approve' or 'reject'), unless --on-proposal
says otherwise.`,
		Example: `  nodius-ai ask --graph demo "what does fetch-api do?"
  echo "which node handles errors?" | nodius-ai ask --graph demo --format json
  nodius-ai ask --continue --graph demo "and what comes after it?"
  cat notes.txt | nodius-ai ask --graph demo "summarise this"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			q, err := readQuestion(f.IO, args)
			if err != nil {
				return err
			}
			o.Question = q
			return runAsk(cmd.Context(), f, *o)
		},
	}
	addThreadFlags(cmd, o)
	addOutputFlags(cmd, o)
	cmd.Flags().StringVar(&o.OnToolLimit, "on-tool-limit", "", "when the assistant uses all its tool rounds: continue (more rounds) or summary (answer now); unset, exit 3 and decide with approve/reject")
	return cmd
}

// readQuestion joins the arguments and standard input (when it is not a terminal), as
// mods does: `cat notes.txt | nodius-ai ask "summarise this"` asks "summarise this"
// followed by the notes.
func readQuestion(ios *IOStreams, args []string) (string, error) {
	q := strings.TrimSpace(strings.Join(args, " "))
	if !ios.InTTY && ios.In != nil {
		const limit = 1 << 20
		b, err := io.ReadAll(io.LimitReader(ios.In, limit+1))
		if err != nil {
			return "", fmt.Errorf("reading the question from stdin: %w", err)
		}
		if len(b) > limit {
			return "", usageError("standard input holds more than 1 MiB: pass a shorter text")
		}
		if in := strings.TrimSpace(string(b)); in != "" {
			if q != "" {
				q += "\n\n"
			}
			q += in
		}
	}
	if q == "" {
		return "", usageError("no question: pass it as arguments or on standard input, as in: nodius-ai ask \"what does fetch-api do?\"")
	}
	return q, nil
}

// runAsk sends one question and prints the run (also used by chat without a terminal).
func runAsk(ctx context.Context, f *Factory, o askOptions) error {
	if err := f.adoptSourceFor(ctx, o); err != nil {
		return err
	}
	rt, err := f.Runtime(ctx)
	if err != nil {
		return err
	}
	graph, threadID, err := resolveThread(ctx, f, rt, o)
	if err != nil {
		return err
	}
	if graph != "" && graph != tools.HomeGraphKey && threadID == "" && rt.Remote == nil {
		// (The server's assistant checks the graph itself: "Graph not found".)
		if _, err := rt.Source.Graph(ctx, graph); err != nil {
			return err // a missing graph becomes a usage error listing the source's graphs
		}
	}
	out := newPrinter(f.IO, o.Format)
	out.names, out.graphFlag, out.agentFlag = tagNames(ctx, rt.Source, graph), graphFlag(graph), agentFlag(rt)+f.rerunFlags()
	res, err := rt.Runner.Send(ctx, agent.SendRequest{GraphKey: graph, ThreadID: threadID, Text: o.Question}, recordLLM(ctx, rt, out.Emit))
	return finishRun(ctx, f, rt, out, o, res, err)
}

// adoptSourceFor makes a continued thread's recorded source the one in effect (see
// adoptThreadSource) before the runtime is built.
func (f *Factory) adoptSourceFor(ctx context.Context, o askOptions) error {
	switch {
	case o.Thread != "":
		f.keepLocalThread(ctx, o.Thread)
	case o.Continue && o.Graph != "":
		if store, err := f.Store(ctx); err == nil {
			if th, err := store.Latest(ctx, o.Graph); err == nil {
				f.keepLocalThread(ctx, th.ID)
			}
		}
	}
	if cfg, err := f.Config(); err != nil || (cfg.Agent != "" && cfg.Agent != config.DefaultAgent) {
		return err // the server's assistant keeps its threads' sources
	}
	switch {
	case o.Thread != "":
		_, err := f.adoptThreadSource(ctx, o.Thread, false)
		return err
	case o.Continue && o.Graph != "":
		store, err := f.Store(ctx)
		if err != nil {
			return err
		}
		th, err := store.Latest(ctx, o.Graph)
		if err != nil {
			return err
		}
		_, err = f.adoptThreadSource(ctx, th.ID, false)
		return err
	}
	return nil
}

// resolveThread picks the graph and the thread to continue (--thread, --continue).
func resolveThread(ctx context.Context, f *Factory, rt *Runtime, o askOptions) (graph, threadID string, err error) {
	graph = o.Graph
	switch {
	case o.Thread != "" && rt.Remote != nil:
		threadID, err = resolveRemoteThread(ctx, rt, o.Thread, graph, true)
		if err != nil {
			return "", "", err
		}
	case o.Thread != "":
		threadID, err = threadsResolve(ctx, rt.Store, o.Thread)
		if err != nil {
			return "", "", err
		}
	case o.Continue:
		if graph == "" {
			graph = rt.DefaultGraph
		}
		if graph == "" {
			graph, _, _ = homeGraph(ctx, rt) // the latest home mode thread
		}
		th, err := rt.Store.Latest(ctx, graph)
		if err != nil {
			return "", "", err
		}
		threadID = th.ID
	}
	if graph == "" && threadID == "" {
		graph = rt.DefaultGraph
		if graph == "" {
			home, ok, err := homeGraph(ctx, rt)
			if err != nil {
				return "", "", err
			}
			if !ok {
				return "", "", usageError("no graph given: pass --graph KEY")
			}
			graph = home
		}
	}
	return graph, threadID, nil
}

// finishRun applies --on-proposal, flushes the printer and maps the outcome to an
// exit code: 0 answered, 3 proposal pending, 130 interrupted, 1/2 errors.
func finishRun(ctx context.Context, f *Factory, rt *Runtime, out *printer, o askOptions, res agent.Result, err error) error {
	for i := 0; err == nil && (res.Proposal != nil && o.OnProposal != "pending" && o.OnProposal != "" || res.ToolLimit != nil && o.OnToolLimit != ""); i++ {
		if i >= 20 {
			err = &fault.Error{Code: fault.Internal, Message: "stopped after 20 proposals or tool limits in one run"}
			break
		}
		var d convo.Decision
		if res.ToolLimit != nil {
			d = convo.Decision{Approved: o.OnToolLimit == "continue"}
			out.ToolLimitChoice(o.OnToolLimit)
		} else {
			d = convo.Decision{Approved: o.OnProposal == "approve", ProposalID: res.Proposal.ID, Digest: res.Proposal.Digest}
			out.Decided(res.Proposal, d)
		}
		var next agent.Result
		next, err = rt.Runner.Resume(ctx, res.ThreadID, d, recordLLM(ctx, rt, out.Emit))
		if next.Decided == nil {
			next.Decided = res.Decided
		}
		res = next
	}
	out.Close()
	syncAfterRun(ctx, f, res.ThreadID)
	notApplied := ""
	if p := res.Decided; p != nil && p.Decision == convo.Approved {
		switch p.Outcome {
		case convo.NotApplied:
			notApplied = p.ApplyError
		case convo.Applied:
			if g := p.Result; g != nil && g.Graph != nil {
				fmt.Fprintln(f.IO.ErrOut, "nodius-ai: "+termtext.OneLine(g.Graph.Sentence())+".")
			} else if isDemo(rt.Config.Source) {
				fmt.Fprintln(f.IO.ErrOut, "nodius-ai: applied to the embedded demo graph: "+demoNote+".")
			} else if g != nil && g.Note != "" && p.Action.Type == "configure_node_type" {
				// A node type on a Nodius server: what changed, or the new type's key.
				fmt.Fprintln(f.IO.ErrOut, "nodius-ai: "+termtext.OneLine(g.Note)+".")
			}
		}
	}
	if err != nil && applied(res.Decided) && res.ThreadID != "" && !isInterrupt(ctx, err) {
		// The change is in the graph: that is the outcome, and a script must not
		// read it as a failure. Only the answer after it is missing.
		fmt.Fprintf(f.IO.ErrOut, "nodius-ai: applied %s; the assistant could not go on after it (%s) — once that is fixed, let it go on with: nodius-ai ask --thread %s%s %s\n",
			termtext.OneLine(datasource.Describe(res.Decided.Action)), termtext.OneLine(userMessage(err)), res.ThreadID, out.agentFlag, shellQuote("go on"))
		return nil
	}
	if err != nil {
		if ce, ok := fault.As(err); ok && ce.Code == fault.Interrupted && res.ThreadID != "" {
			fmt.Fprintln(f.IO.ErrOut, "nodius-ai: interrupted — the partial answer is kept in thread "+res.ThreadID)
			return &ExitError{Code: ExitInterrupted}
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			fmt.Fprintln(f.IO.ErrOut, "nodius-ai: interrupted")
			return &ExitError{Code: ExitInterrupted}
		}
		return err
	}
	if res.ToolLimit != nil {
		fmt.Fprintln(f.IO.ErrOut, toolLimitText(res.ThreadID+out.agentFlag, *res.ToolLimit))
		return &ExitError{Code: ExitProposal}
	}
	if res.Proposal != nil {
		out.Pending(res.Proposal, res.ThreadID)
		if notApplied == "" {
			return &ExitError{Code: ExitProposal}
		}
	}
	if notApplied != "" {
		return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("approved but not applied: %s", termtext.Strip(notApplied))}
	}
	return nil
}

// applied reports whether p was approved and its change is in the graph.
func applied(p *convo.Proposal) bool {
	return p != nil && p.Decision == convo.Approved && p.State() == "applied"
}

// isInterrupt reports whether err is the person stopping the run (Ctrl-C).
func isInterrupt(ctx context.Context, err error) bool {
	if ce, ok := fault.As(err); ok && ce.Code == fault.Interrupted {
		return true
	}
	return errors.Is(ctx.Err(), context.Canceled)
}

// newApproveCmd builds approve (approve=true) or reject.
func newApproveCmd(f *Factory, approve bool) *cobra.Command {
	o := &askOptions{}
	var feedback, proposal, digest string
	var onServer bool
	verb, short := "reject", "Reject the pending proposal of a thread and continue the conversation"
	if approve {
		verb, short = "approve", "Approve (apply) the pending proposal of a thread and continue the conversation"
	}
	cmd := &cobra.Command{
		Use:   verb + " THREAD [--proposal ID] [--source S]",
		Short: short,
		Long: short + `.

The decision is made on the thread's own data source (the one it was asked on),
unless --source is given. The proposal decided is printed first; --proposal pins the
one you saw: if another is pending now, nothing is decided; --digest (printed with
it) pins the action you saw: if the action behind that id is another now, nothing is
decided. Nothing is decided when no model is configured to go on after it (exit 2).
A change that was applied is never reported as a failure: if the assistant cannot
go on after it, the command says so and exits 0, and approving again a proposal
already approved and applied says so and exits 0. Exit 2 when nothing is pending,
when it was decided otherwise, or when the source in effect differs from the
thread's and --source was not given; exit 3 when another proposal of the same
response waits after this one.`,
		Args:    cobra.ExactArgs(1),
		Example: fmt.Sprintf("  nodius-ai %s ai_k3m9x2q7 --feedback \"use the sheet data-processing\"", verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			var id string
			if onServer {
				f.remoteAgent()
			} else {
				f.keepLocalThread(ctx, args[0])
			}
			if !onServer && (cfg.Agent == "" || cfg.Agent == config.DefaultAgent) {
				// A local thread is decided on the source it was asked on.
				if id, err = f.adoptThreadSource(ctx, args[0], true); err != nil {
					return err
				}
			}
			rt, err := f.Runtime(ctx)
			if err != nil {
				return err
			}
			if onServer && rt.Remote == nil {
				return noRemoteServer()
			}
			if rt.Remote != nil {
				id, err = resolveRemoteThread(ctx, rt, args[0], o.Graph, onServer)
				if err != nil {
					return err
				}
			}
			out := newPrinter(f.IO, o.Format)
			out.agentFlag = agentFlag(rt) + f.rerunFlags()
			if digest != "" && proposal == "" {
				return usageError("--digest pins the action of one proposal: pass its --proposal too")
			}
			if rt.Remote == nil && rt.Store != nil {
				if done, err := decidedBefore(ctx, f, rt, id, approve, proposal, digest); done || err != nil {
					return err
				}
			}
			d := convo.Decision{Approved: approve, Feedback: feedback, ProposalID: proposal, Digest: digest}
			if rt.Store != nil {
				if p, err := rt.Store.PendingProposal(ctx, id); err == nil && p != nil && (proposal == "" || proposal == p.ID) {
					out.Deciding(p, verb)
					d.ProposalID = p.ID
					if d.Digest == "" {
						d.Digest = p.Digest // what was just printed
					}
				}
			}
			res, err := rt.Runner.Resume(ctx, id, d, recordLLM(ctx, rt, out.Emit))
			return finishRun(ctx, f, rt, out, *o, res, err)
		},
	}
	cmd.Flags().StringVar(&feedback, "feedback", "", "a word for the assistant with your decision")
	cmd.Flags().StringVar(&proposal, "proposal", "", "decide this proposal only (its id, as printed when it was proposed)")
	cmd.Flags().StringVar(&digest, "digest", "", "decide it only if its action is still the one shown (the digest printed with it)")
	cmd.Flags().BoolVar(&onServer, "remote", false, "THREAD is the server's id of any of its threads (with --agent server:URL), e.g. one started in the web client")
	cmd.Flags().StringVarP(&o.Graph, "graph", "g", "", "with --remote: the graph of a thread this terminal has not seen")
	addOutputFlags(cmd, o)
	return cmd
}

// decidedBefore answers, before anything is decided, the two cases where deciding
// must not start: a re-run of an approval that landed (said, exit 0: the command
// did what it was run for), and a decision the assistant could not go on after —
// no model is configured — which would leave a change applied and the command
// failed (refused, exit 2, nothing decided). done is true when the command ends here.
func decidedBefore(ctx context.Context, f *Factory, rt *Runtime, id string, approve bool, proposal, digest string) (done bool, err error) {
	if approve && proposal != "" {
		if p, err := rt.Store.Proposal(ctx, id, proposal); err == nil && applied(&p) && (digest == "" || digest == p.Digest) {
			when := ""
			if !p.DecidedAt.IsZero() {
				when = " at " + p.DecidedAt.Local().Format("2006-01-02 15:04:05")
			}
			fmt.Fprintf(f.IO.ErrOut, "nodius-ai: proposal %s in thread %s was already approved and applied%s (%s); nothing was done again.\n",
				termtext.OneLine(p.ID), id, when, termtext.OneLine(datasource.Describe(p.Action)))
			return true, nil
		}
	}
	if rt.Provider != nil {
		return false, nil
	}
	th, err := rt.Store.Thread(ctx, id)
	if err != nil || th.Provider == convo.ProviderMCP {
		return false, err // an MCP client's thread goes on without a model of ours
	}
	msg := "no LLM provider configured"
	if ce, ok := fault.As(rt.Config.RequireLLM()); ok {
		msg = ce.Message
	}
	return true, &fault.Error{Code: fault.Config, Message: msg + "; nothing was decided, since the assistant could not go on after it: fix that, then run the same command again"}
}

// toolLimitText says, in words, that a run stopped at the tool-round limit and how
// to choose. threadID is followed by the flags the commands need to run as printed.
func toolLimitText(threadID string, tl convo.ToolLimit) string {
	more := ""
	if tl.MaxExtended > 0 {
		more = fmt.Sprintf(" (up to %d rounds in all)", tl.MaxExtended)
	}
	return fmt.Sprintf("nodius-ai: the assistant used its %d tool rounds and waits for your choice: 'nodius-ai approve %s' lets it continue%s, 'nodius-ai reject %s' asks it to answer now with what it found (or run ask with --on-tool-limit continue|summary)",
		tl.RoundsUsed, threadID, more, threadID)
}

// agentFlag is the --agent part of a decide command printed for the person: a
// thread of the server's assistant is decided there ("" for the local agent).
func agentFlag(rt *Runtime) string {
	if u := serverAgent(rt.Config); rt.Remote != nil && u != "" {
		return " --agent " + shellQuote("server:"+fault.MaskCredentials(u))
	}
	return ""
}

// graphFlag is the --graph part of a command printed for the person ("" without a
// graph: the command then names none).
func graphFlag(graph string) string {
	if graph == "" {
		return ""
	}
	return "--graph " + shellQuote(graph)
}
