// Package agent runs the Nodius assistant in-process: retrieval, prompt, the streaming
// LLM tool loop, proposals that stop the loop for a person's decision, and resume. It
// emits events and persists every step through a Store; it never prints.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
)

// Retriever finds the part of a graph relevant to a question (rag.Retriever).
type Retriever interface {
	RetrieveWith(ctx context.Context, graphKey, query string, mentions []string) (*rag.Context, error)
	Invalidate(graphKey string)
}

// Options wire an Agent. Provider may be nil: every send then fails with the
// configuration error in NoProvider (so the TUI can open without a provider).
type Options struct {
	// CommandFlags are appended to the nodius-ai commands the agent prints for the
	// person to run (approve, reject, undo): the flags they typed that the command
	// needs to reach the same threads and graph, so it runs as printed.
	CommandFlags string

	Provider   llm.Provider
	NoProvider error
	// Retry, when set, retries transient provider errors before any token of a call
	// was shown (llm.WithRetry), telling the run's listener with a retrying status.
	Retry     *llm.RetryOptions
	Source    datasource.Source
	Retriever Retriever
	Store     Store

	Role          string // viewer | editor | admin
	MaxToolRounds int    // default 5
	// MaxExtendedRounds is how many tool rounds a turn may use in all once the
	// person chose to continue at the limit (default 10, as the Nodius server).
	MaxExtendedRounds int
	Policy            map[datasource.ActionType]config.Policy
	Limits            config.Limits
	Pricing           config.Pricing
	ContextWindow     int // tokens; 0 means no trimming
	MaxTokens         int // completion cap per call; 0 = provider default

	Workspace string
	UserID    string
	Logger    *slog.Logger
	Now       func() time.Time

	// SourceSpec names Source without credentials (see convo.Thread.Source): new
	// threads record it, and an approval checks it against the thread's.
	SourceSpec string
	// SourceChosen: the person named the source for this run (--source), so a thread
	// recorded on another source may be decided on this one.
	SourceChosen bool
	// Claimer names this process in the claims it takes (default host:pid), and
	// Alive tells whether the process of a claim may still run (default: a signal 0
	// to its pid on this host). Tests replace them.
	Claimer string
	Alive   func(claimer string) bool
}

// SendRequest is one question. An empty ThreadID starts a new thread on GraphKey.
type SendRequest struct {
	GraphKey string
	ThreadID string
	Text     string
	// Mentions are node keys the user named with @: added to the retrieval context in full.
	Mentions []string
}

// Result is how a run ended: a final answer (Text), or a proposal awaiting a decision.
type Result struct {
	ThreadID string
	Text     string
	Proposal *convo.Proposal
	Usage    convo.Usage // this run's tokens and cost
	// Decided is the proposal this run decided last (by Resume, or auto-approved),
	// with its outcome: a caller reports "approved but not applied" from it.
	Decided *convo.Proposal
	// ToolLimit is set when the run stopped at the tool-round limit (MaxToolRounds)
	// and waits for the choice to continue or to answer now, given to Resume.
	ToolLimit *convo.ToolLimit
}

// Agent is the assistant runtime, shared by all threads of a process. It holds no
// per-thread state in memory: everything a run needs is read from the Store, so a
// thread can be continued by another process (or the web client, after sync).
type Agent struct {
	opt  Options
	log  *slog.Logger
	defs []convo.ToolDef // the tools offered, fixed by role and policy: built once
	// homeDefs: the tools of home mode (no graph open), fixed the same way.
	homeDefs []convo.ToolDef
	claimer  string
	alive    func(string) bool
}

