package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nodius/nodius-ai/agent/convo"
)

// SaveReversal keeps what reversing an approved proposal's apply needs, tied to the
// apply's operation opID. It is written before the apply runs; a later apply of the
// same proposal (after its claim was released) replaces it. An undone or claimed
// record is left alone.
func (s *Store) SaveReversal(ctx context.Context, threadID, proposalID, opID string, reversal json.RawMessage) error {
	if threadID == "" || proposalID == "" || opID == "" || len(reversal) == 0 {
		return invalid("a reversal needs a thread, a proposal, an operation and its steps")
	}
	return s.tx(ctx, "save what undo needs", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO undos (thread_id, tool_call_id, op_id, reversal) VALUES (?, ?, ?, ?)
			ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET op_id = excluded.op_id, reversal = excluded.reversal
			WHERE state = ''`, threadID, proposalID, opID, string(reversal))
		return err
	})
}

const undoableCols = `p.tool_call_id, p.tool, p.action, p.planned, p.op_id, p.decided_ms,
	CASE WHEN u.op_id = p.op_id THEN u.reversal ELSE '' END, coalesce(u.state, ''), coalesce(u.undo_op, ''),
	coalesce(u.claimed_by, ''), coalesce(u.claimed_ms, 0), coalesce(u.plan, '')`

func scanUndoable(sc interface{ Scan(...any) error }) (convo.Undoable, error) {
	var u convo.Undoable
	var action, planned, reversal, state, plan string
	var decided, claimed int64
	if err := sc.Scan(&u.ProposalID, &u.Tool, &action, &planned, &u.OpID, &decided, &reversal, &state,
		&u.UndoOp, &u.ClaimedBy, &claimed, &plan); err != nil {
		return u, err
	}
	src := planned
	if src == "" {
		src = action
	}
	if err := json.Unmarshal([]byte(src), &u.Action); err != nil {
		return u, fmt.Errorf("proposal %s: stored action: %w", u.ProposalID, err)
	}
	u.AppliedAt, u.ClaimedAt = fromMS(decided), fromMS(claimed)
	u.State = convo.UndoState(state)
	if reversal != "" {
		u.Reversal = json.RawMessage(reversal)
	}
	if plan != "" {
		u.Plan = json.RawMessage(plan)
	}
	return u, nil
}

// LastUndoable returns the thread's last applied change that is not undone (nil
// when there is none), with its undo state: an undo may be claimed.
func (s *Store) LastUndoable(ctx context.Context, threadID string) (*convo.Undoable, error) {
	u, err := scanUndoable(s.r.QueryRowContext(ctx, `SELECT `+undoableCols+` FROM proposals p
		LEFT JOIN undos u ON u.thread_id = p.thread_id AND u.tool_call_id = p.tool_call_id
		WHERE p.thread_id = ? AND p.outcome = 'applied' AND coalesce(u.state, '') <> 'undone'
		ORDER BY p.decided_ms DESC, p.created_ms DESC LIMIT 1`, threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(s.path, "read the last applied change", err)
	}
	return &u, nil
}

// UndoClaims lists the thread's undos claimed but not finished.
func (s *Store) UndoClaims(ctx context.Context, threadID string) ([]convo.Undoable, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+undoableCols+` FROM undos u
		JOIN proposals p ON p.thread_id = u.thread_id AND p.tool_call_id = u.tool_call_id
		WHERE u.thread_id = ? AND u.state = 'claimed' ORDER BY u.claimed_ms`, threadID)
	if err != nil {
		return nil, classify(s.path, "read claimed undos", err)
	}
	defer rows.Close()
	var out []convo.Undoable
	for rows.Next() {
		u, err := scanUndoable(rows)
		if err != nil {
			return nil, classify(s.path, "read claimed undos", err)
		}
		out = append(out, u)
	}
	return out, classify(s.path, "read claimed undos", rows.Err())
}

// ClaimUndo takes the decision to undo an applied change before anything is
// reversed: in one transaction its record goes from not undone to claimed by
// operation undoOp of process claimer, with the plan (the steps it will reverse).
// Only one claim can win: a change already undone or being undone is ErrDecided.
func (s *Store) ClaimUndo(ctx context.Context, threadID, proposalID, opID, undoOp, claimer string, plan json.RawMessage) error {
	now := s.now()
	return s.tx(ctx, "claim an undo", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE undos SET state = 'claimed', undo_op = ?, claimed_by = ?, claimed_ms = ?, plan = ?
			WHERE thread_id = ? AND tool_call_id = ? AND op_id = ? AND state = ''`,
			undoOp, claimer, now.UnixMilli(), string(plan), threadID, proposalID, opID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return bumpThread(ctx, tx, threadID, convo.Usage{}, false, "", now)
		}
		var state string
		err = tx.QueryRowContext(ctx, `SELECT state FROM undos WHERE thread_id = ? AND tool_call_id = ?`, threadID, proposalID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no undo record for proposal %q in thread %q: %w", proposalID, threadID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		what := "already undone"
		if state == string(convo.UndoClaimed) {
			what = "being undone by another process"
		}
		return &convo.DecidedError{What: fmt.Sprintf("proposal %s was %s", proposalID, what)}
	})
}

