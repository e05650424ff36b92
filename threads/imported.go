package threads

import (
	"context"
	"database/sql"
)

// markImported records, inside an import's transaction, that thread id came from a
// document: its recorded source is untrusted (see Imported).
func markImported(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO imported_threads (thread_id) VALUES (?)`, id)
	return err
}

// Imported reports whether thread id came from a document (threads import, threads
// sync --pull) rather than being started here. Such a thread's recorded source was
// written by someone else: the caller must not send it a credential nor write to it
// without the user naming it.
func (s *Store) Imported(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM imported_threads WHERE thread_id = ?`, id).Scan(&n)
	if err != nil {
		return false, classify(s.path, "read an import mark", err)
	}
	return n > 0, nil
}
