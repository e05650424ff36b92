package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads"
)

// Provider is the provider name recorded on threads answered by a server.
const Provider = "nodius-server"

// Store is what the remote runtime needs of the thread store: the agent's Store
// (every exchange is kept locally) and the remote marks.
type Store interface {
	agent.Store
	SetRemote(ctx context.Context, threadID string, r threads.Remote) error
	RemoteOf(ctx context.Context, threadID string) (threads.Remote, bool, error)
	FindRemote(ctx context.Context, server, remoteID string) (string, error)
}

// Runner asks the server's assistant. It satisfies the same interface as the
// in-process agent (Send, Resume), emits the same events and ends runs the same way.
type Runner struct {
	c     *Client
	store Store
	src   datasource.Source // reads the graph to show a proposal in full; may be nil
	log   *slog.Logger
	now   func() time.Time
}

// NewRunner returns a Runner speaking through c and keeping threads in store. src,
// when not nil, is read to complete proposals for display (the edges a deleted node
// takes with it, the values an update replaces).
func NewRunner(c *Client, store Store, src datasource.Source, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{c: c, store: store, src: src, log: log, now: time.Now}
}

// Client returns the runner's client (for the threads endpoints).
func (r *Runner) Client() *Client { return r.c }

// Send asks a question: in a new thread (on the server and here) or in an existing
// one. emit gets the events in order, the first being EventThread.
func (r *Runner) Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
	if emit == nil {
		emit = func(convo.Event) {}
	}
	th, rem, err := r.openThread(ctx, req.GraphKey, req.ThreadID)
	if err != nil {
		return agent.Result{}, err
	}
	ru := r.newRun(ctx, th, rem, emit)
	emit(convo.Event{Type: convo.EventThread, ThreadID: th.ID, Graph: th.GraphKey})
	if p, err := r.store.PendingProposal(ctx, th.ID); err != nil {
		return ru.fail(err)
	} else if p != nil {
		return ru.fail(&convo.Error{Code: convo.CodeInvalidRequest, Message: fmt.Sprintf(
			"thread %s has a proposal waiting for a decision — run 'nodius-ai approve %s' or 'nodius-ai reject %s' first", th.ID, th.ID, th.ID)})
	}
	msg := ChatRequest{Type: TypeChat, ID: r.c.newID(), GraphKey: th.GraphKey, Message: req.Text, ThreadID: rem.ID, Token: r.c.opt.Token}
	if err := msg.Validate(); err != nil {
		return ru.fail(&convo.Error{Code: convo.CodeConfig, Message: err.Error()})
	}
	if err := r.store.SaveMessage(ctx, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: req.Text, Status: convo.Complete, CreatedAt: r.now()}); err != nil {
		return ru.fail(err)
	}
	r.log.Info("remote chat", "thread", th.ID, "server_thread", rem.ID, "id", msg.ID)
	return ru.stream(msg.ID, msg)
}

// Resume sends the decision on the proposal the server's assistant waits on in the
// thread, and streams the rest of the run. The local copy may not know the proposal
// (a thread started in the web client): the server still gets the decision.
func (r *Runner) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
	if emit == nil {
		emit = func(convo.Event) {}
	}
	th, err := r.store.Thread(ctx, threadID)
	if err != nil {
		return agent.Result{}, err
	}
	rem, err := r.remoteOf(ctx, th)
	if err != nil {
		return agent.Result{}, err
	}
	ru := r.newRun(ctx, th, rem, emit)
	emit(convo.Event{Type: convo.EventThread, ThreadID: th.ID, Graph: th.GraphKey})
	if rem.ID == "" {
		return ru.fail(&convo.Error{Code: convo.CodeInvalidRequest, Message: fmt.Sprintf(
			"thread %s never reached the server (no server thread id): there is nothing to decide there", th.ID)})
	}
	p, err := r.store.PendingProposal(ctx, th.ID)
	if err != nil {
		return ru.fail(err)
	}
	if err := r.checkDecision(ctx, th.ID, p, d); err != nil {
		return ru.fail(err)
	}
	msg := ResumeRequest{Type: TypeResume, ID: r.c.newID(), ThreadID: rem.ID, Approved: d.Approved, Feedback: d.Feedback, Token: r.c.opt.Token}
	if err := msg.Validate(); err != nil {
		return ru.fail(&convo.Error{Code: convo.CodeConfig, Message: err.Error()})
	}
	// The decision is recorded once the server has taken it (its first message
	// that is not an error), so a refused resume leaves the proposal pending here.
	ru.accepted = func() error {
		if d.AlwaysForThread && d.Approved && p != nil {
			types := append([]string(nil), actionTypes(th.AutoApprove)...)
			types = append(types, string(p.Action.Type))
			if err := r.store.SetAutoApprove(ctx, th.ID, types); err != nil {
				return err
			}
		}
		if p == nil {
			return nil
		}
		return ru.decide(p, d)
	}
	r.log.Info("remote resume", "thread", th.ID, "server_thread", rem.ID, "id", msg.ID, "approved", d.Approved)
	return ru.stream(msg.ID, msg)
}

