package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// An undo is taken like an approval, so that it is applied exactly once and a kill
// at any point never half-reverses:
//
//  0. when a proposal is applied, what reversing it needs is recorded, tied to the
//     apply's operation: planned before the apply (recordReversal), then replaced
//     by what the apply itself saw it replace (recordApplied);
//  1. check: the reversal is run on a copy of the graph as it is now; a step whose
//     part of the graph changed since refuses the undo (unless forced);
//  2. claim: in one transaction the change goes from "applied" to "being undone by
//     operation X of process P", with the steps it will reverse;
//  3. apply the steps to the source (a file: all at once under its lock);
//  4. record "undone" with the message that tells the model, in one transaction.
//
// A claim whose process is dead is reconciled by the next undo of the thread: when
// the reversal is in the graph it is recorded as undone, else the claim is released
// (on a source changed step by step, a partly applied undo is finished).

// UndoStore is what undo needs of the thread store (threads.Store implements it).
type UndoStore interface {
	SaveReversal(ctx context.Context, threadID, proposalID, opID string, reversal json.RawMessage) error
	LastUndoable(ctx context.Context, threadID string) (*convo.Undoable, error)
	UndoClaims(ctx context.Context, threadID string) ([]convo.Undoable, error)
	ClaimUndo(ctx context.Context, threadID, proposalID, opID, undoOp, claimer string, plan json.RawMessage) error
	ReleaseUndo(ctx context.Context, threadID, proposalID, undoOp string) error
	TakeOverUndo(ctx context.Context, threadID, proposalID, undoOp, oldClaimer, newClaimer string) (bool, error)
	FinishUndo(ctx context.Context, threadID, proposalID, undoOp string, left []string, m *convo.Message) error
}

// UndoRequest asks to undo the last applied change of a thread not yet undone.
type UndoRequest struct {
	ThreadID string
	DryRun   bool // say what would be reverted, change nothing
	Force    bool // reverse what still matches, leave (and list) what changed since
}

// UndoResult says what an undo did (or, dry, would do).
type UndoResult struct {
	ThreadID   string
	GraphKey   string
	ProposalID string
	Change     string // the change undone, in a line
	AppliedAt  time.Time
	Reversed   []string // steps reversed
	Already    []string // steps found already reversed
	Left       []string // forced: steps left, with why
	Drift      []string // what changed in the graph since the change
	DryRun     bool
	UndoneAt   time.Time
	// Finished: this is an undo an earlier process began and was stopped before it
	// recorded it (killed, the machine off); this call finished and recorded it, and
	// did nothing more — run undo again to walk back further.
	Finished bool
}

// recordReversal keeps what undoing a claimed approval needs, planned on the graph
// as it is before the apply: it stands if the process dies between the apply and
// recordApplied, which replaces it with what the apply saw. A failure to work it out
// does not stop the approval.
func (r *run) recordReversal(p *convo.Proposal, opID string, planned datasource.Action) {
	us, ok := r.a.opt.Store.(UndoStore)
	if !ok {
		return
	}
	rev, err := undo.Plan(r.ctx, r.a.opt.Source, r.th.GraphKey, planned)
	if err == nil {
		err = saveReversal(r.ctx, us, r.th.ID, p.ID, opID, rev)
	}
	if err != nil {
		r.a.log.Warn("undo record", "thread", r.th.ID, "proposal", p.ID, "error", err.Error())
	}
}

// recordApplied keeps the reversal the apply recorded, from the graph it changed
// (under the file's lock, in the store's working copy, read right before each
// write): a change another writer made after the plan and before the apply is then
// not reverted by undo. It runs before the approval is recorded, retrying a little
// while the database is busy; if it fails, the planned reversal stands (and undo's
// own check refuses a step whose part of the graph does not match).
func (r *run) recordApplied(p *convo.Proposal, opID string, rec *undo.Recorder) {
	us, ok := r.a.opt.Store.(UndoStore)
	if !ok {
		return
	}
	rev, err := rec.Reversal()
	if err == nil {
		ctx := context.WithoutCancel(r.ctx) // the graph changed: the record must follow
		for attempt := 0; attempt < 4; attempt++ {
			if err = saveReversal(ctx, us, r.th.ID, p.ID, opID, rev); err == nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 250 * time.Millisecond)
		}
	}
	if err != nil {
		r.a.log.Warn("undo record (as applied)", "thread", r.th.ID, "proposal", p.ID, "error", err.Error())
	}
}

