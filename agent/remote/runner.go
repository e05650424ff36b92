package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/termtext"
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

	// applier carries out the server's ai:apply_action through the editing
	// protocol; nil: an approved change cannot be applied from here (said so).
	applier  nodiusapi.Applier
	limits   config.Limits
	cmdFlags string // appended to the commands printed for the person (SetCommandFlags)
}

// NewRunner returns a Runner speaking through c and keeping threads in store. src,
// when not nil, is read to complete proposals for display (the edges a deleted node
// takes with it, the values an update replaces).
func NewRunner(c *Client, store Store, src datasource.Source, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{c: c, store: store, src: src, log: log, now: time.Now, limits: config.DefaultLimits}
}

// SetApplier sets what applies approved changes (the server data source's editing
// WebSocket). Call it before the first run.
func (r *Runner) SetApplier(a nodiusapi.Applier) { r.applier = a }

// SetCommandFlags sets what is appended to the nodius-ai commands the runner
// prints for the person (the flags they typed that the command needs).
func (r *Runner) SetCommandFlags(flags string) { r.cmdFlags = flags }

// SetLimits sets the size bounds of remote runs: the same keys, and the same
// errors, as local runs (unset ones get their defaults). Call it before the first run.
func (r *Runner) SetLimits(l config.Limits) { r.limits = l.WithDefaults() }

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
		return ru.fail(&fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s has a proposal waiting for a decision — run 'nodius-ai approve %s%s' or 'nodius-ai reject %s%s' first",
			th.ID, th.ID, r.cmdFlags, th.ID, r.cmdFlags)})
	}
	msg := ChatRequest{Type: TypeChat, ID: r.c.newID(), GraphKey: th.GraphKey, Message: req.Text, ThreadID: rem.ID}
	if tools.IsHome(th.GraphKey) {
		// Home mode, as the web client asks it with no graph open: the server's
		// assistant lists the user's graphs and proposes new ones.
		msg.ContextType = "home"
	}
	if err := msg.Validate(); err != nil {
		return ru.fail(&fault.Error{Code: fault.Config, Message: err.Error()})
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
		return ru.fail(&fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s never reached the server (no server thread id): there is nothing to decide there", th.ID)})
	}
	p, err := r.store.PendingProposal(ctx, th.ID)
	if err != nil {
		return ru.fail(err)
	}
	if err := r.checkDecision(ctx, th.ID, p, d); err != nil {
		return ru.fail(err)
	}
	msg := ResumeRequest{Type: TypeResume, ID: r.c.newID(), ThreadID: rem.ID, Approved: d.Approved, Feedback: d.Feedback}
	if err := msg.Validate(); err != nil {
		return ru.fail(&fault.Error{Code: fault.Config, Message: err.Error()})
	}
	// The decision is recorded once the server has taken it (its first message that
	// is not an error), so a refused resume leaves the proposal pending here. An
	// approval is recorded with what became of it: the server sends ai:apply_action
	// first, and the change is applied here before anything is said to be done.
	ru.decision, ru.pending = &d, p
	r.log.Info("remote resume", "thread", th.ID, "server_thread", rem.ID, "id", msg.ID, "approved", d.Approved)
	g := newGraphOf(p)
	if p == nil && d.Approved && tools.IsHome(th.GraphKey) {
		// A home-mode proposal this copy never saw (the web client's): if the server
		// waits on a new graph, it is created here all the same, as the web client
		// would.
		g = r.serverNewGraph(ctx, rem.ID)
	}
	if g != nil && d.Approved {
		return ru.streamCreate(msg, *g)
	}
	if d.Approved {
		// The server records an approved action as executed the moment it sends
		// ai:apply_action: register on the graph first, and approve only once the
		// server has accepted this terminal as an editor. If it will not, nothing
		// is sent and the proposal stays pending on the server.
		release, err := ru.prepare(rem.ID)
		if err != nil {
			return ru.fail(err)
		}
		defer release()
	}
	return ru.stream(msg.ID, msg)
}

