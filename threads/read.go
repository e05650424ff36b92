package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// MinPrefix is the shortest id prefix ResolveID accepts.
const MinPrefix = 4

const threadCols = `id, graph_key, workspace, user_id, title, provider, model, status, auto_approve, source,
	prompt_tokens, completion_tokens, cached_tokens, cost_usd, message_count, created_ms, updated_ms`

type scanner interface{ Scan(dest ...any) error }

func scanThread(sc scanner) (convo.Thread, error) {
	var t convo.Thread
	var status, auto string
	var created, updated int64
	err := sc.Scan(&t.ID, &t.GraphKey, &t.Workspace, &t.UserID, &t.Title, &t.Provider, &t.Model, &status, &auto, &t.Source,
		&t.Usage.PromptTokens, &t.Usage.CompletionTokens, &t.Usage.CachedTokens, &t.Usage.CostUSD,
		&t.MessageCount, &created, &updated)
	if err != nil {
		return t, err
	}
	t.Status = convo.ThreadStatus(status)
	if auto != "" && auto != "[]" {
		_ = json.Unmarshal([]byte(auto), &t.AutoApprove) // written by us; a bad value reads as none
	}
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return t, nil
}

// Thread returns one thread by full id (ErrNotFound when absent).
func (s *Store) Thread(ctx context.Context, id string) (convo.Thread, error) {
	t, err := getThread(ctx, s.r, id)
	return t, classify(s.path, "read a thread", err)
}

func getThread(ctx context.Context, q querier, id string) (convo.Thread, error) {
	t, err := scanThread(q.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound(id)
	}
	return t, err
}

// ListOptions selects threads for List.
type ListOptions struct {
	Graph string // only this graph ("" for all)
	All   bool   // include archived threads
	Limit int    // at most this many (0: no limit)
}

// List returns threads, most recently updated first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]convo.Thread, error) {
	var where []string
	var args []any
	if o.Graph != "" {
		where = append(where, "graph_key = ?")
		args = append(args, o.Graph)
	}
	if !o.All {
		// Listing every thread, a scan of the table and one sort beats walking the
		// status index and fetching each row by rowid (about 30% faster on 10,000
		// threads); with a limit or a graph the index is the better way. The unary +
		// keeps the planner off the index.
		if o.Limit == 0 && o.Graph == "" {
			where = append(where, "+status = 'active'")
		} else {
			where = append(where, "status = 'active'")
		}
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	// Sizing the result first spares copying thousands of threads as it grows.
	n := o.Limit
	if n == 0 {
		if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM threads`+strings.ReplaceAll(cond, "+status", "status"), args...).Scan(&n); err != nil {
			return nil, classify(s.path, "list threads", err)
		}
	}
	q := `SELECT ` + threadCols + ` FROM threads` + cond + " ORDER BY updated_ms DESC, id DESC"
	if o.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, o.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(s.path, "list threads", err)
	}
	defer rows.Close()
	out := make([]convo.Thread, 0, n)
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, classify(s.path, "list threads", err)
		}
		out = append(out, t)
	}
	return out, classify(s.path, "list threads", rows.Err())
}

// Latest returns the most recently updated active thread of a graph, for --continue
// (ErrNotFound when the graph has none).
func (s *Store) Latest(ctx context.Context, graphKey string) (convo.Thread, error) {
	ts, err := s.List(ctx, ListOptions{Graph: graphKey, Limit: 1})
	if err != nil {
		return convo.Thread{}, err
	}
	if len(ts) == 0 {
		return convo.Thread{}, fmt.Errorf("no thread on graph %q yet: start one without --continue: %w", graphKey, ErrNotFound)
	}
	return ts[0], nil
}

// ResolveID turns what a person typed into a full thread id: the id itself, or a
// unique prefix of at least MinPrefix characters. Since every generated id starts
// with "ai_", a prefix without it is also tried with it ("1709" finds "ai_1709...").
// An ambiguous prefix is an *AmbiguousError listing candidates; none is ErrNotFound.
func (s *Store) ResolveID(ctx context.Context, prefix string) (string, error) {
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		return "", invalid("no thread id given")
	}
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT id FROM threads WHERE id = ?`, prefix).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", classify(s.path, "find a thread", err)
	}
	if len(prefix) < MinPrefix {
		return "", invalid("thread id %q is too short: give at least %d characters", prefix, MinPrefix)
	}
	tries := []string{prefix}
	if !strings.HasPrefix(prefix, "ai_") {
		tries = append(tries, "ai_"+prefix)
	}
	for _, p := range tries {
		cands, more, err := s.prefixMatches(ctx, p)
		if err != nil {
			return "", classify(s.path, "find a thread", err)
		}
		switch {
		case len(cands) == 1:
			return cands[0].ID, nil
		case len(cands) > 1:
			return "", &AmbiguousError{Prefix: prefix, Candidates: cands, More: more}
		}
	}
	return "", notFound(prefix)
}