// checkDecision refuses, as the local agent does, a decision about another
// proposal than the one pending here, or about an action that changed since it was
// shown. A proposal this copy never saw (made in the web client) is the server's
// to check.
func (r *Runner) checkDecision(ctx context.Context, threadID string, p *convo.Proposal, d convo.Decision) error {
	if p == nil {
		if d.ProposalID == "" {
			return nil
		}
		if old, err := r.store.Proposal(ctx, threadID, d.ProposalID); err == nil && old.Decision != convo.Pending {
			return &convo.Error{Code: convo.CodeDecision, Message: fmt.Sprintf(
				"proposal %s in thread %s was already decided (%s); nothing was changed", old.ID, threadID, old.State())}
		}
		return nil
	}
	if d.ProposalID != "" && d.ProposalID != p.ID {
		return &convo.Error{Code: convo.CodeDecision, Message: fmt.Sprintf(
			"the proposal waiting in thread %s is now %s (%s), not %s that was shown; nothing was decided — look at it and decide again",
			threadID, p.ID, datasource.Describe(p.Action), d.ProposalID)}
	}
	digest := p.Digest
	if digest == "" {
		digest = convo.ActionDigest(p.Action)
	}
	if d.Digest != "" && d.Digest != digest {
		return &convo.Error{Code: convo.CodeDecision, Message: fmt.Sprintf(
			"proposal %s in thread %s changed since it was shown (now: %s); nothing was decided — look at it and decide again",
			p.ID, threadID, datasource.Describe(p.Action))}
	}
	return nil
}

func actionTypes(ts []datasource.ActionType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// Adopt returns the local copy of the server's thread serverID on graphKey,
// creating an empty one (same id when free) the first time: a thread started in
// the web client or another terminal can then be decided and continued here.
func (r *Runner) Adopt(ctx context.Context, serverID, graphKey string) (convo.Thread, error) {
	if id, err := r.store.FindRemote(ctx, r.c.Server(), serverID); err == nil {
		return r.store.Thread(ctx, id)
	} else if !errors.Is(err, threads.ErrNotFound) {
		return convo.Thread{}, err
	}
	if graphKey == "" {
		graphKey = "unknown"
	}
	t := convo.Thread{ID: serverID, GraphKey: graphKey, Provider: Provider, Status: convo.Active}
	th, err := r.store.CreateThread(ctx, t)
	if errors.Is(err, threads.ErrExists) || errors.Is(err, threads.ErrInvalid) {
		t.ID = "" // the id is taken by another thread, or is not one we can store
		th, err = r.store.CreateThread(ctx, t)
	}
	if err != nil {
		return convo.Thread{}, err
	}
	if err := r.store.SetRemote(ctx, th.ID, threads.Remote{Server: r.c.Server(), ID: serverID}); err != nil {
		return convo.Thread{}, err
	}
	return th, nil
}

// openThread loads the thread to continue (which must be this server's), or
// creates the local copy of a new one.
func (r *Runner) openThread(ctx context.Context, graphKey, threadID string) (convo.Thread, threads.Remote, error) {
	if threadID != "" {
		th, err := r.store.Thread(ctx, threadID)
		if err != nil {
			return convo.Thread{}, threads.Remote{}, err
		}
		if graphKey != "" && th.GraphKey != graphKey {
			return convo.Thread{}, threads.Remote{}, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
				"thread %s belongs to graph %q, not %q", th.ID, th.GraphKey, graphKey)}
		}
		rem, err := r.remoteOf(ctx, th)
		return th, rem, err
	}
	if strings.TrimSpace(graphKey) == "" {
		return convo.Thread{}, threads.Remote{}, &convo.Error{Code: convo.CodeConfig, Message: "no graph given — pass --graph KEY"}
	}
	now := r.now()
	th, err := r.store.CreateThread(ctx, convo.Thread{GraphKey: graphKey, Provider: Provider, Status: convo.Active, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return convo.Thread{}, threads.Remote{}, err
	}
	rem := threads.Remote{Server: r.c.Server()}
	if err := r.store.SetRemote(ctx, th.ID, rem); err != nil {
		return convo.Thread{}, threads.Remote{}, err
	}
	return th, rem, nil
}