// prepare takes the editing registration an approval will need, and learns what
// was approved (the proposal shown here, or the one the server's thread holds).
// It returns what releases the registration.
func (ru *run) prepare(serverThread string) (release func(), err error) {
	p := ru.pending
	release = func() {}
	if p != nil {
		ru.approved = &p.Action
	}
	if p != nil && p.Action.Type == datasource.ConfigureNodeTypeAction {
		return ru.prepareNodeType(p.Action.ConfigureNodeType) // nodetype.go
	}
	needs := p != nil && p.Action.Type != datasource.CreateGraphAction
	prep, canPrepare := ru.r.applier.(nodiusapi.Preparer)
	if !needs {
		if p == nil && canPrepare {
			// A proposal this copy never saw (the web client's) or the tool-round
			// limit: if the server's thread waits on a change, it is read from
			// there, and the registration taken; if not, nothing is needed.
			if a, ok := ru.r.serverProposal(ru.ctx, ru.th.GraphKey, serverThread); ok {
				ru.approved = &a
				held, err := prep.PrepareServerApply(ru.ctx, ru.th.GraphKey)
				if err != nil {
					return release, notApprovable(ru.th, err)
				}
				ru.held = held
				return held.Release, nil
			}
		}
		return release, nil
	}
	if !canPrepare {
		return release, &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"nothing was approved: the server leaves applying an approved change to the approving client, and this terminal has no editing connection to graph %q on %s (the data source is not that server) — approve it with --source server:%s, or in the web client; the proposal is still pending",
			ru.th.GraphKey, ru.r.c.Server(), ru.r.c.Server())}
	}
	held, err := prep.PrepareServerApply(ru.ctx, ru.th.GraphKey)
	if err != nil {
		return release, notApprovable(ru.th, err)
	}
	ru.held = held
	return held.Release, nil
}

// notApprovable is the error of an approval not sent because the editing
// registration could not be had.
func notApprovable(th convo.Thread, err error) error {
	code, why := fault.Network, err.Error()
	if fe, ok := fault.As(err); ok {
		code = fe.Code
		if code == fault.Config || code == fault.Decision {
			code = fault.InvalidRequest // a runtime failure (exit 1), not a usage error
		}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &fault.Error{Code: code, Err: err, Message: fmt.Sprintf(
		"nothing was approved: the change could not be applied, because the Nodius server did not take this terminal as an editor of graph %q (%s); the proposal is still pending — approve it again once that is fixed",
		th.GraphKey, termtext.Strip(why))}
}

// serverProposal reads, from the server's history of the thread, the change its
// assistant waits on (the last propose_* call), as the local tools read such a
// call. ok is false when the thread waits on none (the tool-round limit) or it
// cannot be read.
func (r *Runner) serverProposal(ctx context.Context, graphKey, serverThread string) (datasource.Action, bool) {
	msgs, err := r.c.Messages(ctx, serverThread)
	if err != nil {
		r.log.Warn("could not read the server's history of the thread", "thread", serverThread, "error", err.Error())
		return datasource.Action{}, false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var calls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		if json.Unmarshal(m.ToolCalls, &calls) != nil {
			return datasource.Action{}, false
		}
		for j := len(calls) - 1; j >= 0; j-- {
			c := calls[j].Function
			if !strings.HasPrefix(c.Name, "propose_") {
				continue
			}
			if r.src == nil {
				return datasource.Action{}, false
			}
			a, _, err := tools.ParseProposal(ctx, r.src, graphKey, c.Name, c.Arguments)
			if err != nil {
				r.log.Warn("could not read the server's pending proposal", "thread", serverThread, "error", err.Error())
				return datasource.Action{}, false
			}
			return a, true
		}
		return datasource.Action{}, false
	}
	return datasource.Action{}, false
}

// newGraphOf is the graph a create_graph proposal asks for (nil for any other).
func newGraphOf(p *convo.Proposal) *datasource.CreateGraphPayload {
	if p == nil || p.Action.Type != datasource.CreateGraphAction || p.Action.CreateGraph == nil {
		return nil
	}
	return p.Action.CreateGraph
}

// creation is what became of the graph an approved create_graph asked for.
type creation struct {
	graph datasource.CreateGraphPayload
	key   string // the new graph's key; "" when it was not created
	why   string // why not, in the server's words
}

// streamCreate approves a create_graph as the web client does: once the run's
// connection is authenticated, the graph is created in the user's workspace (POST
// /api/graph/create), and the approval tells the assistant its key
// (created:graph:KEY); when the server refuses, the decision sent is a rejection
// saying why ("Creation failed: …"), and the approval is recorded here as not
// applied. The server itself sends no ai:apply_action for it.
func (ru *run) streamCreate(msg ResumeRequest, g datasource.CreateGraphPayload) (agent.Result, error) {
	ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateWaiting})
	err := ru.r.c.streamAuthed(ru.ctx, ru.th.GraphKey, msg.ID, func(auth nodiusapi.AuthResult) (any, error) {
		key, err := ru.r.c.CreateGraph(ru.ctx, g, Workspace(auth))
		if ru.ctx.Err() != nil {
			return nil, ru.ctx.Err() // stopped: nothing is decided
		}
		ru.creation = &creation{graph: g, key: key}
		if err != nil {
			ru.creation.why = err.Error()
			msg.Approved = false
			// The web client's words: the server's error alone after a refusal,
			// "Creation error: …" when the request could not be made.
			word, why := "Creation failed: ", err.Error()
			if ce := (*CreateError)(nil); errors.As(err, &ce) {
				if ce.Status == 0 {
					word = "Creation error: "
				} else {
					why = strings.TrimSuffix(why, fmt.Sprintf(" (HTTP %d)", ce.Status))
				}
			}
			msg.Feedback = word + why
			ru.r.log.Warn("remote create_graph refused", "thread", ru.th.ID, "reason", err.Error())
		} else {
			fb := createdFeedback(g, key)
			if u := strings.TrimSpace(msg.Feedback); u != "" {
				fb += "\n" + u // the user's word, after what the web client sends
			}
			msg.Feedback = fb
			ru.r.log.Info("remote create_graph", "thread", ru.th.ID, "key", key)
		}
		return msg, nil
	}, ru.handle)
	if err != nil {
		ru.keepCreated()
		ru.closeCur(context.WithoutCancel(ru.ctx), convo.Interrupted)
		return ru.fail(err)
	}
	return ru.result, nil
}

