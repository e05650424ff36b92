package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
	"github.com/nodius/nodius-ai/internal/changetext"
	"github.com/nodius/nodius-ai/internal/fault"
)

// An approval is taken in three steps so that it is applied exactly once and never
// lost, whatever process dies when:
//
//  1. claim: in one transaction the proposal goes from pending to "approved,
//     claimed by operation X of process P", with the action as it will be applied
//     (every key it creates assigned from X). A second decider finds it taken.
//  2. apply the planned action to the source.
//  3. record the result with the tool message that tells the model.
//
// A claim whose process is dead is reconciled on the next open: if the planned
// action's effect is in the graph it is recorded as applied, else the proposal is
// pending again.

// claimStale is how old a claim of a live-looking process may get before another
// process reconciles it anyway (a process on another host, a reused pid).
const claimStale = 10 * time.Minute

// newOpID returns a fresh operation id: time and randomness, usable in a key.
func newOpID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(now.UnixMilli(), 10) + hex.EncodeToString(b[:])
}

// defaultClaimer names this process: host and pid.
func defaultClaimer() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// processAlive reports whether the process that made a claim may still be running:
// a claim from another host counts as alive (until it is stale).
func processAlive(claimer string) bool {
	host, pid, ok := strings.Cut(claimer, ":")
	if !ok {
		return false
	}
	if h, _ := os.Hostname(); h != host {
		return true
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return false
	}
	if n == os.Getpid() {
		return true
	}
	return pidAlive(n)
}

// decisionError is a decision that cannot be taken as asked (exit 2, nothing done).
func decisionError(format string, args ...any) *fault.Error {
	return &fault.Error{Code: fault.Decision, Message: fmt.Sprintf(format, args...)}
}

// reconcile settles the thread's claims left by dead processes.
func (r *run) reconcile() error {
	claims, err := r.a.opt.Store.Claims(r.ctx, r.th.ID)
	if err != nil {
		return err
	}
	for _, c := range claims {
		if c.ClaimedBy == r.a.claimer {
			continue // ours, in flight in this process
		}
		if r.a.alive(c.ClaimedBy) && r.a.opt.Now().Sub(c.ClaimedAt) < claimStale {
			continue
		}
		took, err := r.a.opt.Store.TakeOverClaim(r.ctx, r.th.ID, c.ProposalID, c.OpID, c.ClaimedBy, r.a.claimer)
		if err != nil {
			return err
		}
		if !took {
			continue // another process is reconciling it
		}
		landed, err := datasource.Landed(r.ctx, r.a.opt.Source, r.th.GraphKey, c.Planned)
		if err != nil {
			return fmt.Errorf("checking whether operation %s of proposal %s was applied: %w", c.OpID, c.ProposalID, err)
		}
		r.a.log.Info("reconcile", "thread", r.th.ID, "proposal", c.ProposalID, "op", c.OpID, "landed", landed)
		if !landed {
			if err := r.a.opt.Store.ReleaseClaim(r.ctx, r.th.ID, c.ProposalID, c.OpID); err != nil {
				return err
			}
			continue
		}
		p, err := r.a.opt.Store.Proposal(r.ctx, r.th.ID, c.ProposalID)
		if err != nil {
			return err
		}
		res := datasource.ApplyResult{Applied: true, Created: datasource.CreatedKeys(c.Planned)}
		p.OpID = c.OpID
		if err := r.record(&p, res, "", time.Now()); err != nil {
			return err
		}
		r.landed = append(r.landed, p)
	}
	return nil
}

// landedFor returns the proposal the decision d is about when reconcile just found
// it applied by an earlier approve that died before recording it (nil otherwise):
// the one d names, or, when d names none, the one reconciled while nothing else is
// pending.
func (r *run) landedFor(d convo.Decision) *convo.Proposal {
	for i := len(r.landed) - 1; i >= 0; i-- {
		p := &r.landed[i]
		if d.ProposalID == p.ID {
			return p
		}
		if d.ProposalID == "" {
			if pending, err := r.a.opt.Store.PendingProposal(r.ctx, r.th.ID); err == nil && pending == nil {
				return p
			}
			return nil
		}
	}
	return nil
}

