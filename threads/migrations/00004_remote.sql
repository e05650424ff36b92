-- Schema 4: threads kept from the Nodius server's own assistant (--agent server:URL).
-- The messages live in the usual tables so show, search and export work offline;
-- this table says which server a thread belongs to (its URL without credentials)
-- and the server's id for it, learnt from the first ai:complete.

-- +goose Up
CREATE TABLE remote_threads (
    thread_id TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    server    TEXT NOT NULL,
    remote_id TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;

CREATE INDEX remote_threads_by_remote ON remote_threads (server, remote_id) WHERE remote_id <> '';

-- +goose Down
DROP TABLE remote_threads;