// keepCreated records an approval whose graph was created when the run ends before
// the server answered it: the graph exists, so the proposal must not stay pending
// (approving it again would create a second one).
func (ru *run) keepCreated() {
	if ru.creation == nil || ru.creation.key == "" || ru.decided {
		return
	}
	ctx := ru.ctx
	ru.ctx = context.WithoutCancel(ctx)
	if err := ru.recordDecision(nil); err != nil {
		ru.r.log.Warn("could not record the created graph", "thread", ru.th.ID, "key", ru.creation.key, "error", err.Error())
	}
	ru.ctx = ctx
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
			return &fault.Error{Code: fault.Decision, Message: fmt.Sprintf(
				"proposal %s in thread %s was already decided (%s); nothing was changed", old.ID, threadID, old.State())}
		}
		return nil
	}
	if d.ProposalID != "" && d.ProposalID != p.ID {
		return &fault.Error{Code: fault.Decision, Message: fmt.Sprintf(
			"the proposal waiting in thread %s is now %s (%s), not %s that was shown; nothing was decided — look at it and decide again",
			threadID, p.ID, datasource.Describe(p.Action), d.ProposalID)}
	}
	digest := p.Digest
	if digest == "" {
		digest = convo.ActionDigest(p.Action)
	}
	if d.Digest != "" && d.Digest != digest {
		return &fault.Error{Code: fault.Decision, Message: fmt.Sprintf(
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
	r.importHistory(ctx, th.ID, serverID)
	return th, nil
}

// importHistory copies the questions and answers of a server thread (one started
// in the web client) into its new local copy, so that it reads whole here. Tool
// calls are left out (the server's ids are not unique); a history that cannot be
// read leaves the copy empty, which is said in the log only: the thread can still
// be decided and continued.
func (r *Runner) importHistory(ctx context.Context, localID, serverID string) {
	msgs, err := r.c.Messages(ctx, serverID)
	if err != nil {
		r.log.Warn("could not read the server's history of the thread", "thread", serverID, "error", err.Error())
		return
	}
	for _, m := range msgs {
		role := convo.Role(m.Role)
		text := m.Text()
		if role != convo.User && role != convo.Assistant || strings.TrimSpace(text) == "" {
			continue
		}
		if err := r.store.SaveMessage(ctx, &convo.Message{ThreadID: localID, Role: role, Content: text, Status: convo.Complete, CreatedAt: r.now()}); err != nil {
			r.log.Warn("could not keep the server's history of the thread", "thread", serverID, "error", err.Error())
			return
		}
	}
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
			return convo.Thread{}, threads.Remote{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
				"thread %s belongs to graph %q, not %q", th.ID, th.GraphKey, graphKey)}
		}
		rem, err := r.remoteOf(ctx, th)
		return th, rem, err
	}
	if strings.TrimSpace(graphKey) == "" {
		return convo.Thread{}, threads.Remote{}, &fault.Error{Code: fault.Config, Message: "no graph given — pass --graph KEY"}
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
		return threads.Remote{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"thread %s was answered by the local agent, not by a server — continue it with --agent local, or start a new thread", th.ID)}
	}
	if rem.Server != r.c.Server() {
		return threads.Remote{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
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
	result    agent.Result

	runTag   string // makes the server's tool call ids unique in the thread
	calls    int    // tool results recorded in this run
	usage    convo.Usage
	decision *convo.Decision    // Resume: the decision sent
	pending  *convo.Proposal    // Resume: the proposal it decides (nil: unknown here)
	decided  bool               // the decision is recorded
	stopped  bool               // the run was ended here (an apply failed)
	creation *creation          // Resume of a create_graph: what became of the graph
	approved *datasource.Action // Resume: the change approved, what ai:apply_action is checked against
	held     nodiusapi.Prepared // Resume: the editing registration taken before approving
	// typeApply is, on the Resume of an approved node type change, its apply once
	// the type's registration was taken (nodetype.go).
	typeApply func(context.Context) (datasource.ApplyResult, error)
}

type toolStart struct {
	name  string
	at    time.Time
	local string // the id in the thread
	n     int    // how many times the server reused its id before
}

// maxCalls bounds the tool calls of one remote run: the server allows up to 10
// rounds once extended, each of at most max_tool_calls calls.
func (ru *run) maxCalls() int { return 10 * max(ru.r.limits.MaxToolCalls, 1) }

// saveEvery spaces the saves of a streaming answer.
const saveEvery = 250 * time.Millisecond

func (r *Runner) newRun(ctx context.Context, th convo.Thread, rem threads.Remote, emit func(convo.Event)) *run {
	return &run{r: r, ctx: ctx, th: th, rem: rem, emit: emit, started: map[string]toolStart{},
		result: agent.Result{ThreadID: th.ID}, runTag: strconv.FormatInt(time.Now().UnixNano()%(36*36*36*36*36*36), 36)}
}

// stream sends req on a new connection and handles the run to its end.
func (ru *run) stream(id int64, req any) (agent.Result, error) {
	ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateWaiting})
	err := ru.r.c.stream(ru.ctx, ru.th.GraphKey, id, req, ru.handle)
	if err != nil {
		// Keep what arrived, marked interrupted, even when the run's context is gone.
		ru.closeCur(context.WithoutCancel(ru.ctx), convo.Interrupted)
		return ru.fail(err)
	}
	return ru.result, nil
}