// resumeLanded answers a decision retried after the approve that applied it was
// stopped before recording it: the change landed once and is recorded now; it is
// said so, never applied again, and the conversation goes on as after an approval.
func (r *run) resumeLanded(p *convo.Proposal, d convo.Decision) (Result, error) {
	if !d.Approved {
		return r.fail(decisionError("proposal %s in thread %s was approved and applied by an earlier approve that was stopped before it recorded it (recorded now); it cannot be rejected — undo it with: nodius-ai undo %s%s",
			p.ID, r.th.ID, r.th.ID, r.a.opt.CommandFlags))
	}
	r.emit(convo.Event{Type: convo.EventNote, Text: fmt.Sprintf(
		"proposal %s had been applied by an earlier approve that was stopped before it recorded it; it is recorded now, and was not applied again", p.ID)})
	r.result.Decided = p
	if err := r.loadHistory(false); err != nil {
		return r.fail(err)
	}
	return r.afterDecision(p, r.dropPendingBatchResults(p.ToolCallID))
}

// afterDecision goes on once proposal p is decided: the calls after it in the same
// batch (remaining), then the model's next turn (or, for an MCP client's thread,
// the end of the run).
func (r *run) afterDecision(p *convo.Proposal, remaining []convo.ToolCall) (Result, error) {
	if stop, err := r.runToolCalls(remaining); err != nil || stop {
		return r.result, err
	}
	if r.th.Provider == convo.ProviderMCP {
		return r.endExternal(p)
	}
	if r.a.opt.Provider == nil {
		return r.fail(r.a.noProvider())
	}
	return r.loop()
}

// checkDecision finds the pending proposal the decision is about and checks that it
// is the one the person saw.
func (r *run) checkDecision(d convo.Decision) (*convo.Proposal, error) {
	p, err := r.a.opt.Store.PendingProposal(r.ctx, r.th.ID)
	if err != nil {
		return nil, err
	}
	if p == nil {
		if d.ProposalID != "" {
			if old, err := r.a.opt.Store.Proposal(r.ctx, r.th.ID, d.ProposalID); err == nil && old.Decision != convo.Pending {
				return nil, decisionError("proposal %s in thread %s was already decided (%s); nothing was changed", old.ID, r.th.ID, old.State())
			}
		}
		return nil, decisionError("no proposal is waiting in thread %s", r.th.ID)
	}
	if p.Digest == "" {
		p.Digest = convo.ActionDigest(p.Action)
	}
	if d.ProposalID != "" && d.ProposalID != p.ID {
		return nil, decisionError("the proposal waiting in thread %s is now %s (%s), not %s that was shown; nothing was decided — look at it and decide again",
			r.th.ID, p.ID, datasource.Describe(p.Action), d.ProposalID)
	}
	if d.Digest != "" && d.Digest != p.Digest {
		return nil, decisionError("proposal %s in thread %s changed since it was shown (now: %s); nothing was decided — look at it and decide again",
			p.ID, r.th.ID, datasource.Describe(p.Action))
	}
	return p, nil
}