// New returns an Agent; zero options get their defaults.
func New(opt Options) *Agent {
	if opt.MaxToolRounds <= 0 {
		opt.MaxToolRounds = 5
	}
	if opt.MaxExtendedRounds < opt.MaxToolRounds {
		opt.MaxExtendedRounds = max(10, 2*opt.MaxToolRounds)
	}
	if opt.Role == "" {
		opt.Role = "editor"
	}
	opt.Limits = opt.Limits.WithDefaults()
	if opt.Workspace == "" {
		opt.Workspace = "default"
	}
	if opt.UserID == "" {
		opt.UserID = "cli-user"
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Agent{opt: opt, log: log, claimer: opt.Claimer, alive: opt.Alive}
	if a.claimer == "" {
		a.claimer = defaultClaimer()
	}
	if a.alive == nil {
		a.alive = processAlive
	}
	// Read tools always; write tools for editors and admins, except the action
	// types whose policy is deny.
	a.defs = tools.ToolDefs(opt.Role, a.allowed)
	a.homeDefs = tools.HomeToolDefs(opt.Role, a.allowed)
	return a
}

func (a *Agent) allowed(t datasource.ActionType) bool {
	return a.opt.Policy[t] != config.PolicyDeny
}

// Send asks a question. emit is called synchronously, in order, for every event
// (the first is always EventThread).
func (a *Agent) Send(ctx context.Context, req SendRequest, emit func(convo.Event)) (Result, error) {
	defer a.release()
	if emit == nil {
		emit = func(convo.Event) {}
	}
	if a.opt.Provider == nil {
		return Result{}, a.noProvider()
	}
	if req.GraphKey == "" && req.ThreadID == "" {
		req.GraphKey = tools.HomeGraphKey // no graph: home mode, as on the Nodius server
	}
	th, err := a.openThread(ctx, req.GraphKey, req.ThreadID)
	if err != nil {
		return Result{}, err
	}
	r := &run{a: a, ctx: ctx, th: th, emit: emit, fresh: req.ThreadID == ""}
	emit(convo.Event{Type: convo.EventThread, ThreadID: th.ID, Graph: th.GraphKey})
	if th.Provider == convo.ProviderMCP {
		return r.fail(&fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s holds the proposals of an MCP client (%s), not a conversation — ask in a new thread", th.ID, th.Model)})
	}

	if err := r.reconcile(); err != nil {
		return r.fail(err)
	}
	if p, err := a.opt.Store.PendingProposal(ctx, th.ID); err != nil {
		return r.fail(err)
	} else if p != nil {
		return r.fail(&fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s has a proposal waiting for a decision — run 'nodius-ai approve %s%s' or 'nodius-ai reject %s%s' first",
			th.ID, th.ID, a.opt.CommandFlags, th.ID, a.opt.CommandFlags)})
	}
	if err := r.loadHistory(true); err != nil {
		return r.fail(err)
	}

	// A thread over its limits is refused before retrieval, whose query expansion
	// (retrieval.expand = "llm") is itself a paid call.
	if err := r.checkBudget(); err != nil {
		return r.fail(err)
	}
	if tools.IsHome(th.GraphKey) {
		return r.sendHome(req.Text)
	}
	emit(convo.Event{Type: convo.EventStatus, State: convo.StateRetrieving})
	rc, err := a.opt.Retriever.RetrieveWith(ctx, th.GraphKey, req.Text, req.Mentions)
	if err != nil {
		return r.fail(fmt.Errorf("retrieval: %w", err))
	}
	expandUsage := r.recordExpansion(rc.Retrieval)
	if len(r.history) == 0 {
		sys, err := a.systemPrompt(ctx, th.GraphKey, rc)
		if err != nil {
			return r.fail(err)
		}
		if err := r.append(&convo.Message{Role: convo.System, Kind: convo.KindPrompt, Content: sys, Status: convo.Complete}); err != nil {
			return r.fail(err)
		}
	}
	// The context message carries what its expansion call cost, so the thread's
	// totals count it like any call.
	if err := r.append(&convo.Message{Role: convo.System, Kind: convo.KindContext, Content: contextMessage(rc), Status: convo.Complete, Usage: expandUsage}); err != nil {
		return r.fail(err)
	}
	if expandUsage.Total() > 0 || expandUsage.CostUSD > 0 {
		r.fresh = false // the thread holds what its query expansion cost
	}
	if err := r.append(&convo.Message{Role: convo.User, Content: req.Text, Status: convo.Complete}); err != nil {
		return r.fail(err)
	}
	return r.loop()
}