// fail emits the error event and ends the run with it, classified.
func (ru *run) fail(err error) (agent.Result, error) {
	ce, ok := fault.As(err)
	switch {
	case ok:
	case ru.ctx.Err() != nil || errors.Is(err, context.Canceled):
		ce = &fault.Error{Code: fault.Interrupted, Message: "stopped by the user; the partial answer is kept in the thread", Err: err}
	case errors.Is(err, datasource.ErrNotFound):
		ce = &fault.Error{Code: fault.InvalidRequest, Message: err.Error(), Err: err}
	default:
		ce = &fault.Error{Code: fault.Internal, Message: err.Error(), Err: err}
	}
	ru.r.log.Warn("remote run failed", "thread", ru.th.ID, "code", string(ce.Code), "error", ce.Message)
	ru.emit(convo.Event{Type: convo.EventError, Err: ce})
	ru.result.ThreadID = ru.th.ID
	return ru.result, ce
}

// handle takes one of the run's messages; done is true when the run is over.
func (ru *run) handle(in Inbound) (done bool, err error) {
	if in.Type != TypeApplyAction && ru.held != nil {
		// The answer goes on without a change to apply (yet): the graph's other
		// readers (a new proposal shown in full) must not wait on the registration.
		ru.held.Release()
	}
	if in.Type == TypeApplyAction {
		if ru.decision == nil || !ru.decision.Approved || ru.decided {
			ru.r.log.Warn("ai:apply_action outside an approval: ignored", "thread", ru.th.ID)
			return false, nil
		}
		if err := ru.recordDecision(&in.Apply); err != nil {
			return true, err
		}
		return ru.stopped, nil
	}
	if ru.decision != nil && !ru.decided && in.Type != TypeError {
		// The continued answer begins: a decision that needed no apply_action.
		if err := ru.recordDecision(nil); err != nil {
			return true, err
		}
		if ru.stopped {
			return true, nil
		}
	}
	switch in.Type {
	case TypeToken:
		return false, ru.token(in.Token)
	case TypeToolStart:
		return false, ru.toolStart(in.ToolCallID, in.ToolName)
	case TypeToolResult:
		return false, ru.toolResult(in.ToolCallID, in.Result)
	case TypeUsage:
		ru.addUsage(in.Usage)
		return false, nil
	case TypeToolLimit:
		// Its numbers come again in the fullText of the ai:complete that follows
		// (the web client reads them there too): the run ends on that one.
		return false, nil
	case TypeComplete:
		return true, ru.complete(in)
	case TypeError:
		ru.keepCreated()
		if done, err := ru.earlierApproval(in); done {
			return true, err
		}
		return true, serverError(in)
	}
	return false, nil
}