func saveReversal(ctx context.Context, us UndoStore, threadID, proposalID, opID string, rev undo.Reversal) error {
	b, err := json.Marshal(rev)
	if err != nil {
		return err
	}
	return us.SaveReversal(ctx, threadID, proposalID, opID, b)
}

// Undo reverses the thread's last applied change that is not yet undone, through
// the source in use (which must be the thread's, as for an approval). Nothing left
// to undo, or a decision that cannot be taken (a viewer, another source, an undo
// already running), is a fault.Decision error; a graph that changed since, a
// change recorded without its reversal, or a source that fails, is an error with
// nothing changed.
func (a *Agent) Undo(ctx context.Context, req UndoRequest) (UndoResult, error) {
	us, ok := a.opt.Store.(UndoStore)
	if !ok {
		return UndoResult{}, errors.New("this threads store cannot undo")
	}
	th, err := a.opt.Store.Thread(ctx, req.ThreadID)
	if err != nil {
		return UndoResult{}, err
	}
	res := UndoResult{ThreadID: th.ID, GraphKey: th.GraphKey, DryRun: req.DryRun}
	if a.opt.Role == "viewer" && !req.DryRun {
		return res, decisionError("your role is viewer, which cannot change graphs; undo with --role editor")
	}
	if th.Source != "" && a.opt.SourceSpec != "" && th.Source != a.opt.SourceSpec && !a.opt.SourceChosen {
		return res, decisionError("thread %s works on %s, but the source in effect is %s; pass --source to choose one",
			th.ID, th.Source, a.opt.SourceSpec)
	}
	finished, err := a.reconcileUndos(ctx, us, th)
	if err != nil {
		return res, err
	}
	if len(finished) > 0 {
		// The undo asked for is the one an earlier call began: it is done now. Going on
		// to the change before it would walk back one step further than asked.
		last := finished[len(finished)-1]
		last.Finished, last.DryRun = true, req.DryRun
		return last, nil
	}
	u, err := us.LastUndoable(ctx, th.ID)
	if err != nil {
		return res, err
	}
	if u == nil {
		return res, decisionError("thread %s has no applied change left to undo", th.ID)
	}
	res.ProposalID, res.Change, res.AppliedAt = u.ProposalID, datasource.Describe(u.Action), u.AppliedAt
	if u.State == convo.UndoClaimed {
		return res, decisionError("the change of proposal %s (%s) is being undone by another process (%s); try again when it is done",
			u.ProposalID, res.Change, u.ClaimedBy)
	}
	if u.Reversal == nil {
		return res, &fault.Error{Code: fault.Internal, Message: fmt.Sprintf(
			"the change of proposal %s (%s) was applied before nodius-ai recorded what undoing needs; it cannot be undone — nothing was changed",
			u.ProposalID, res.Change)}
	}
	var rev undo.Reversal
	if err := json.Unmarshal(u.Reversal, &rev); err != nil {
		return res, fmt.Errorf("proposal %s: stored reversal: %w", u.ProposalID, err)
	}
	if err := undo.Belongs(rev, u.Action); err != nil {
		// A record from outside (an imported thread, a database edited by hand) that
		// names other nodes than the change's: undo would remove or overwrite them.
		return res, &fault.Error{Code: fault.Internal, Err: err, Message: fmt.Sprintf(
			"the undo record of proposal %s does not match its change (%s): %v; nothing was changed", u.ProposalID, res.Change, err)}
	}
	// Home mode's changes are new graphs: undo.Check asks the source about each.
	if _, err := a.opt.Source.Graph(ctx, th.GraphKey); err != nil && !tools.IsHome(th.GraphKey) {
		if errors.Is(err, datasource.ErrNotFound) {
			return res, &fault.Error{Code: fault.Config, Err: err, Message: fmt.Sprintf(
				"graph %s is not in the source in use; undo with the thread's source (--source)", th.GraphKey)}
		}
		return res, err
	}

	// A source undo cannot change is said before the graph is compared: a plan
	// listing what is "already as before" on it would mean nothing. Home mode's
	// changes are new graphs, which undo.Check asks the source about itself (and
	// says where to delete one it cannot).
	if !req.DryRun && !tools.IsHome(th.GraphKey) {
		if _, ok := a.opt.Source.(datasource.WorkingCopyChanger); !ok {
			if _, ok := a.opt.Source.(datasource.Mutable); !ok {
				return res, &fault.Error{Code: fault.Config, Err: undo.ErrNotUndoable, Message: fmt.Sprintf(
					"the source in use cannot be changed by undo; nothing was changed (graph %s)", th.GraphKey)}
			}
		}
	}

	rep, err := undo.Check(ctx, a.opt.Source, th.GraphKey, rev, req.Force)
	res.Reversed, res.Already, res.Left, res.Drift = rep.Reversed, rep.Already, rep.Left, rep.Drift
	if d, ok := undo.IsDrift(err); ok {
		res.Left = nil
		return res, &fault.Error{Code: fault.Internal, Err: err, Message: fmt.Sprintf(
			"cannot undo %s: %s; nothing was changed — look at the graph, or pass --force to reverse only what still matches",
			res.Change, strings.Join(d.Drift, "; "))}
	}
	if err != nil {
		return res, err
	}
	if !req.Force {
		res.Left = nil
	}
	if req.DryRun {
		return res, nil
	}

	undoOp := newOpID(a.opt.Now())
	plan, _ := json.Marshal(rep.Plan)
	if err := us.ClaimUndo(ctx, th.ID, u.ProposalID, u.OpID, undoOp, a.claimer, plan); err != nil {
		if errors.Is(err, convo.ErrDecided) {
			return res, decisionError("%s; nothing was changed", strings.TrimSuffix(err.Error(), ": "+convo.ErrDecided.Error()))
		}
		return res, err
	}
	applied, err := undo.Apply(ctx, a.opt.Source, th.GraphKey, rep.Plan)
	if err != nil {
		// Nothing was reversed (or, on a source changed step by step, part, which
		// the next undo finishes): the change stays applied.
		if rerr := us.ReleaseUndo(context.WithoutCancel(ctx), th.ID, u.ProposalID, undoOp); rerr != nil {
			a.log.Error("release undo", "thread", th.ID, "proposal", u.ProposalID, "error", rerr.Error())
		}
		if d, ok := undo.IsDrift(err); ok {
			return res, &fault.Error{Code: fault.Internal, Err: err, Message: fmt.Sprintf(
				"cannot undo %s: the graph changed while undoing: %s; nothing was changed", res.Change, strings.Join(d.Drift, "; "))}
		}
		if what, fix, ok := fault.StorageRefusal(err); ok {
			return res, &fault.Error{Code: fault.Storage, Err: err, Message: fmt.Sprintf(
				"%s, so %s was not undone and is still recorded as applied; %s and run undo again", what, res.Change, fix)}
		}
		return res, &fault.Error{Code: fault.Internal, Err: err, Message: fmt.Sprintf(
			"undoing %s failed: %v — the change is still recorded as applied; fix that and run undo again", res.Change, err)}
	}
	a.opt.Retriever.Invalidate(th.GraphKey)
	res.Reversed = applied.Reversed
	res.Already = append(res.Already, applied.Already...)
	res.UndoneAt = a.opt.Now()
	if err := a.finishUndo(ctx, us, th, u, undoOp, res); err != nil {
		return res, err
	}
	return res, nil
}

