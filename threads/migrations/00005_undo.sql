-- Schema 5: undo.
--
-- When an approved proposal is applied, what reversing it needs is kept here, before
-- the apply runs, tied to the apply's operation (op_id): the keys it creates, the
-- previous values of the fields it changes, the previous position of what it moves,
-- the nodes and edges it deletes (reversal, JSON steps in reverse order).
--
-- An undo is taken like an approval: claimed in a transaction (state 'claimed',
-- undo_op, claimed_by, plan: the steps it will reverse), applied to the source, then
-- recorded (state 'undone', undone_ms, left: what a forced undo left) together with
-- the message that tells the model. A claim left by a dead process is reconciled on
-- the next undo of the thread.

-- +goose Up
CREATE TABLE undos (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    tool_call_id TEXT NOT NULL,
    op_id        TEXT NOT NULL,
    reversal     TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT '' CHECK (state IN ('', 'claimed', 'undone')),
    undo_op      TEXT NOT NULL DEFAULT '',
    claimed_by   TEXT NOT NULL DEFAULT '',
    claimed_ms   INTEGER NOT NULL DEFAULT 0,
    plan         TEXT NOT NULL DEFAULT '',
    undone_ms    INTEGER NOT NULL DEFAULT 0,
    left_steps   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, tool_call_id)
) WITHOUT ROWID;

CREATE INDEX undos_claimed ON undos (thread_id) WHERE state = 'claimed';

-- +goose Down
DROP INDEX undos_claimed;
DROP TABLE undos;