// earlierApproval answers an approval the server no longer waits on ("No pending
// action…") while this copy still shows the proposal pending: an earlier approve
// reached the server and was cut before it recorded what became of the change.
// The live graph tells: a change that is in it is recorded as applied (said so,
// and not applied again); one that is not is recorded as not applied, saying why.
// done is false when the graph cannot tell (a creation, whose keys the server
// chose): the server's error is then said as it is.
func (ru *run) earlierApproval(in Inbound) (done bool, err error) {
	p, d := ru.pending, ru.decision
	if p == nil || d == nil || !d.Approved || ru.decided || ru.r.src == nil || !strings.HasPrefix(in.Error, "No pending action") {
		return false, nil
	}
	if c := datasource.CreatedKeys(p.Action); len(c.Nodes)+len(c.Edges) > 0 || creates(p.Action) {
		return false, nil
	}
	landed, lerr := datasource.Landed(ru.ctx, ru.r.src, ru.th.GraphKey, p.Action)
	if lerr != nil {
		ru.r.log.Warn("could not read the graph to tell whether an earlier approval landed", "thread", ru.th.ID, "error", lerr.Error())
		return false, nil
	}
	ru.decided = true
	if landed {
		ru.emit(convo.Event{Type: convo.EventNote, Text: fmt.Sprintf(
			"proposal %s had been approved by an earlier approve that was cut before it recorded it, and the graph holds the change: it is recorded as applied now, and was not applied again", p.ID)})
		return true, ru.decide(p, *d, &datasource.ApplyResult{Applied: true, Note: "applied by an earlier approve"}, "it was applied by an earlier approve (the graph holds it)")
	}
	why := "the server no longer waits on it (an earlier approve reached it, or it was decided in the web client) and the graph does not hold the change: it was not applied — ask for it again if you still want it"
	if err := ru.decide(p, *d, &datasource.ApplyResult{}, why); err != nil {
		return true, err
	}
	return true, &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf("proposal %s was not applied: %s", p.ID, why)}
}

// creates reports whether a runs a creation whose keys the server chooses.
func creates(a datasource.Action) bool {
	switch a.Type {
	case datasource.CreateNodeAction, datasource.CreateEdgeAction, datasource.CreateNodeWithEdgesAction, datasource.ConfigureNodeTypeAction, datasource.CreateGraphAction:
		return true
	case datasource.BatchAction:
		if a.Batch != nil {
			for _, s := range a.Batch.Actions {
				if creates(s) {
					return true
				}
			}
		}
	}
	return false
}

