-- Schema 1 of the nodius-ai thread store. Times are Unix milliseconds, as in the
-- server's AIThreadDocument. JSON columns hold exactly what the model sent or the
-- person decided, so a thread can be rebuilt byte for byte for any provider.

-- +goose Up
CREATE TABLE threads (
    id                TEXT PRIMARY KEY,
    graph_key         TEXT NOT NULL,
    workspace         TEXT NOT NULL DEFAULT '',
    user_id           TEXT NOT NULL DEFAULT '',
    title             TEXT NOT NULL DEFAULT '',
    provider          TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    auto_approve      TEXT NOT NULL DEFAULT '[]',
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL NOT NULL DEFAULT 0,
    message_count     INTEGER NOT NULL DEFAULT 0,
    created_ms        INTEGER NOT NULL,
    updated_ms        INTEGER NOT NULL
);

-- A rowid table: listing walks these indexes and fetches rows by integer rowid,
-- much cheaper than a second search by text key.
CREATE INDEX threads_by_updated ON threads (status, updated_ms DESC);
CREATE INDEX threads_by_time ON threads (updated_ms DESC);
CREATE INDEX threads_by_graph ON threads (graph_key, status, updated_ms DESC);

CREATE TABLE messages (
    id                INTEGER PRIMARY KEY,
    thread_id         TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    kind              TEXT NOT NULL DEFAULT '',
    content           TEXT NOT NULL DEFAULT '',
    reasoning         TEXT NOT NULL DEFAULT '',
    tool_calls        TEXT NOT NULL DEFAULT '',
    tool_call_id      TEXT NOT NULL DEFAULT '',
    name              TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'streaming', 'interrupted')),
    model             TEXT NOT NULL DEFAULT '',
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL NOT NULL DEFAULT 0,
    created_ms        INTEGER NOT NULL,
    UNIQUE (thread_id, seq)
);

-- One result per tool call: replaying a step cannot duplicate it (seed 002).
CREATE UNIQUE INDEX messages_tool_result ON messages (thread_id, tool_call_id) WHERE role = 'tool';

CREATE TABLE tool_runs (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    tool_call_id TEXT NOT NULL,
    message_id   INTEGER REFERENCES messages (id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '',
    arguments    TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'error')),
    result       TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    started_ms   INTEGER NOT NULL DEFAULT 0,
    finished_ms  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (thread_id, tool_call_id)
) WITHOUT ROWID;

CREATE INDEX tool_runs_by_message ON tool_runs (message_id);

CREATE TABLE proposals (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    tool_call_id TEXT NOT NULL,
    tool         TEXT NOT NULL,
    action       TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    decision     TEXT NOT NULL DEFAULT 'pending' CHECK (decision IN ('pending', 'approved', 'rejected')),
    feedback     TEXT NOT NULL DEFAULT '',
    result       TEXT NOT NULL DEFAULT '',
    created_ms   INTEGER NOT NULL,
    decided_ms   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (thread_id, tool_call_id)
) WITHOUT ROWID;

CREATE INDEX proposals_pending ON proposals (thread_id, created_ms) WHERE decision = 'pending';

-- Provenance: the nodes and edges an approved proposal of the thread created.
CREATE TABLE thread_nodes (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('node', 'edge')),
    key          TEXT NOT NULL,
    graph_key    TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    created_ms   INTEGER NOT NULL,
    PRIMARY KEY (thread_id, kind, key)
) WITHOUT ROWID;

CREATE INDEX thread_nodes_by_key ON thread_nodes (graph_key, key);

-- Full-text search over what people and the assistant said. System prompts, retrieval
-- contexts and tool results are left out (large, repetitive, not what one looks for),
-- and so is a message while it streams, so partial saves stay cheap.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant') AND new.status <> 'streaming' AND new.content <> ''
BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.role IN ('user', 'assistant') AND old.status <> 'streaming' AND old.content <> ''
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
    SELECT 'delete', old.id, old.content
    WHERE old.role IN ('user', 'assistant') AND old.status <> 'streaming' AND old.content <> '';
    INSERT INTO messages_fts (rowid, content)
    SELECT new.id, new.content
    WHERE new.role IN ('user', 'assistant') AND new.status <> 'streaming' AND new.content <> '';
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE messages_fts;
DROP TABLE thread_nodes;
DROP TABLE proposals;
DROP TABLE tool_runs;
DROP TABLE messages;
DROP TABLE threads;
