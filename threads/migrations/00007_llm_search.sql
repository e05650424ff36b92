-- Schema 7: a thread remembers the endpoint it ran with, and proposals are searchable.
--
-- base_url is the LLM endpoint the thread last ran with (without credentials; the
-- provider and model columns already exist), so approve, reject and a continued
-- ask or chat go on with the same model when nothing else is configured. It is
-- never taken from a document (threads import, threads sync --pull).
--
-- proposals_fts indexes the reason of every proposal (what the assistant said it
-- would change, and why), which threads search reads beside the messages. It keeps
-- its own copy of the text: proposals is a WITHOUT ROWID table, which an FTS5
-- external content table cannot follow.

-- +goose Up
ALTER TABLE threads ADD COLUMN base_url TEXT NOT NULL DEFAULT '';

CREATE VIRTUAL TABLE proposals_fts USING fts5 (
    reason,
    thread_id UNINDEXED,
    tool_call_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO proposals_fts (reason, thread_id, tool_call_id)
SELECT reason, thread_id, tool_call_id FROM proposals WHERE reason <> '';

-- +goose StatementBegin
CREATE TRIGGER proposals_fts_insert AFTER INSERT ON proposals
WHEN new.reason <> ''
BEGIN
    INSERT INTO proposals_fts (reason, thread_id, tool_call_id) VALUES (new.reason, new.thread_id, new.tool_call_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER proposals_fts_delete AFTER DELETE ON proposals
BEGIN
    DELETE FROM proposals_fts WHERE thread_id = old.thread_id AND tool_call_id = old.tool_call_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER proposals_fts_update AFTER UPDATE OF reason ON proposals
BEGIN
    DELETE FROM proposals_fts WHERE thread_id = old.thread_id AND tool_call_id = old.tool_call_id;
    INSERT INTO proposals_fts (reason, thread_id, tool_call_id)
    SELECT new.reason, new.thread_id, new.tool_call_id WHERE new.reason <> '';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER proposals_fts_update;
DROP TRIGGER proposals_fts_delete;
DROP TRIGGER proposals_fts_insert;
DROP TABLE proposals_fts;
ALTER TABLE threads DROP COLUMN base_url;
