package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// UndoRecord is what a thread keeps to undo one applied change, and where that undo
// stands: threads show --format json prints it and an export carries it, so that an
// imported thread can still walk its changes back (and does not offer again what
// was undone).
type UndoRecord struct {
	ProposalID string `json:"proposal_id"`
	// OpID is the apply's operation the reversal belongs to (a proposal applied
	// again after a released claim gets a new one).
	OpID string `json:"op_id"`
	// Applied is the action as it was applied, keys assigned (absent when it was
	// not kept).
	Applied *datasource.Action `json:"applied_action,omitempty"`
	// Reversal is the recorded steps (package datasource/undo).
	Reversal  json.RawMessage `json:"reversal"`
	State     convo.UndoState `json:"state,omitempty"`
	UndoOp    string          `json:"undo_op,omitempty"`
	ClaimedBy string          `json:"claimed_by,omitempty"`
	ClaimedAt time.Time       `json:"claimed_at,omitzero"`
	Plan      json.RawMessage `json:"plan,omitempty"` // the steps a claimed undo reverses
	UndoneAt  time.Time       `json:"undone_at,omitzero"`
	Left      []string        `json:"left,omitempty"` // what a forced undo left as it was
}

// undoRecords returns the thread's undo records, in the order their changes were
// applied.
func undoRecords(ctx context.Context, q querier, threadID string) ([]UndoRecord, error) {
	rows, err := q.QueryContext(ctx, `SELECT u.tool_call_id, u.op_id, coalesce(p.planned, ''), u.reversal, u.state,
			u.undo_op, u.claimed_by, u.claimed_ms, u.plan, u.undone_ms, u.left_steps
		FROM undos u LEFT JOIN proposals p ON p.thread_id = u.thread_id AND p.tool_call_id = u.tool_call_id
		WHERE u.thread_id = ? ORDER BY coalesce(p.decided_ms, 0), coalesce(p.created_ms, 0), u.tool_call_id`, threadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []UndoRecord{}
	for rows.Next() {
		var r UndoRecord
		var planned, reversal, state, plan, left string
		var claimed, undone int64
		if err := rows.Scan(&r.ProposalID, &r.OpID, &planned, &reversal, &state, &r.UndoOp, &r.ClaimedBy,
			&claimed, &plan, &undone, &left); err != nil {
			return nil, err
		}
		if planned != "" {
			var a datasource.Action
			if err := json.Unmarshal([]byte(planned), &a); err != nil {
				return nil, fmt.Errorf("proposal %s: stored planned action: %w", r.ProposalID, err)
			}
			r.Applied = &a
		}
		r.Reversal = json.RawMessage(reversal)
		r.State = convo.UndoState(state)
		r.ClaimedAt, r.UndoneAt = fromMS(claimed), fromMS(undone)
		if plan != "" {
			r.Plan = json.RawMessage(plan)
		}
		if left != "" && left != "[]" {
			if err := json.Unmarshal([]byte(left), &r.Left); err != nil {
				return nil, fmt.Errorf("proposal %s: stored undo left: %w", r.ProposalID, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// validateUndos checks the undo records of a local record: each belongs to one of
// its proposals, once, with an operation, a reversal whose every step can be run
// and a known state (an undone one says when).
func validateUndos(l *LocalRecord) error {
	props := map[string]bool{}
	for _, p := range l.Proposals {
		props[p.ID] = true
	}
	seen := map[string]bool{}
	for i, r := range l.Undos {
		where := fmt.Sprintf("nodiusAi.undos[%d]", i)
		switch {
		case r.ProposalID == "":
			return invalid("%s names no proposal_id", where)
		case !props[r.ProposalID]:
			return invalid("%s is for proposal %q, which the thread does not have", where, r.ProposalID)
		case seen[r.ProposalID]:
			return invalid("%s: proposal %q has two undo records", where, r.ProposalID)
		case r.OpID == "":
			return invalid("%s names no op_id (the apply it reverses)", where)
		}
		seen[r.ProposalID] = true
		if _, err := undo.Parse(r.Reversal); err != nil {
			return invalidBecause(err, "%s.reversal cannot be used", where)
		}
		if len(r.Plan) > 0 {
			if _, err := undo.Parse(r.Plan); err != nil {
				return invalidBecause(err, "%s.plan cannot be used", where)
			}
		}
		switch r.State {
		case convo.NotUndone, convo.UndoClaimed:
		case convo.Undone:
			if r.UndoneAt.IsZero() {
				return invalid("%s is undone but has no undone_at", where)
			}
		default:
			return invalid("%s has state %q (not \"\", \"claimed\" or \"undone\")", where, r.State)
		}
		if r.Applied != nil && r.Applied.Type == "" {
			return invalid("%s.applied_action has no type", where)
		}
	}
	return nil
}

// importUndos writes the undo records of an imported thread (checked by
// validateUndos). An undo that was claimed (in flight in another process, maybe on
// another machine) cannot be finished here: it goes back to not undone, and the next
// undo plans it again from the reversal, whose steps are idempotent. Reversals are
// stored as this build writes them (a document store may have reordered their
// fields).
func importUndos(ctx context.Context, tx *sql.Tx, threadID string, undos []UndoRecord) error {
	for _, r := range undos {
		if r.State == convo.UndoClaimed {
			r.State, r.UndoOp, r.ClaimedBy, r.ClaimedAt, r.Plan = convo.NotUndone, "", "", time.Time{}, nil
		}
		var err error
		if r.Reversal, err = canonicalReversal(r.Reversal); err != nil {
			return invalidBecause(err, "undo of proposal %s: reversal", r.ProposalID)
		}
		if len(r.Plan) > 0 {
			if r.Plan, err = canonicalReversal(r.Plan); err != nil {
				return invalidBecause(err, "undo of proposal %s: plan", r.ProposalID)
			}
		}
		left := ""
		if r.State == convo.Undone {
			b, err := json.Marshal(nonNil(r.Left))
			if err != nil {
				return invalidBecause(err, "undo of proposal %s", r.ProposalID)
			}
			left = string(b)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO undos (thread_id, tool_call_id, op_id, reversal, state, undo_op, claimed_by,
				claimed_ms, plan, undone_ms, left_steps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			threadID, r.ProposalID, r.OpID, string(r.Reversal), string(r.State), r.UndoOp, r.ClaimedBy,
			ms(r.ClaimedAt), string(r.Plan), ms(r.UndoneAt), left)
		if err != nil {
			return invalidBecause(err, "undo of proposal %s", r.ProposalID)
		}
		if r.Applied != nil {
			b, err := json.Marshal(r.Applied)
			if err != nil {
				return invalidBecause(err, "undo of proposal %s: applied_action", r.ProposalID)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE proposals SET planned = ? WHERE thread_id = ? AND tool_call_id = ? AND outcome = 'applied'`,
				string(b), threadID, r.ProposalID); err != nil {
				return err
			}
		}
	}
	return nil
}

// canonicalReversal is a recorded reversal written again as this build writes it.
func canonicalReversal(b json.RawMessage) (json.RawMessage, error) {
	rev, err := undo.Parse(b)
	if err != nil {
		return nil, err
	}
	return json.Marshal(rev)
}