// finishUndo records the undo with the message that tells the model, retrying a
// little while the database is busy: the graph changed, the record must follow (if
// it is lost, the next undo reconciles the claim).
func (a *Agent) finishUndo(ctx context.Context, us UndoStore, th convo.Thread, u *convo.Undoable, undoOp string, res UndoResult) error {
	m := &convo.Message{ThreadID: th.ID, Role: convo.System, Kind: convo.KindUndo, Status: convo.Complete,
		Content: UndoMessage(res), CreatedAt: res.UndoneAt}
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if err = us.FinishUndo(ctx, th.ID, u.ProposalID, undoOp, res.Left, m); err == nil || errors.Is(err, convo.ErrDecided) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	return err
}

// UndoMessage is what the model (and the transcript) is told of an undo.
func UndoMessage(res UndoResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user undid the change applied for proposal %s (%s). ", res.ProposalID, res.Change)
	if len(res.Left) == 0 {
		b.WriteString("The graph is back as it was before that change.")
	} else {
		b.WriteString("Only part of it was reversed, because the graph changed since; left as it is:")
		for _, l := range res.Left {
			b.WriteString("\n- " + l)
		}
	}
	if len(res.Reversed) > 0 {
		b.WriteString("\nReversed:")
		for _, s := range res.Reversed {
			b.WriteString("\n- " + s)
		}
	}
	return b.String()
}

