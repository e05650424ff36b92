package threads

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/nodius/nodius-ai/agent/convo"
)

// Snippet markers around the matched words of a search hit. They are private-use
// code points, not control characters, so they survive termtext.Strip and the
// caller decides how to show a match (bold on a terminal, nothing in a pipe).
const (
	MatchStart = "\uE000"
	MatchEnd   = "\uE001"
)

// Hit is one message that matched a search.
type Hit struct {
	ThreadID  string             `json:"thread_id"`
	Title     string             `json:"title"`
	Graph     string             `json:"graph"`
	Status    convo.ThreadStatus `json:"status"`
	MessageID int64              `json:"message_id"`
	Role      convo.Role         `json:"role"`
	Snippet   string             `json:"snippet"`
	CreatedAt time.Time          `json:"created_at"`
}

// Search finds messages (what people asked and the assistant answered, in every
// thread, archived ones included) matching all words of query, best first. The
// query is plain words, never FTS syntax: each word is quoted, so no input can cause
// a syntax error, and the last word also matches as a prefix ("fetc" finds "fetch").
// A query with no words returns no hits.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	match := ftsQuery(query)
	if match == "" {
		return []Hit{}, nil
	}
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.thread_id, t.title, t.graph_key, t.status, m.id, m.role,
			snippet(messages_fts, 0, ?, ?, '…', 16), m.created_ms
		FROM messages_fts
		JOIN messages m ON m.id = messages_fts.rowid
		JOIN threads t ON t.id = m.thread_id
		WHERE messages_fts MATCH ?
		ORDER BY messages_fts.rank
		LIMIT ?`, MatchStart, MatchEnd, match, limit)
	if err != nil {
		return nil, classify(s.path, "search", err)
	}
	defer rows.Close()
	out := []Hit{}
	for rows.Next() {
		var h Hit
		var status, role string
		var created int64
		if err := rows.Scan(&h.ThreadID, &h.Title, &h.Graph, &status, &h.MessageID, &role, &h.Snippet, &created); err != nil {
			return nil, classify(s.path, "search", err)
		}
		h.Status, h.Role, h.CreatedAt = convo.ThreadStatus(status), convo.Role(role), fromMS(created)
		out = append(out, h)
	}
	return out, classify(s.path, "search", rows.Err())
}

// ftsQuery turns free text into an FTS5 query: the words (runs of letters, digits
// and marks, as the unicode61 tokenizer sees them), each a quoted string, all
// required; the last one a prefix.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
	})
	if len(words) > 16 {
		words = words[:16]
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	if n := len(words); n > 0 {
		words[n-1] += "*"
	}
	return strings.Join(words, " ")
}