// mayApply checks, at the moment of applying, what may have changed since the
// proposal was made: the role, the policy and the source in effect now.
func (r *run) mayApply(p *convo.Proposal) error {
	if r.a.opt.Role == "viewer" {
		return decisionError("your role is viewer, which cannot approve graph edits; reject the proposal, or approve it with --role editor")
	}
	for _, t := range tools.ActionTypes(p.Action) {
		if r.a.opt.Policy[t] == config.PolicyDeny {
			return decisionError("%s is denied by the approval policy now; reject the proposal, or change the policy", t)
		}
	}
	if r.th.Source != "" && r.a.opt.SourceSpec != "" && r.th.Source != r.a.opt.SourceSpec && !r.a.opt.SourceChosen {
		return decisionError("thread %s works on %s, but the source in effect is %s; pass --source to choose one",
			r.th.ID, r.th.Source, r.a.opt.SourceSpec)
	}
	if tools.IsHome(r.th.GraphKey) {
		return nil // home mode opens no graph
	}
	if _, err := r.a.opt.Source.Graph(r.ctx, r.th.GraphKey); err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			return &fault.Error{Code: fault.Config, Err: err, Message: fmt.Sprintf(
				"graph %s is not in the source %s; decide with the thread's source (--source)", r.th.GraphKey, r.sourceName())}
		}
		return err
	}
	_, applier := r.a.opt.Source.(datasource.ActionApplier)
	_, mutable := r.a.opt.Source.(datasource.Mutable)
	if !applier && !mutable {
		return &fault.Error{Code: fault.Config, Err: datasource.ErrReadOnly, Message: fmt.Sprintf(
			"the source %s is read-only: nothing can be applied to it", r.sourceName())}
	}
	return nil
}

func (r *run) sourceName() string {
	if r.a.opt.SourceSpec != "" {
		return r.a.opt.SourceSpec
	}
	if d, ok := r.a.opt.Source.(datasource.Describer); ok {
		return d.Describe()
	}
	return "in use"
}

// toolCall finds the model's call of a proposal in the history.
func (r *run) toolCall(id string) (convo.ToolCall, bool) {
	for _, m := range r.history {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
	}
	return convo.ToolCall{}, false
}

// drift compares the stored action with what the model's call means on the graph as
// it is now. A refusal (the call and the stored action disagree) is an error; a graph
// that changed since the proposal was shown is a reason, for the model and the person.
func (r *run) drift(p *convo.Proposal) (reason string, err error) {
	tc, ok := r.toolCall(p.ToolCallID)
	if !ok {
		return "", decisionError("proposal %s has no matching tool call in thread %s; it cannot be approved — reject it", p.ID, r.th.ID)
	}
	if tc.Name != p.Tool {
		return "", decisionError("proposal %s says %s but the model called %s; it cannot be approved — reject it", p.ID, p.Tool, tc.Name)
	}
	now, _, perr := tools.ParseProposal(r.ctx, r.a.opt.Source, r.th.GraphKey, tc.Name, tc.Arguments)
	if perr != nil {
		var te *tools.Error
		if errors.As(perr, &te) {
			return "the graph changed since the proposal was shown: " + te.Msg, nil
		}
		return "", perr
	}
	if sameAction(now, p.Action) {
		return "", nil
	}
	if !sameAction(intent(now), intent(p.Action)) {
		return "", decisionError("proposal %s does not match the model's call (%s): the stored action is %q; it cannot be approved — reject it",
			p.ID, tc.Name, datasource.Describe(p.Action))
	}
	return "the graph changed since the proposal was shown: " + changetext.Difference(p.Action, now), nil
}

func sameAction(a, b datasource.Action) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// intent is the action without what is shown for information (the edges a deletion
// takes, the old values of updated fields, the edge a delete_edge removes, default
// handles), which the graph decides.
func intent(a datasource.Action) datasource.Action {
	switch {
	case a.Type == datasource.DeleteNodeAction && a.DeleteNode != nil:
		p := *a.DeleteNode
		p.RemovedEdges = nil
		a.DeleteNode = &p
	case a.Type == datasource.UpdateNodeAction && a.UpdateNode != nil:
		p := *a.UpdateNode
		p.Before = nil
		a.UpdateNode = &p
	case a.Type == datasource.DeleteEdgeAction && a.DeleteEdge != nil:
		p := *a.DeleteEdge
		p.Edge = nil
		a.DeleteEdge = &p
	case a.Type == datasource.CreateNodeAction && a.CreateNode != nil:
		p := *a.CreateNode
		p.Handles, p.Size = nil, nil
		a.CreateNode = &p
	case a.Type == datasource.ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
		p := *a.ConfigureNodeType
		p.Before, p.Nodes, p.CodeDiffs = nil, nil, nil
		a.ConfigureNodeType = &p
	case a.Type == datasource.BatchAction && a.Batch != nil:
		steps := make([]datasource.Action, len(a.Batch.Actions))
		for i, s := range a.Batch.Actions {
			steps[i] = intent(s)
		}
		a.Batch = &datasource.BatchPayload{Actions: steps}
	}
	return a
}

