package threads

import (
	"context"
	"database/sql"
	"errors"
)

// LLM is the model endpoint a thread last ran with: the provider's name, the model
// and the base URL, never a key. A continued thread (approve, reject, ask --thread,
// chat --thread) goes on with it when nothing else is configured.
type LLM struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url,omitempty"`
}

// ThreadLLM returns the endpoint thread id last ran with (ErrNotFound when there is
// no such thread).
func (s *Store) ThreadLLM(ctx context.Context, id string) (LLM, error) {
	var l LLM
	err := s.r.QueryRowContext(ctx, `SELECT provider, model, base_url FROM threads WHERE id = ?`, id).Scan(&l.Provider, &l.Model, &l.BaseURL)
	if errors.Is(err, sql.ErrNoRows) {
		return l, notFound(id)
	}
	return l, classify(s.path, "read a thread", err)
}

// SetThreadLLM records the endpoint thread id runs with. The caller strips
// credentials from the base URL first: the database never holds a secret. The
// thread's update time is left alone (running it again is not an edit).
func (s *Store) SetThreadLLM(ctx context.Context, id string, l LLM) error {
	return s.updateThread(ctx, "record a thread's model", id,
		`UPDATE threads SET provider = ?, model = ?, base_url = ? WHERE id = ?`, l.Provider, l.Model, l.BaseURL, id)
}
