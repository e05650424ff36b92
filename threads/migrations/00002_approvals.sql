-- Schema 2: approvals you can trust.
--
-- A thread remembers where it happened: the data source it was started on, with
-- credentials removed (a file path made absolute, an arango URL without its password,
-- a server URL without a token), so approving later applies to the same graph.
--
-- A proposal carries the digest of its action (a decision binds to what was shown),
-- and the life of an approval: claimed (the decision is taken, the apply runs under
-- operation op_id by process claimed_by), then applied or not applied (apply_error
-- says why). A claim left by a dead process is reconciled against the source on the
-- next open. planned is the action as applied, keys assigned, so reconciliation can
-- tell whether the apply landed.

-- +goose Up
ALTER TABLE threads ADD COLUMN source TEXT NOT NULL DEFAULT '';

ALTER TABLE proposals ADD COLUMN digest TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN outcome TEXT NOT NULL DEFAULT ''
    CHECK (outcome IN ('', 'claimed', 'applied', 'not_applied'));
ALTER TABLE proposals ADD COLUMN op_id TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN claimed_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE proposals ADD COLUMN planned TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN apply_error TEXT NOT NULL DEFAULT '';

-- Decisions recorded by schema 1: an approved proposal was applied when its result says so.
UPDATE proposals SET outcome = CASE WHEN json_extract(result, '$.applied') THEN 'applied' ELSE 'not_applied' END
WHERE decision = 'approved' AND result <> '' AND json_valid(result);
UPDATE proposals SET outcome = 'not_applied' WHERE decision = 'approved' AND outcome = '';

CREATE INDEX proposals_claimed ON proposals (thread_id) WHERE outcome = 'claimed';

-- +goose Down
DROP INDEX proposals_claimed;
ALTER TABLE proposals DROP COLUMN apply_error;
ALTER TABLE proposals DROP COLUMN planned;
ALTER TABLE proposals DROP COLUMN claimed_ms;
ALTER TABLE proposals DROP COLUMN claimed_by;
ALTER TABLE proposals DROP COLUMN op_id;
ALTER TABLE proposals DROP COLUMN outcome;
ALTER TABLE proposals DROP COLUMN digest;
ALTER TABLE threads DROP COLUMN source;