// remoteOf returns the thread's remote mark; a local thread, or another server's,
// cannot be continued here.
func (r *Runner) remoteOf(ctx context.Context, th convo.Thread) (threads.Remote, error) {
	rem, ok, err := r.store.RemoteOf(ctx, th.ID)
	if err != nil {
		return threads.Remote{}, err
	}
	if !ok {
		return threads.Remote{}, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
			"thread %s was answered by the local agent, not by a server — continue it with --agent local, or start a new thread", th.ID)}
	}
	if rem.Server != r.c.Server() {
		return threads.Remote{}, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
			"thread %s belongs to the server %s, not %s — pass --agent server:%s", th.ID, rem.Server, r.c.Server(), rem.Server)}
	}
	return rem, nil
}

// run is one exchange: it turns the server's messages into events and keeps them
// in the thread store as they arrive.
type run struct {
	r    *Runner
	ctx  context.Context
	th   convo.Thread
	rem  threads.Remote
	emit func(convo.Event)

	cur       *convo.Message // the assistant message being received
	text      strings.Builder
	lastSave  time.Time
	streaming bool
	started   map[string]toolStart // tool calls announced, by id
	accepted  func() error         // run once, at the server's first non-error message
	result    agent.Result
}

type toolStart struct {
	name string
	at   time.Time
}

// saveEvery spaces the saves of a streaming answer.
const saveEvery = 250 * time.Millisecond

func (r *Runner) newRun(ctx context.Context, th convo.Thread, rem threads.Remote, emit func(convo.Event)) *run {
	return &run{r: r, ctx: ctx, th: th, rem: rem, emit: emit, started: map[string]toolStart{},
		result: agent.Result{ThreadID: th.ID}}
}

// stream sends req on a new connection and handles the run to its end.
func (ru *run) stream(id int64, req any) (agent.Result, error) {
	ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateWaiting})
	err := ru.r.c.stream(ru.ctx, id, req, func() string { return ru.rem.ID }, ru.handle)
	if err != nil {
		// Keep what arrived, marked interrupted, even when the run's context is gone.
		ru.closeCur(context.WithoutCancel(ru.ctx), convo.Interrupted)
		return ru.fail(err)
	}
	return ru.result, nil
}

// fail emits the error event and ends the run with it, classified.
func (ru *run) fail(err error) (agent.Result, error) {
	ce, ok := convo.AsError(err)
	switch {
	case ok:
	case ru.ctx.Err() != nil || errors.Is(err, context.Canceled):
		ce = &convo.Error{Code: convo.CodeInterrupted, Message: "stopped by the user; the partial answer is kept in the thread", Err: err}
	case errors.Is(err, datasource.ErrNotFound):
		ce = &convo.Error{Code: convo.CodeInvalidRequest, Message: err.Error(), Err: err}
	default:
		ce = &convo.Error{Code: convo.CodeInternal, Message: err.Error(), Err: err}
	}
	ru.r.log.Warn("remote run failed", "thread", ru.th.ID, "code", string(ce.Code), "error", ce.Message)
	ru.emit(convo.Event{Type: convo.EventError, Err: ce})
	ru.result.ThreadID = ru.th.ID
	return ru.result, ce
}