// reconcileUndos settles the thread's undo claims left by dead processes: a reversal
// that is in the graph is recorded as undone, one that is not is released, and one
// partly made (a source changed step by step) is finished. It returns the undos it
// recorded.
func (a *Agent) reconcileUndos(ctx context.Context, us UndoStore, th convo.Thread) ([]UndoResult, error) {
	claims, err := us.UndoClaims(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	var finished []UndoResult
	for _, c := range claims {
		if c.ClaimedBy == a.claimer || (a.alive(c.ClaimedBy) && a.opt.Now().Sub(c.ClaimedAt) < claimStale) {
			continue
		}
		took, err := us.TakeOverUndo(ctx, th.ID, c.ProposalID, c.UndoOp, c.ClaimedBy, a.claimer)
		if err != nil {
			return nil, err
		}
		if !took {
			continue
		}
		var plan undo.Reversal
		if err := json.Unmarshal(c.Plan, &plan); err != nil {
			return nil, fmt.Errorf("proposal %s: stored undo plan: %w", c.ProposalID, err)
		}
		rep, err := undo.Check(ctx, a.opt.Source, th.GraphKey, plan, true)
		if err != nil {
			return nil, fmt.Errorf("checking whether the undo of proposal %s was applied: %w", c.ProposalID, err)
		}
		a.log.Info("reconcile undo", "thread", th.ID, "proposal", c.ProposalID, "op", c.UndoOp,
			"done", len(rep.Already), "todo", len(rep.Reversed))
		if len(rep.Already) == 0 && len(plan.Steps) > 0 {
			if err := us.ReleaseUndo(ctx, th.ID, c.ProposalID, c.UndoOp); err != nil {
				return nil, err
			}
			continue
		}
		res := UndoResult{ThreadID: th.ID, GraphKey: th.GraphKey, ProposalID: c.ProposalID,
			Change: datasource.Describe(c.Action), AppliedAt: c.AppliedAt, Reversed: rep.Already, UndoneAt: a.opt.Now()}
		if len(rep.Reversed) > 0 {
			done, err := undo.Apply(ctx, a.opt.Source, th.GraphKey, plan)
			if err != nil {
				return nil, fmt.Errorf("finishing the undo of proposal %s: %w", c.ProposalID, err)
			}
			res.Reversed = append(res.Reversed, done.Reversed...)
			res.Left = done.Left
		}
		a.opt.Retriever.Invalidate(th.GraphKey)
		if err := a.finishUndo(ctx, us, th, &c, c.UndoOp, res); err != nil {
			if errors.Is(err, convo.ErrDecided) {
				continue // another process recorded it first
			}
			return nil, err
		}
		finished = append(finished, res)
	}
	return finished, nil
}
