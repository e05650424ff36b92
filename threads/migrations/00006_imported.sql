-- Schema 6: threads that came from a document (threads import, threads sync --pull).
-- Their recorded source was written elsewhere: it is input, not a choice of this
-- user, so it never receives a credential and is never written to unless the user
-- names it (see cmd/cli/threadsource.go). A thread started here has no row.

-- +goose Up
CREATE TABLE imported_threads (
    thread_id TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE
) WITHOUT ROWID;

-- +goose Down
DROP TABLE imported_threads;