// handle takes one of the run's messages; done is true when the run is over.
func (ru *run) handle(in Inbound) (done bool, err error) {
	if ru.accepted != nil && in.Type != TypeError {
		f := ru.accepted
		ru.accepted = nil
		if err := f(); err != nil {
			return true, err
		}
	}
	switch in.Type {
	case TypeToken:
		return false, ru.token(in.Token)
	case TypeToolStart:
		return false, ru.toolStart(in.ToolCallID, in.ToolName)
	case TypeToolResult:
		return false, ru.toolResult(in.ToolCallID, in.Result)
	case TypeComplete:
		return true, ru.complete(in)
	case TypeError:
		return true, serverError(in)
	}
	return false, nil
}

func (ru *run) open() {
	if ru.cur == nil {
		ru.cur = &convo.Message{ThreadID: ru.th.ID, Role: convo.Assistant, Status: convo.Streaming, CreatedAt: ru.r.now()}
		ru.text.Reset()
	}
}

// closeCur saves the current assistant message with its final status.
func (ru *run) closeCur(ctx context.Context, st convo.Status) error {
	m := ru.cur
	if m == nil {
		return nil
	}
	ru.cur = nil
	m.Content = ru.text.String()
	if m.ID == 0 && m.Content == "" && len(m.ToolCalls) == 0 {
		return nil
	}
	m.Status = st
	return ru.r.store.SaveMessage(ctx, m)
}

func (ru *run) token(t string) error {
	if ru.cur != nil && len(ru.cur.ToolCalls) > 0 {
		// Text after tool calls is the next model call's answer: a new message.
		if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
			return err
		}
	}
	ru.open()
	if !ru.streaming {
		ru.streaming = true
		ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateStreaming})
	}
	ru.text.WriteString(t)
	ru.emit(convo.Event{Type: convo.EventToken, Text: t})
	if now := time.Now(); now.Sub(ru.lastSave) >= saveEvery {
		ru.lastSave = now
		ru.cur.Content = ru.text.String()
		return ru.r.store.SaveMessage(ru.ctx, ru.cur)
	}
	return nil
}

func (ru *run) toolStart(id, name string) error {
	ru.open()
	tc := convo.ToolCall{ID: id, Name: name}
	if !hasCall(ru.cur.ToolCalls, id) {
		ru.cur.ToolCalls = append(ru.cur.ToolCalls, tc)
	}
	ru.cur.Content = ru.text.String()
	if err := ru.r.store.SaveMessage(ru.ctx, ru.cur); err != nil {
		return err
	}
	ru.started[id] = toolStart{name: name, at: time.Now()}
	ru.streaming = false
	ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateTool})
	ru.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
	return nil
}

func (ru *run) toolResult(id, result string) error {
	st, ok := ru.started[id]
	if !ok {
		// A result for a call never announced: announce it, so the copy stays whole.
		if err := ru.toolStart(id, "tool"); err != nil {
			return err
		}
		st = ru.started[id]
	}
	tc := convo.ToolCall{ID: id, Name: st.name}
	m := &convo.Message{ThreadID: ru.th.ID, Role: convo.Tool, ToolCallID: id, Name: st.name, Content: result, Status: convo.Complete, CreatedAt: ru.r.now()}
	runRec := convo.ToolRun{ThreadID: ru.th.ID, ToolCallID: id, Name: st.name, Status: convo.RunCompleted, Result: result,
		StartedAt: ru.r.now().Add(-time.Since(st.at)), FinishedAt: ru.r.now()}
	if err := ru.r.store.SaveToolResult(ru.ctx, m, runRec); err != nil {
		return err
	}
	ru.emit(convo.Event{Type: convo.EventToolResult, ToolCall: tc, Result: result, Duration: time.Since(st.at)})
	return nil
}

