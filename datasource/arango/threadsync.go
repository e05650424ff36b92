package arango

import (
	"context"
	"encoding/json"
	"fmt"
)

// Thread sync primitives: the server's nodius_ai_threads documents, read and written
// with last-writer-wins on lastUpdatedTime (milliseconds). The mapping between these
// documents and the local thread store (threads.Document, Export/Import) lives with
// the store; this package only moves documents, always inside this source's
// workspace.
const (
	qThreadsSince = `FOR t IN nodius_ai_threads FILTER t.workspace == @ws AND t.lastUpdatedTime > @since ` +
		`SORT t.lastUpdatedTime RETURN t`
	qThread = `FOR t IN nodius_ai_threads FILTER t._key == @key AND t.workspace == @ws LIMIT 1 RETURN t`
	// The update happens only when the stored copy is of this workspace and older:
	// a repeated push is a no-op, and a newer copy (written by the web client) wins.
	qThreadUpsert = `UPSERT {_key: @key} INSERT @doc ` +
		`UPDATE (OLD.workspace == @ws AND OLD.lastUpdatedTime < @ts ? @doc : {}) ` +
		`IN nodius_ai_threads OPTIONS {mergeObjects: false} ` +
		`RETURN {written: OLD == null OR (OLD.workspace == @ws AND OLD.lastUpdatedTime < @ts), stored: NEW.lastUpdatedTime}`
)

// PushResult says what a push did: Written is false when the stored copy was as new
// or newer (then Stored is its lastUpdatedTime), or belongs to another workspace.
type PushResult struct {
	Written bool
	Stored  int64
}

// PushThread writes one thread document (it must carry _key and lastUpdatedTime)
// unless the stored copy is as new or newer. The document's workspace is set to this
// source's.
func (s *Source) PushThread(ctx context.Context, doc json.RawMessage) (PushResult, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return PushResult{}, fmt.Errorf("push thread: document is not a JSON object: %w", err)
	}
	var head struct {
		Key             string `json:"_key"`
		LastUpdatedTime int64  `json:"lastUpdatedTime"`
	}
	if err := json.Unmarshal(doc, &head); err != nil || head.Key == "" {
		return PushResult{}, fmt.Errorf("push thread: document has no _key or a bad lastUpdatedTime")
	}
	delete(fields, "_id") // graphKey is a thread field here: only ArangoDB's own go
	delete(fields, "_rev")
	fields["workspace"] = rawString(s.cfg.Workspace)
	rows, err := queryAll[struct {
		Written bool  `json:"written"`
		Stored  int64 `json:"stored"`
	}](ctx, s, qThreadUpsert, map[string]any{"key": head.Key, "doc": fields, "ws": s.cfg.Workspace, "ts": head.LastUpdatedTime})
	if err != nil {
		return PushResult{}, s.classify(err, "push thread "+head.Key)
	}
	if len(rows) == 0 {
		return PushResult{}, nil
	}
	return PushResult{Written: rows[0].Written, Stored: rows[0].Stored}, nil
}

// PullThreads returns the workspace's thread documents updated after since (ms),
// oldest first, without ArangoDB's _id and _rev.
func (s *Source) PullThreads(ctx context.Context, since int64) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := s.query(ctx, qThreadsSince, map[string]any{"ws": s.cfg.Workspace, "since": since}, func(raw json.RawMessage) error {
		clean, err := cleanDoc(raw)
		if err != nil {
			return err
		}
		out = append(out, clean)
		return nil
	})
	if err != nil {
		return nil, s.classify(err, "pull threads")
	}
	return out, nil
}

// PullThread returns one thread document of the workspace, or a not-found error.
func (s *Source) PullThread(ctx context.Context, key string) (json.RawMessage, error) {
	docs, err := queryAll[json.RawMessage](ctx, s, qThread, map[string]any{"key": key, "ws": s.cfg.Workspace})
	if err != nil {
		return nil, s.classify(err, "pull thread "+key)
	}
	if len(docs) == 0 {
		return nil, notFound("thread", key)
	}
	return cleanDoc(docs[0])
}

func cleanDoc(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode thread document: %w", err)
	}
	delete(m, "_id")
	delete(m, "_rev")
	return json.Marshal(m)
}
