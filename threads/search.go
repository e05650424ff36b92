package threads

import (
	"context"
	"database/sql"
	"errors"
	"sort"
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
	// ProposalID is set when the words matched the reason of a proposal (its id)
	// rather than a message; Role is then the assistant's, who proposed it.
	ProposalID string `json:"proposal_id,omitempty"`

	rank float64
}

// rankWindow is how many of the most recent matches Search ranks.
const rankWindow = 1000

// Search finds messages (what people asked and the assistant answered, in every
// thread, archived ones included) and proposals (by their reason) matching all
// words of query, best first (by BM25
// among the 1,000 most recent matches, so a common word stays fast). The
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
	// Ranking every match of a word found in most messages costs time in proportion
	// to the whole history (80+ ms over 100,000 messages). Hits are ranked among the
	// most recent rankWindow matches instead: the first query finds the oldest rowid
	// of that window by walking the match list backwards, which FTS5 does without
	// ranking anything; the second ranks only what lies above it.
	var floor int64
	err := s.r.QueryRowContext(ctx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?
		ORDER BY rowid DESC LIMIT 1 OFFSET ?`, match, rankWindow-1).Scan(&floor)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, classify(s.path, "search", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.thread_id, t.title, t.graph_key, t.status, m.id, m.role,
			snippet(messages_fts, 0, ?, ?, '…', 16), m.created_ms, messages_fts.rank
		FROM messages_fts
		JOIN messages m ON m.id = messages_fts.rowid
		JOIN threads t ON t.id = m.thread_id
		WHERE messages_fts MATCH ? AND messages_fts.rowid >= ?
		ORDER BY messages_fts.rank
		LIMIT ?`, MatchStart, MatchEnd, match, floor, limit)
	if err != nil {
		return nil, classify(s.path, "search", err)
	}
	defer rows.Close()
	out := []Hit{}
	for rows.Next() {
		var h Hit
		var status, role string
		var created int64
		if err := rows.Scan(&h.ThreadID, &h.Title, &h.Graph, &status, &h.MessageID, &role, &h.Snippet, &created, &h.rank); err != nil {
			return nil, classify(s.path, "search", err)
		}
		h.Status, h.Role, h.CreatedAt = convo.ThreadStatus(status), convo.Role(role), fromMS(created)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(s.path, "search", err)
	}
	props, err := s.searchProposals(ctx, match, limit)
	if err != nil {
		return nil, err
	}
	if len(props) == 0 {
		return out, nil
	}
	// Both rankings are BM25 over short texts: merged by it, best first.
	out = append(out, props...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	return out[:min(len(out), limit)], nil
}

// searchProposals finds the proposals whose reason matches, best first. A database
// opened read-only from before proposals were indexed has none to find.
func (s *Store) searchProposals(ctx context.Context, match string, limit int) ([]Hit, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT f.thread_id, t.title, t.graph_key, t.status, f.tool_call_id,
			snippet(proposals_fts, 0, ?, ?, '…', 16), p.created_ms, f.rank
		FROM proposals_fts f
		JOIN threads t ON t.id = f.thread_id
		JOIN proposals p ON p.thread_id = f.thread_id AND p.tool_call_id = f.tool_call_id
		WHERE proposals_fts MATCH ?
		ORDER BY f.rank
		LIMIT ?`, MatchStart, MatchEnd, match, limit)
	if err != nil {
		if s.readOnly && strings.Contains(err.Error(), "no such table") {
			return nil, nil
		}
		return nil, classify(s.path, "search", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		h := Hit{Role: convo.Assistant}
		var status string
		var created int64
		if err := rows.Scan(&h.ThreadID, &h.Title, &h.Graph, &status, &h.ProposalID, &h.Snippet, &created, &h.rank); err != nil {
			return nil, classify(s.path, "search", err)
		}
		h.Status, h.CreatedAt = convo.ThreadStatus(status), fromMS(created)
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
