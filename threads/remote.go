package threads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Remote says that a thread is a copy of one of a Nodius server's threads
// (--agent server:URL): Server is the server's URL without credentials, ID the
// server's id for the thread ("" until the server told it).
type Remote struct {
	Server string `json:"server"`
	ID     string `json:"remote_id,omitempty"`
}

// SetRemote marks a thread as a copy of a server's thread, or updates the mark.
func (s *Store) SetRemote(ctx context.Context, threadID string, r Remote) error {
	if threadID == "" || strings.TrimSpace(r.Server) == "" {
		return invalid("a remote mark needs a thread id and a server")
	}
	if strings.Contains(r.Server, "@") {
		return invalid("the server URL of a remote thread must not hold credentials")
	}
	return s.tx(ctx, "mark a remote thread", func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ?`, threadID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(threadID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO remote_threads (thread_id, server, remote_id) VALUES (?, ?, ?)
			ON CONFLICT (thread_id) DO UPDATE SET server = excluded.server,
				remote_id = CASE WHEN excluded.remote_id <> '' THEN excluded.remote_id ELSE remote_id END`,
			threadID, r.Server, r.ID)
		return err
	})
}

// RemoteOf returns the remote mark of a thread; ok is false for a local thread.
func (s *Store) RemoteOf(ctx context.Context, threadID string) (r Remote, ok bool, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT server, remote_id FROM remote_threads WHERE thread_id = ?`, threadID).Scan(&r.Server, &r.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return Remote{}, false, nil
	}
	if err != nil {
		return Remote{}, false, classify(s.path, "read a remote mark", err)
	}
	return r, true, nil
}

// FindRemote returns the local thread that copies the server's thread remoteID
// (ErrNotFound when none does).
func (s *Store) FindRemote(ctx context.Context, server, remoteID string) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT thread_id FROM remote_threads WHERE server = ? AND remote_id = ?
		ORDER BY thread_id LIMIT 1`, server, remoteID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("no local copy of the server's thread %q: %w", remoteID, ErrNotFound)
	}
	if err != nil {
		return "", classify(s.path, "find a remote thread", err)
	}
	return id, nil
}

// Remotes returns the remote marks of every remote thread, by local thread id.
func (s *Store) Remotes(ctx context.Context) (map[string]Remote, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT thread_id, server, remote_id FROM remote_threads`)
	if err != nil {
		return nil, classify(s.path, "list remote threads", err)
	}
	defer rows.Close()
	out := map[string]Remote{}
	for rows.Next() {
		var id string
		var r Remote
		if err := rows.Scan(&id, &r.Server, &r.ID); err != nil {
			return nil, classify(s.path, "list remote threads", err)
		}
		out[id] = r
	}
	return out, classify(s.path, "list remote threads", rows.Err())
}