const maxCandidates = 10

func (s *Store) prefixMatches(ctx context.Context, p string) ([]Candidate, bool, error) {
	// A range scan on the primary key: every id with prefix p sorts in [p, p+0xFF).
	rows, err := s.r.QueryContext(ctx, `SELECT id, title FROM threads WHERE id >= ? AND id < ? ORDER BY updated_ms DESC LIMIT ?`,
		p, p+"\xff", maxCandidates+1)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var c Candidate
		if err := rows.Scan(&c.ID, &c.Title); err != nil {
			return nil, false, err
		}
		out = append(out, c)
	}
	more := len(out) > maxCandidates
	if more {
		out = out[:maxCandidates]
	}
	return out, more, rows.Err()
}

const messageCols = `id, thread_id, seq, role, kind, content, reasoning, tool_calls, tool_call_id, name, status, model,
	prompt_tokens, completion_tokens, cached_tokens, cost_usd, created_ms`

func scanMessage(sc scanner) (convo.Message, error) {
	var m convo.Message
	var role, kind, calls, status string
	var created int64
	err := sc.Scan(&m.ID, &m.ThreadID, &m.Seq, &role, &kind, &m.Content, &m.Reasoning, &calls, &m.ToolCallID, &m.Name,
		&status, &m.Model, &m.Usage.PromptTokens, &m.Usage.CompletionTokens, &m.Usage.CachedTokens, &m.Usage.CostUSD, &created)
	if err != nil {
		return m, err
	}
	m.Role, m.Kind, m.Status = convo.Role(role), convo.Kind(kind), convo.Status(status)
	if calls != "" {
		if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("message %d: stored tool calls: %w", m.ID, err)
		}
	}
	m.CreatedAt = fromMS(created)
	return m, nil
}

// Messages returns a thread's messages exactly as stored, in order (for display;
// the agent uses History).
func (s *Store) Messages(ctx context.Context, threadID string) ([]convo.Message, error) {
	msgs, err := messages(ctx, s.r, threadID)
	return msgs, classify(s.path, "read messages", err)
}