// addUsage counts one model call's tokens: on the message being received (the
// store adds it to the thread's totals) and as a usage event.
func (ru *run) addUsage(u Usage) {
	cu := convo.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.Cost != nil {
		cu.CostUSD = *u.Cost
	}
	ru.usage = ru.usage.Add(cu)
	ru.result.Usage = ru.usage
	ru.open()
	ru.cur.Usage = ru.cur.Usage.Add(cu)
	ru.emit(convo.Event{Type: convo.EventUsage, Usage: cu})
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
	if max := ru.r.limits.MaxAnswerBytes; max > 0 && ru.text.Len()+len(t) > max {
		return fault.Limit("the server's answer", "max_answer_bytes", max)
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

// localCallID is the thread's id of the server's tool call serverID: the real
// server numbers calls per model call (call_<time>_0), so the same id comes back in
// later rounds and turns, and the thread store keys tool calls by id.
func (ru *run) localCallID(serverID string, fresh bool) string {
	id := serverID + "@" + ru.runTag
	if st, ok := ru.started[serverID]; ok {
		if !fresh {
			return st.local
		}
		return fmt.Sprintf("%s.%d", id, st.n+1)
	}
	return id
}

func (ru *run) toolStart(serverID, name string) error {
	id := ru.localCallID(serverID, true)
	if prev, ok := ru.started[serverID]; ok && ru.cur != nil && hasCall(ru.cur.ToolCalls, prev.local) {
		// The same server id in a new round: the previous round's message is done.
		if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
			return err
		}
	}
	if len(ru.started) >= ru.maxCalls() {
		return fault.LimitSum("the server's tool calls in one run", fmt.Sprint(ru.maxCalls()), "10 rounds × max_tool_calls")
	}
	ru.open()
	tc := convo.ToolCall{ID: id, Name: name}
	if !hasCall(ru.cur.ToolCalls, id) {
		ru.cur.ToolCalls = append(ru.cur.ToolCalls, tc)
	}
	ru.cur.Content = ru.text.String()
	if err := ru.r.store.SaveMessage(ru.ctx, ru.cur); err != nil {
		return err
	}
	n := 0
	if prev, ok := ru.started[serverID]; ok {
		n = prev.n + 1
	}
	ru.started[serverID] = toolStart{name: name, at: time.Now(), local: id, n: n}
	ru.streaming = false
	ru.emit(convo.Event{Type: convo.EventStatus, State: convo.StateTool})
	ru.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
	return nil
}

func (ru *run) toolResult(serverID, result string) error {
	st, ok := ru.started[serverID]
	if !ok {
		// A result for a call never announced: announce it, so the copy stays whole.
		if err := ru.toolStart(serverID, "tool"); err != nil {
			return err
		}
		st = ru.started[serverID]
	}
	if max := ru.r.limits.MaxToolResultBytes; max > 0 && len(result) > max {
		return fault.Limit("a tool result from the server", "max_tool_result_bytes", max)
	}
	id := st.local
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

// complete ends the run: an answer, a proposal the server's assistant waits on, or
// the tool-round limit.
func (ru *run) complete(in Inbound) error {
	if ru.rem.ID != in.ThreadID {
		ru.rem.ID = in.ThreadID
		if err := ru.r.store.SetRemote(ru.ctx, ru.th.ID, ru.rem); err != nil {
			return err
		}
	}
	if n, ok := ParseToolLimit(in.FullText); ok {
		return ru.toolLimit(n)
	}
	it, isInterrupt, err := ParseInterrupt(in.FullText)
	if err != nil {
		return &fault.Error{Code: fault.Internal, Message: err.Error() + " — the server may run another version of Nodius", Err: err}
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
		if max := ru.r.limits.MaxAnswerBytes; max > 0 && len(in.FullText) > max {
			return fault.Limit("the server's answer", "max_answer_bytes", max)
		}
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

// toolLimit ends the run at the tool-round limit: the thread waits for the choice
// (approve: more rounds; reject: an answer now, without tools). Its JSON is never
// shown as the answer.
func (ru *run) toolLimit(n ToolLimitNotice) error {
	if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
		return err
	}
	tl := &convo.ToolLimit{RoundsUsed: n.RoundsUsed, MaxExtended: n.MaxExtended}
	ru.result.ToolLimit = tl
	ru.r.log.Info("remote tool limit", "thread", ru.th.ID, "rounds", tl.RoundsUsed, "max", tl.MaxExtended)
	ru.emit(convo.Event{Type: convo.EventToolLimit, ThreadID: ru.th.ID, ToolLimit: tl})
	return nil
}

// propose records the proposal the run stopped at and emits it.
func (ru *run) propose(it Interrupt) error {
	local := ru.localCallID(it.ToolCall.ID, false)
	if _, seen := ru.started[it.ToolCall.ID]; !seen {
		local = ru.localCallID(it.ToolCall.ID, true)
	}
	if ru.cur != nil && len(ru.cur.ToolCalls) > 0 && !hasCall(ru.cur.ToolCalls, local) {
		// The proposal is another model call than the tools before it.
		if err := ru.closeCur(ru.ctx, convo.Complete); err != nil {
			return err
		}
	}
	ru.open()
	tc := convo.ToolCall{ID: local, Name: it.ToolCall.Name, Arguments: it.ToolCall.Args}
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

// recordDecision records the decision the server took, with what became of an
// approved change: applied here through the Applier from the server's
// ai:apply_action (apply), a node type applied here (configure_node_type), or
// not applied. A change not applied in full ends the run here: the continued
// answer would tell the model's version of it.
func (ru *run) recordDecision(apply *nodiusapi.ApplyAction) error {
	ru.decided = true
	d := *ru.decision
	p := ru.pending
	if d.AlwaysForThread && d.Approved && p != nil {
		types := append(actionTypes(ru.th.AutoApprove), string(p.Action.Type))
		if err := ru.r.store.SetAutoApprove(ru.ctx, ru.th.ID, types); err != nil {
			return err
		}
	}
	if !d.Approved {
		if p == nil {
			return nil
		}
		return ru.decide(p, d, nil, "")
	}
	if p == nil && apply == nil && ru.creation == nil {
		return nil // a tool-limit choice, or a web client's proposal the server converted to nothing
	}
	res, summary := ru.apply(p, apply)
	if !res.Applied && ru.creation == nil {
		// (A refused creation was sent as a rejection that says why: the continued
		// answer tells it truly.)
		ru.stopped = true
	}
	if p == nil {
		// A proposal made in the web client: no local copy to decide, so the outcome
		// is kept as a note of the thread, and reported.
		word := "was applied: "
		if !res.Applied {
			word = "was not applied: "
		}
		note := &convo.Message{ThreadID: ru.th.ID, Role: convo.System, Content: "nodius-ai: the change approved from the terminal " + word + summary,
			Status: convo.Complete, CreatedAt: ru.r.now()}
		if err := ru.r.store.SaveMessage(ru.ctx, note); err != nil {
			return err
		}
		dec := convo.Proposal{ThreadID: ru.th.ID, Decision: convo.Approved, Result: res, DecidedAt: ru.r.now()}
		if c := ru.creation; c != nil {
			g := c.graph
			dec.Action = datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &g}
		}
		if !res.Applied {
			dec.Outcome, dec.ApplyError = convo.NotApplied, summary
		} else {
			dec.Outcome = convo.Applied
		}
		ru.result.Decided = &dec
		ru.emit(convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{Name: "apply_action"}, Result: note.Content})
		return nil
	}
	return ru.decide(p, d, res, summary)
}

// apply carries out an approved proposal's change and says, in words fit for the
// person who approved it, what was applied (res.Applied) or why it was not, and
// what was applied before a step was refused.
func (ru *run) apply(p *convo.Proposal, a *nodiusapi.ApplyAction) (*datasource.ApplyResult, string) {
	if a == nil {
		switch {
		case ru.creation != nil:
			return ru.creation.result()
		case p != nil && p.Action.Type == datasource.ConfigureNodeTypeAction:
			return ru.applyNodeType(p) // nodetype.go
		case p != nil && p.Action.Type == datasource.CreateGraphAction:
			return &datasource.ApplyResult{}, "the server leaves creating a graph to its web client — create it there"
		}
		return &datasource.ApplyResult{}, "the server sent no change to apply (no ai:apply_action), so nothing changed"
	}
	if a.Empty() {
		return &datasource.ApplyResult{Applied: true, Note: "nothing to change"}, "the server's change was empty"
	}
	if ru.approved == nil {
		return &datasource.ApplyResult{}, "nothing was applied: the change the server sent cannot be checked against the proposal (it was not seen here, and the server's thread does not show it) — apply it from the web client"
	}
	if err := checkApply(*ru.approved, ru.th.GraphKey, *a); err != nil {
		ru.r.log.Warn("remote apply_action beyond the proposal", "thread", ru.th.ID, "reason", err.Error())
		return &datasource.ApplyResult{}, "nothing was applied: the server sent more than the approved proposal (" + termtext.Strip(err.Error()) + ")"
	}
	var rep nodiusapi.ApplyReport
	var err error
	switch {
	case ru.held != nil:
		rep, err = ru.held.Apply(ru.ctx, *a)
		ru.held.Release() // the continued answer may read the graph
	case ru.r.applier != nil:
		rep, err = ru.r.applier.ApplyServerAction(ru.ctx, ru.th.GraphKey, *a)
	default:
		return &datasource.ApplyResult{}, "this terminal has no editing connection to the server's graph, so nothing changed — apply it from the web client"
	}
	if err == nil && rep.Complete() {
		done := doneText(rep, a)
		if rep.SaveNote != "" {
			done += "; " + rep.SaveNote
		} else if rep.Saved {
			done += "; saved"
		}
		return &datasource.ApplyResult{Applied: true, Created: datasource.Created{Nodes: rep.NodesCreated, Edges: rep.EdgesCreated}}, done
	}
	why := rep.Reason
	if why == "" && err != nil {
		why = err.Error()
	}
	if why == "" {
		why = "no reason given"
	}
	step := rep.Failed
	if step == "" {
		step = "the apply"
	}
	msg := fmt.Sprintf("%s failed (%s)", step, why)
	if done := doneText(rep, a); done != "nothing" {
		msg += "; applied before it: " + done
	} else {
		msg += "; nothing was applied"
	}
	ru.r.log.Warn("remote apply failed", "thread", ru.th.ID, "step", step, "reason", why)
	return &datasource.ApplyResult{Created: datasource.Created{Nodes: rep.NodesCreated, Edges: rep.EdgesCreated}}, msg
}

// doneText lists what a report says was applied.
func doneText(rep nodiusapi.ApplyReport, a *nodiusapi.ApplyAction) string {
	var parts []string
	if rep.Instructions > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d instruction(s)", rep.Instructions, len(a.Instructions)))
	}
	list := func(what string, keys []string) {
		if len(keys) > 0 {
			parts = append(parts, what+" "+strings.Join(keys, ", "))
		}
	}
	list("nodes created:", rep.NodesCreated)
	list("edges created:", rep.EdgesCreated)
	list("nodes deleted:", rep.NodesDeleted)
	list("edges deleted:", rep.EdgesDeleted)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// decide records the decision on p, with the outcome of an approval (res, said in
// summary), as the tool result that carries it, and emits it.
func (ru *run) decide(p *convo.Proposal, d convo.Decision, res *datasource.ApplyResult, summary string) error {
	out := map[string]any{}
	if d.Approved {
		p.Decision = convo.Approved
		p.Result = res
		if res != nil && res.Applied {
			p.Outcome = convo.Applied
			out["status"], out["message"] = "approved", "The user approved the action; it was applied: "+summary+"."
		} else {
			p.Outcome, p.ApplyError = convo.NotApplied, summary
			out["status"], out["message"] = "approved_not_applied", "The user approved the action, but it was not applied: "+summary+"."
		}
	} else {
		p.Decision = convo.Rejected
		out["status"], out["message"] = "rejected", "The user rejected the action; it was not applied."
	}
	if d.Feedback != "" {
		out["feedback"] = d.Feedback
	}
	if ru.creation != nil && res != nil && res.Note != "" {
		out["note"] = res.Note // what the person is told: the new graph's key
	}
	p.Feedback = d.Feedback
	p.DecidedAt = ru.r.now()
	content, _ := json.Marshal(out)
	m := &convo.Message{ThreadID: ru.th.ID, Role: convo.Tool, ToolCallID: p.ToolCallID, Name: p.Tool,
		Content: string(content), Status: convo.Complete, CreatedAt: ru.r.now()}
	if err := ru.r.store.DecideProposal(ru.ctx, *p, m); err != nil {
		return err
	}
	ru.result.Decided = p
	ru.emit(convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: p.ToolCallID, Name: p.Tool}, Result: string(content)})
	return nil
}
