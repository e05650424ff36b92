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