// approve claims, applies and records an approved proposal. A failure the person must
// fix (the source cannot be written, a lock, the disk, the network) releases the
// claim: the proposal stays pending and the error is returned. A change the graph no
// longer allows is recorded as approved but not applied, and the model is told.
func (r *run) approve(p *convo.Proposal, feedback string, reason string) error {
	started := time.Now()
	opID := newOpID(r.a.opt.Now())
	planned := datasource.AssignKeys(p.Action, opID)
	if err := r.a.opt.Store.ClaimProposal(r.ctx, r.th.ID, p.ID, opID, r.a.claimer, feedback, planned); err != nil {
		if isDecided(err) {
			return decisionError("%s; nothing was changed", decidedWhat(err))
		}
		return err
	}
	p.OpID, p.Feedback = opID, feedback
	rec := undo.NewRecorder()
	if reason == "" {
		r.recordReversal(p, opID, planned)
	}
	var res datasource.ApplyResult
	applyErr := ""
	if reason != "" {
		applyErr = reason
	} else {
		var err error
		// What the person was shown (the edges a deletion takes, the old values of
		// the fields an update changes) is checked again in the same step as the
		// change: under the graph file's lock, inside the store's working copy. The
		// drift check before the claim cannot see a writer that comes after it.
		// The recorder notes, in that same step, what each change replaces: the
		// reversal undo keeps (recordApplied).
		res, err = datasource.Apply(r.ctx, r.a.opt.Source, r.th.GraphKey, planned,
			datasource.Expect(p.Action), datasource.Record(rec))
		switch {
		case err == nil:
			r.recordApplied(p, opID, rec)
			if len(res.Created.Nodes)+len(res.Created.Edges) == 0 {
				res.Created = datasource.CreatedKeys(planned)
			}
			res.Applied = true
		case datasource.IsConflict(err):
			applyErr = err.Error()
		default:
			// Nothing was applied (the source refused or could not be reached): the
			// proposal stays pending for the person to decide again.
			if rerr := r.a.opt.Store.ReleaseClaim(context.WithoutCancel(r.ctx), r.th.ID, p.ID, opID); rerr != nil {
				r.a.log.Error("release claim", "thread", r.th.ID, "proposal", p.ID, "error", rerr.Error())
			}
			return applyFailure(err)
		}
		r.a.opt.Retriever.Invalidate(r.th.GraphKey)
	}
	if applyErr != "" {
		res = datasource.ApplyResult{Applied: false}
	}
	return r.record(p, res, applyErr, started)
}

// applyFailure is the error of an apply that did not run, said for the person.
func applyFailure(err error) error {
	if ce, ok := fault.As(err); ok {
		return ce
	}
	if errors.Is(err, datasource.ErrReadOnly) {
		return &fault.Error{Code: fault.Config, Err: err, Message: "the source is read-only: nothing was applied and the proposal is still pending"}
	}
	if errors.Is(err, datasource.ErrLocked) {
		return &fault.Error{Code: fault.Timeout, Err: err, Message: fmt.Sprintf(
			"%v, so nothing was applied and the proposal is still pending; approve again when the other writer is done", err)}
	}
	if what, fix, ok := fault.StorageRefusal(err); ok {
		return &fault.Error{Code: fault.Storage, Err: err, Message: what +
			", so nothing was applied and the proposal is still pending; " + fix + " and approve again"}
	}
	return &fault.Error{Code: fault.Internal, Err: err, Message: fmt.Sprintf(
		"applying the proposal failed, nothing was applied and it is still pending: %v — fix that and approve again", err)}
}