func messages(ctx context.Context, q querier, threadID string) ([]convo.Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+messageCols+` FROM messages WHERE thread_id = ? ORDER BY seq`, threadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]convo.Message, 0, 64)
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if _, err := getThread(ctx, q, threadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// History returns the thread's messages in order, repaired so that the history is
// valid for every provider (see Repair).
func (s *Store) History(ctx context.Context, threadID string) ([]convo.Message, error) {
	msgs, err := s.Messages(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return Repair(msgs, nil), nil
}

// InterruptedResult is the content of the synthetic result History gives a tool
// call that never got one (the process died or the run was stopped).
const InterruptedResult = `{"status":"interrupted","error":"this tool call was interrupted before it returned a result"}`

// Repair rebuilds a history that every provider accepts, whatever a crash left:
//   - each assistant tool call is followed, in call order, by its result, moved up
//     when it was stored later (a decision taken after other messages);
//   - a call without a result gets a synthetic tool message (ID 0, status
//     interrupted, content InterruptedResult), except calls in open, which stay
//     without one (a pending proposal's batch, in an export);
//   - tool results that answer no earlier call, or answer one twice, are dropped;
//   - messages left streaming read as interrupted, and an assistant message with
//     neither text nor tool calls (a stream that died before its first token) is
//     dropped, since providers reject empty assistant messages.
//
// msgs is not modified.
func Repair(msgs []convo.Message, open map[string]bool) []convo.Message {
	declared := map[string]int{} // call id -> index of the assistant message
	for i, m := range msgs {
		if m.Role != convo.Assistant {
			continue
		}
		for _, c := range m.ToolCalls {
			if _, dup := declared[c.ID]; !dup {
				declared[c.ID] = i
			}
		}
	}
	results := map[string]int{} // call id -> index of its first valid result
	for i, m := range msgs {
		if m.Role != convo.Tool {
			continue
		}
		at, ok := declared[m.ToolCallID]
		if !ok || at > i {
			continue
		}
		if _, dup := results[m.ToolCallID]; !dup {
			results[m.ToolCallID] = i
		}
	}
	out := make([]convo.Message, 0, len(msgs))
	placed := map[string]bool{}
	for i, m := range msgs {
		if m.Role == convo.Tool {
			continue
		}
		if m.Status == convo.Streaming {
			m.Status = convo.Interrupted
		}
		if m.Role == convo.Assistant && m.Content == "" && len(m.ToolCalls) == 0 {
			continue
		}
		out = append(out, m)
		if m.Role != convo.Assistant {
			continue
		}
		for _, c := range m.ToolCalls {
			if declared[c.ID] != i || placed[c.ID] {
				continue // a call id repeated in a later message: answered once, after the first
			}
			placed[c.ID] = true
			if j, ok := results[c.ID]; ok {
				out = append(out, msgs[j])
				continue
			}
			if open[c.ID] {
				continue
			}
			out = append(out, convo.Message{
				ThreadID: m.ThreadID, Role: convo.Tool, ToolCallID: c.ID, Name: c.Name,
				Content: InterruptedResult, Status: convo.Interrupted, CreatedAt: m.CreatedAt,
			})
		}
	}
	return out
}

// ToolRuns returns the thread's tool runs in the order they were requested.
func (s *Store) ToolRuns(ctx context.Context, threadID string) ([]convo.ToolRun, error) {
	rs, err := toolRuns(ctx, s.r, threadID)
	return rs, classify(s.path, "read tool runs", err)
}

func toolRuns(ctx context.Context, q querier, threadID string) ([]convo.ToolRun, error) {
	rows, err := q.QueryContext(ctx, `SELECT r.tool_call_id, r.name, r.arguments, r.status, r.result, r.error, r.started_ms, r.finished_ms
		FROM tool_runs r LEFT JOIN messages m ON m.id = r.message_id
		WHERE r.thread_id = ? ORDER BY coalesce(m.seq, 1e18), r.started_ms, r.tool_call_id`, threadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []convo.ToolRun{}
	for rows.Next() {
		r := convo.ToolRun{ThreadID: threadID}
		var status string
		var started, finished int64
		if err := rows.Scan(&r.ToolCallID, &r.Name, &r.Arguments, &status, &r.Result, &r.Error, &started, &finished); err != nil {
			return nil, err
		}
		r.Status = convo.ToolRunStatus(status)
		r.StartedAt, r.FinishedAt = fromMS(started), fromMS(finished)
		out = append(out, r)
	}
	return out, rows.Err()
}

const proposalCols = `thread_id, tool_call_id, tool, action, reason, decision, feedback, result, created_ms, decided_ms,
	digest, outcome, op_id, apply_error`

func scanProposal(sc scanner) (convo.Proposal, error) {
	var p convo.Proposal
	var action, decision, result, outcome string
	var created, decided int64
	if err := sc.Scan(&p.ThreadID, &p.ToolCallID, &p.Tool, &action, &p.Reason, &decision, &p.Feedback, &result, &created, &decided,
		&p.Digest, &outcome, &p.OpID, &p.ApplyError); err != nil {
		return p, err
	}
	p.Outcome = convo.Outcome(outcome)
	p.ID = p.ToolCallID
	p.Decision = convo.DecisionState(decision)
	if err := json.Unmarshal([]byte(action), &p.Action); err != nil {
		return p, fmt.Errorf("proposal %s: stored action: %w", p.ID, err)
	}
	if result != "" {
		p.Result = new(datasource.ApplyResult)
		if err := json.Unmarshal([]byte(result), p.Result); err != nil {
			return p, fmt.Errorf("proposal %s: stored result: %w", p.ID, err)
		}
	}
	p.CreatedAt, p.DecidedAt = fromMS(created), fromMS(decided)
	return p, nil
}

// PendingProposal returns the thread's undecided proposal (the latest, should there
// be several), or nil.
func (s *Store) PendingProposal(ctx context.Context, threadID string) (*convo.Proposal, error) {
	p, err := scanProposal(s.r.QueryRowContext(ctx, `SELECT `+proposalCols+` FROM proposals
		WHERE thread_id = ? AND decision = 'pending' ORDER BY created_ms DESC, tool_call_id DESC LIMIT 1`, threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(s.path, "read the pending proposal", err)
	}
	return &p, nil
}

// Claims returns the thread's approvals taken but not finished (see convo.Claim).
func (s *Store) Claims(ctx context.Context, threadID string) ([]convo.Claim, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tool_call_id, op_id, claimed_by, claimed_ms, planned FROM proposals
		WHERE thread_id = ? AND outcome = 'claimed' ORDER BY created_ms`, threadID)
	if err != nil {
		return nil, classify(s.path, "read claimed decisions", err)
	}
	defer rows.Close()
	var out []convo.Claim
	for rows.Next() {
		var c convo.Claim
		var at int64
		var planned string
		if err := rows.Scan(&c.ProposalID, &c.OpID, &c.ClaimedBy, &at, &planned); err != nil {
			return nil, classify(s.path, "read claimed decisions", err)
		}
		c.ClaimedAt = fromMS(at)
		if err := json.Unmarshal([]byte(planned), &c.Planned); err != nil {
			return nil, fmt.Errorf("proposal %s: stored planned action: %w", c.ProposalID, err)
		}
		out = append(out, c)
	}
	return out, classify(s.path, "read claimed decisions", rows.Err())
}

// Proposal returns one proposal of a thread by id (ErrNotFound when absent).
func (s *Store) Proposal(ctx context.Context, threadID, id string) (convo.Proposal, error) {
	p, err := scanProposal(s.r.QueryRowContext(ctx, `SELECT `+proposalCols+` FROM proposals
		WHERE thread_id = ? AND tool_call_id = ?`, threadID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("no proposal %q in thread %q: %w", id, threadID, ErrNotFound)
	}
	return p, classify(s.path, "read a proposal", err)
}

// proposals returns every proposal of the thread, oldest first.
func proposals(ctx context.Context, q querier, threadID string) ([]convo.Proposal, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+proposalCols+` FROM proposals WHERE thread_id = ? ORDER BY created_ms, tool_call_id`, threadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []convo.Proposal{}
	for rows.Next() {
		p, err := scanProposal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Created returns what the thread's approved proposals created (provenance).
func (s *Store) Created(ctx context.Context, threadID string) ([]CreatedKey, error) {
	cs, err := created(ctx, s.r, threadID)
	return cs, classify(s.path, "read provenance", err)
}

func created(ctx context.Context, q querier, threadID string) ([]CreatedKey, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, key, graph_key, tool_call_id, created_ms FROM thread_nodes
		WHERE thread_id = ? ORDER BY created_ms, kind DESC, key`, threadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []CreatedKey{}
	for rows.Next() {
		var c CreatedKey
		if err := rows.Scan(&c.Kind, &c.Key, &c.Graph, &c.ToolCallID, &c.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Transcript is everything stored about one thread, read in one snapshot.
type Transcript struct {
	Thread    convo.Thread     `json:"thread"`
	Messages  []convo.Message  `json:"messages"`
	ToolRuns  []convo.ToolRun  `json:"tool_runs"`
	Proposals []convo.Proposal `json:"proposals"`
	Created   []CreatedKey     `json:"created"`
	Undos     []UndoRecord     `json:"undos"`
}

// Transcript reads a whole thread consistently (one read transaction).
func (s *Store) Transcript(ctx context.Context, id string) (Transcript, error) {
	var tr Transcript
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	defer func() { _ = tx.Rollback() }()
	if tr.Thread, err = getThread(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	if tr.Messages, err = messages(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	if tr.ToolRuns, err = toolRuns(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	if tr.Proposals, err = proposals(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	if tr.Created, err = created(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	if tr.Undos, err = undoRecords(ctx, tx, id); err != nil {
		return tr, classify(s.path, "read a thread", err)
	}
	return tr, nil
}