func hasCall(calls []convo.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// complete ends the run: an answer, or a proposal the server's assistant waits on.
func (ru *run) complete(in Inbound) error {
	if ru.rem.ID != in.ThreadID {
		ru.rem.ID = in.ThreadID
		if err := ru.r.store.SetRemote(ru.ctx, ru.th.ID, ru.rem); err != nil {
			return err
		}
	}
	it, isInterrupt, err := ParseInterrupt(in.FullText)
	if err != nil {
		return &convo.Error{Code: convo.CodeInternal, Message: err.Error() + " — the server may run another version of Nodius", Err: err}
	}
	if isInterrupt {
		return ru.propose(it)
	}
	if ru.cur != nil && len(ru.cur.ToolCalls) > 0 {
		if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
			return err
		}
	}
	ru.open()
	if ru.text.Len() == 0 && in.FullText != "" {
		// Nothing was streamed: the answer comes whole.
		ru.text.WriteString(in.FullText)
		ru.emit(convo.Event{Type: convo.EventToken, Text: in.FullText})
	}
	answer := in.FullText
	if answer == "" {
		answer = ru.text.String()
	}
	if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
		return err
	}
	ru.result.Text = answer
	ru.emit(convo.Event{Type: convo.EventComplete, ThreadID: ru.th.ID, Text: answer})
	return nil
}

// propose records the proposal the run stopped at and emits it.
func (ru *run) propose(it Interrupt) error {
	if ru.cur != nil && len(ru.cur.ToolCalls) > 0 && !hasCall(ru.cur.ToolCalls, it.ToolCall.ID) {
		// The proposal is another model call than the tools before it.
		if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
			return err
		}
	}
	ru.open()
	if ru.text.Len() == 0 && it.Message != "" {
		ru.text.WriteString(it.Message)
		ru.emit(convo.Event{Type: convo.EventToken, Text: it.Message})
	}
	tc := convo.ToolCall{ID: it.ToolCall.ID, Name: it.ToolCall.Function.Name, Arguments: it.ToolCall.Function.Arguments}
	replaced := false
	for i, c := range ru.cur.ToolCalls {
		if c.ID == tc.ID {
			ru.cur.ToolCalls[i], replaced = tc, true
		}
	}
	if !replaced {
		ru.cur.ToolCalls = append(ru.cur.ToolCalls, tc)
	}
	if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
		return err
	}
	action := ru.r.complete(ru.ctx, ru.th.GraphKey, it.Action)
	p := convo.Proposal{ID: tc.ID, ThreadID: ru.th.ID, ToolCallID: tc.ID, Tool: tc.Name, Action: action,
		Digest: convo.ActionDigest(action), Reason: it.Reason, Decision: convo.Pending, CreatedAt: ru.r.now()}
	if err := ru.r.store.SaveProposal(ru.ctx, p); err != nil {
		return err
	}
	ru.r.log.Info("remote proposal", "thread", ru.th.ID, "tool", tc.Name, "action", string(action.Type))
	ru.result.Proposal = &p
	ru.emit(convo.Event{Type: convo.EventProposal, Proposal: &p})
	return nil
}

// decide records the decision the server took, as the tool result that carries it
// (the server's own words, as its resume writes them), and emits it.
func (ru *run) decide(p *convo.Proposal, d convo.Decision) error {
	out := map[string]any{}
	if d.Approved {
		p.Decision = convo.Approved
		out["status"], out["message"] = "approved", "The user approved the action; the server applies it."
	} else {
		p.Decision = convo.Rejected
		out["status"], out["message"] = "rejected", "The user rejected the action; it was not applied."
	}
	if d.Feedback != "" {
		out["feedback"] = d.Feedback
	}
	p.Feedback = d.Feedback
	p.DecidedAt = ru.r.now()
	content, _ := json.Marshal(out)
	m := &convo.Message{ThreadID: ru.th.ID, Role: convo.Tool, ToolCallID: p.ToolCallID, Name: p.Tool,
		Content: string(content), Status: convo.Complete, CreatedAt: ru.r.now()}
	if err := ru.r.store.DecideProposal(ru.ctx, *p, m); err != nil {
		return err
	}
	ru.emit(convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: p.ToolCallID, Name: p.Tool}, Result: string(content)})
	return nil
}