// ReleaseUndo puts a claimed undo back: nothing (or, on a source changed step by
// step, part, which the next undo finishes) was reversed.
func (s *Store) ReleaseUndo(ctx context.Context, threadID, proposalID, undoOp string) error {
	return s.tx(ctx, "release an undo", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE undos SET state = '', undo_op = '', claimed_by = '', claimed_ms = 0, plan = ''
			WHERE thread_id = ? AND tool_call_id = ? AND state = 'claimed' AND undo_op = ?`, threadID, proposalID, undoOp)
		return err
	})
}

// TakeOverUndo moves a dead process's undo claim to newClaimer, so that exactly one
// process reconciles it. It reports whether this call took it.
func (s *Store) TakeOverUndo(ctx context.Context, threadID, proposalID, undoOp, oldClaimer, newClaimer string) (bool, error) {
	return s.updateOne(ctx, "take over an undo", `UPDATE undos SET claimed_by = ?, claimed_ms = ?
			WHERE thread_id = ? AND tool_call_id = ? AND state = 'claimed' AND undo_op = ? AND claimed_by = ?`,
		newClaimer, s.now().UnixMilli(), threadID, proposalID, undoOp, oldClaimer)
}

// FinishUndo records a claimed undo as done, with what a forced undo left, and the
// message that tells the model, in one transaction.
func (s *Store) FinishUndo(ctx context.Context, threadID, proposalID, undoOp string, left []string, m *convo.Message) error {
	leftJSON, _ := json.Marshal(nonNil(left))
	if m == nil || m.ThreadID != threadID {
		return invalid("an undo is recorded with the message that tells the model")
	}
	now := s.now()
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	var id int64
	var seq int
	err := s.tx(ctx, "record an undo", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE undos SET state = 'undone', undone_ms = ?, left_steps = ?, claimed_by = ''
			WHERE thread_id = ? AND tool_call_id = ? AND state = 'claimed' AND undo_op = ?`,
			created.UnixMilli(), string(leftJSON), threadID, proposalID, undoOp)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &convo.DecidedError{What: fmt.Sprintf("the undo %s of proposal %s is no longer claimed", undoOp, proposalID)}
		}
		id, seq, err = insertMessage(ctx, tx, m, convo.Complete, "", created)
		if err != nil {
			return err
		}
		return bumpThread(ctx, tx, threadID, convo.Usage{}, false, "", now)
	})
	if err != nil {
		return err
	}
	m.ID, m.Seq, m.Status, m.CreatedAt = id, seq, convo.Complete, created
	return nil
}