// Resume decides the thread's pending proposal and continues the conversation.
//
// The decision binds to what the person saw: with d.ProposalID (and d.Digest) set,
// only that proposal, unchanged, is decided. An approval re-checks at the moment it
// applies the role, the policy and the source in effect now, that the stored action
// is what the model's call says, and that the graph still matches what was shown.
func (a *Agent) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (Result, error) {
	defer a.release()
	if emit == nil {
		emit = func(convo.Event) {}
	}
	th, err := a.opt.Store.Thread(ctx, threadID)
	if err != nil {
		return Result{}, err
	}
	r := &run{a: a, ctx: ctx, th: th, emit: emit}
	emit(convo.Event{Type: convo.EventThread, ThreadID: th.ID, Graph: th.GraphKey})
	if err := r.reconcile(); err != nil {
		return r.fail(err)
	}
	if p := r.landedFor(d); p != nil {
		return r.resumeLanded(p, d)
	}
	if d.ProposalID == "" {
		if rounds, ok, err := r.atToolLimit(); err != nil {
			return r.fail(err)
		} else if ok {
			return r.resumeToolLimit(rounds, d.Approved)
		}
	}
	p, err := r.checkDecision(d)
	if err != nil {
		return r.fail(err)
	}
	if err := r.loadHistory(false); err != nil {
		return r.fail(err)
	}
	// The decision is the tool result of the pending call; the calls after it in the
	// same batch are processed next, in order.
	remaining := r.dropPendingBatchResults(p.ToolCallID)
	if d.Approved {
		if err := r.mayApply(p); err != nil {
			return r.fail(err)
		}
		reason, err := r.drift(p)
		if err != nil {
			return r.fail(err)
		}
		if reason == "" {
			reason = r.cannotCreate(p)
		}
		if err := r.approve(p, d.Feedback, reason); err != nil {
			return r.fail(err)
		}
		if d.AlwaysForThread && p.Outcome == convo.Applied {
			if err := r.autoApprove(p.Action); err != nil {
				return r.fail(err)
			}
		}
	} else if err := r.reject(p, d.Feedback); err != nil {
		return r.fail(err)
	}
	return r.afterDecision(p, remaining)
}

// release lets the source give up what it holds open between reads once a run
// ends (the Nodius server's editing socket: held while a question is answered, not
// while the person types the next one).
func (a *Agent) release() {
	if r, ok := a.opt.Source.(datasource.Releaser); ok {
		r.Release()
	}
}

func (a *Agent) noProvider() error {
	if a.opt.NoProvider != nil {
		return a.opt.NoProvider
	}
	return &fault.Error{Code: fault.Config, Message: "no LLM provider configured"}
}

// openThread loads the thread to continue, or creates a new one.
func (a *Agent) openThread(ctx context.Context, graphKey, threadID string) (convo.Thread, error) {
	if threadID != "" {
		th, err := a.opt.Store.Thread(ctx, threadID)
		if err != nil {
			return convo.Thread{}, err
		}
		if th.Source != "" && a.opt.SourceSpec != "" && th.Source != a.opt.SourceSpec && !a.opt.SourceChosen {
			return convo.Thread{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
				"thread %s works on %s, but the source in effect is %s; pass --source to choose one", th.ID, th.Source, a.opt.SourceSpec)}
		}
		if graphKey != "" && th.GraphKey != graphKey {
			return convo.Thread{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
				"thread %s belongs to graph %q, not %q", th.ID, th.GraphKey, graphKey)}
		}
		return th, nil
	}
	if graphKey == "" {
		return convo.Thread{}, &fault.Error{Code: fault.Config, Message: "no graph given — pass --graph KEY"}
	}
	// Fail early on an unknown graph, before a thread is created for it. Home
	// mode opens no graph.
	if graphKey != tools.HomeGraphKey {
		if _, err := a.opt.Source.Graph(ctx, graphKey); err != nil {
			return convo.Thread{}, err
		}
	}
	now := a.opt.Now()
	return a.opt.Store.CreateThread(ctx, convo.Thread{
		GraphKey: graphKey, Workspace: a.opt.Workspace, UserID: a.opt.UserID,
		Provider: a.opt.Provider.Name(), Model: a.opt.Provider.Model(), Source: a.opt.SourceSpec,
		Status: convo.Active, CreatedAt: now, UpdatedAt: now,
	})
}

// interruptedError is what a run stopped by its context reports.
func interruptedError(err error) *fault.Error {
	return &fault.Error{Code: fault.Interrupted, Message: "stopped by the user; the partial answer is kept in the thread", Err: err}
}

// classify turns any error into a *fault.Error for the error event.
func classify(ctx context.Context, err error) *fault.Error {
	if ce, ok := fault.As(err); ok {
		return ce
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return interruptedError(err)
	}
	if errors.Is(err, datasource.ErrNotFound) {
		return &fault.Error{Code: fault.InvalidRequest, Message: err.Error(), Err: err}
	}
	return &fault.Error{Code: fault.Internal, Message: err.Error(), Err: err}
}