func isDecided(err error) bool { return errors.Is(err, convo.ErrDecided) }

// record writes the outcome of a claimed approval with the tool result that tells the
// model, retrying a little while the database is busy: once the graph changed, the
// record must not be lost (if it is, the claim is reconciled on the next open).
func (r *run) record(p *convo.Proposal, res datasource.ApplyResult, applyErr string, started time.Time) error {
	p.Decision = convo.Approved
	p.DecidedAt = r.a.opt.Now()
	p.Result = &res
	p.ApplyError = applyErr
	p.Outcome = convo.Applied
	out := map[string]any{}
	if applyErr != "" {
		p.Outcome = convo.NotApplied
		out["status"] = "not_applied"
		out["message"] = "The user approved the action, but it was not applied: " + applyErr
	} else {
		out["status"] = "approved"
		out["message"] = "The user approved the action and it was applied."
		out["created"] = res.Created
		if res.Note != "" {
			out["note"] = res.Note
		}
		if res.Graph != nil {
			out["graph"] = res.Graph
		}
	}
	if p.Feedback != "" {
		out["feedback"] = p.Feedback
	}
	return r.finish(p, out, applyErr, started)
}

// finish stores the decision and its tool message, then tells the listener.
func (r *run) finish(p *convo.Proposal, out map[string]any, errText string, started time.Time) error {
	content, _ := json.Marshal(out)
	m := &convo.Message{ThreadID: r.th.ID, Role: convo.Tool, ToolCallID: p.ToolCallID, Name: p.Tool,
		Content: string(content), Status: convo.Complete, CreatedAt: r.a.opt.Now()}
	ctx := context.WithoutCancel(r.ctx) // the graph may have changed: the record must follow
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if err = r.a.opt.Store.DecideProposal(ctx, *p, m); err == nil || isDecided(err) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	if err != nil {
		if isDecided(err) {
			return decisionError("%s; nothing was changed", decidedWhat(err))
		}
		return err
	}
	r.history = append(r.history, *m)
	r.result.Decided = p
	tc := convo.ToolCall{ID: p.ToolCallID, Name: p.Tool}
	r.emit(convo.Event{Type: convo.EventToolResult, ToolCall: tc, Result: string(content), ToolErr: errText,
		Duration: time.Since(started), Proposal: p})
	return nil
}

// reject records a rejection (only of a proposal still pending).
func (r *run) reject(p *convo.Proposal, feedback string) error {
	started := time.Now()
	p.Decision = convo.Rejected
	p.Feedback = feedback
	p.DecidedAt = r.a.opt.Now()
	out := map[string]any{"status": "rejected", "message": "The user rejected the action; it was not applied."}
	if feedback != "" {
		out["feedback"] = feedback
	}
	return r.finish(p, out, "", started)
}

// autoApprove records "yes to this kind for this thread" for the types of the
// proposal decided.
func (r *run) autoApprove(a datasource.Action) error {
	for _, t := range tools.ActionTypes(a) {
		if !slices.Contains(r.th.AutoApprove, t) {
			r.th.AutoApprove = append(r.th.AutoApprove, t)
		}
	}
	types := make([]string, len(r.th.AutoApprove))
	for i, t := range r.th.AutoApprove {
		types[i] = string(t)
	}
	return r.a.opt.Store.SetAutoApprove(r.ctx, r.th.ID, types)
}

// decidedWhat says what became of a proposal someone else decided first.
func decidedWhat(err error) string {
	if de, ok := errors.AsType[*convo.DecidedError](err); ok {
		return de.What
	}
	return "it was already decided"
}
