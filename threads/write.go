package threads

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads/threaddoc"
)

// MaxTitle is the longest title kept, in runes.
const MaxTitle = 80

// idAlphabet is lower-case Crockford base32: digits and letters without i, l, o
// and u, which a person misreads or mistypes.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idLength is the number of random characters of a new id (40 bits).
const idLength = 8

// NewID returns a new thread id: "ai_" and 8 random base32 characters
// ("ai_k3m9x2q7"). The server's "ai_" prefix keeps it recognisable in ArangoDB and
// the web client; the random part, unlike a timestamp, differs from the first
// character on, so a few characters name a thread (see CreateThread).
func (s *Store) NewID() string {
	var b [idLength]byte
	for i := range b {
		b[i] = idAlphabet[rand.IntN(len(idAlphabet))]
	}
	return "ai_" + string(b[:])
}

// shortTries is how many new ids CreateThread draws looking for one whose first
// MinPrefix characters no other thread starts with; past it (a database of
// hundreds of thousands of threads) any free id is taken.
const shortTries = 64

// CreateThread inserts t. An empty ID gets a new one; an ID already stored is
// ErrExists. Status defaults to active and times to now; counts and totals start at 0.
func (s *Store) CreateThread(ctx context.Context, t convo.Thread) (convo.Thread, error) {
	if strings.TrimSpace(t.GraphKey) == "" {
		return convo.Thread{}, invalid("a thread needs a graph key")
	}
	if t.ID != "" {
		if err := checkID(t.ID); err != nil {
			return convo.Thread{}, err
		}
	}
	switch t.Status {
	case "":
		t.Status = convo.Active
	case convo.Active, convo.Archived:
	default:
		return convo.Thread{}, invalid("thread status %q is not active or archived", t.Status)
	}
	now := s.now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.Title = cutTitle(t.Title)
	t.Usage, t.MessageCount = convo.Usage{}, 0
	auto, err := json.Marshal(nonNil(t.AutoApprove))
	if err != nil {
		return convo.Thread{}, invalidBecause(err, "auto-approve list")
	}
	given := t.ID != ""
	err = s.tx(ctx, "create a thread", func(tx *sql.Tx) error {
		for attempt := 0; ; attempt++ {
			if !given {
				t.ID = s.NewID()
				if attempt < shortTries {
					// The short form a person types (MinPrefix characters, with or
					// without "ai_", see ResolveID) must name this thread alone.
					short := t.ID[len("ai_") : len("ai_")+MinPrefix]
					var one int
					err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE (id >= ? AND id < ?) OR (id >= ? AND id < ?) LIMIT 1`,
						"ai_"+short, "ai_"+short+"\xff", short, short+"\xff").Scan(&one)
					if err == nil {
						continue
					}
					if !errors.Is(err, sql.ErrNoRows) {
						return err
					}
				}
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO threads
				(id, graph_key, workspace, user_id, title, provider, model, status, auto_approve, source, created_ms, updated_ms)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
				t.ID, t.GraphKey, t.Workspace, t.UserID, t.Title, t.Provider, t.Model, string(t.Status),
				string(auto), t.Source, ms(t.CreatedAt), ms(t.UpdatedAt))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return nil
			}
			if given {
				return fmt.Errorf("thread %q is already in the threads database: %w", t.ID, ErrExists)
			}
			if attempt > 1000 {
				return errors.New("could not find a free thread id")
			}
		}
	})
	if err != nil {
		return convo.Thread{}, err
	}
	return t, nil
}

// checkID rejects ids that could not round-trip through a terminal, a file name or
// an ArangoDB _key (see threaddoc.CheckID).
func checkID(id string) error { return threaddoc.CheckID(id) }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// cutTitle keeps the first non-empty line, trimmed, at most MaxTitle runes.
func cutTitle(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > MaxTitle {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:MaxTitle-1])) + "…"
		}
		return line
	}
	return ""
}

// visible reports whether a message counts in a thread's message count: what a
// person said and what the assistant answered.
func visible(r convo.Role) bool { return r == convo.User || r == convo.Assistant }

func validRole(r convo.Role) bool {
	switch r {
	case convo.System, convo.User, convo.Assistant, convo.Tool:
		return true
	}
	return false
}

func validStatus(st convo.Status) bool {
	switch st {
	case convo.Complete, convo.Streaming, convo.Interrupted:
		return true
	}
	return false
}

// encodeCalls is the tool_calls column: "" when there are none.
func encodeCalls(calls []convo.ToolCall) (string, error) {
	if len(calls) == 0 {
		return "", nil
	}
	for _, c := range calls {
		if c.ID == "" || c.Name == "" {
			return "", invalid("a tool call needs an id and a name")
		}
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return "", invalidBecause(err, "tool calls")
	}
	return string(b), nil
}

// SaveMessage inserts m (ID == 0: assigns ID, Seq and, when zero, CreatedAt) or
// updates its content, reasoning, tool calls, status, model and usage. An assistant
// message's tool calls get pending tool runs in the same transaction; its usage is
// added to the thread's totals (an update adds only the difference). The first user
// message titles an untitled thread. m is changed only once the transaction commits,
// so after an error the caller still holds the message and may retry.
//
// Partial text of a streaming answer may be saved a few times per second: an update
// is three indexed statements in one transaction, and streaming text is kept out of
// the full-text index until the message completes.
func (s *Store) SaveMessage(ctx context.Context, m *convo.Message) error {
	if m == nil {
		return invalid("no message")
	}
	if m.ThreadID == "" {
		return invalid("a message needs a thread id")
	}
	if !validRole(m.Role) {
		return invalid("message role %q is not system, user, assistant or tool", m.Role)
	}
	st := m.Status
	if st == "" {
		st = convo.Complete
	}
	if !validStatus(st) {
		return invalid("message status %q is not complete, streaming or interrupted", st)
	}
	calls, err := encodeCalls(m.ToolCalls)
	if err != nil {
		return err
	}
	if m.ID != 0 {
		return s.updateMessage(ctx, m, st, calls)
	}
	now := s.now()
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	var id int64
	var seq int
	err = s.tx(ctx, "save a message", func(tx *sql.Tx) error {
		var err error
		id, seq, err = insertMessage(ctx, tx, m, st, calls, created)
		if err != nil {
			return err
		}
		if err := upsertPendingRuns(ctx, tx, m.ThreadID, id, m.ToolCalls, now); err != nil {
			return err
		}
		return bumpThread(ctx, tx, m.ThreadID, m.Usage, visible(m.Role), titleFrom(m), now)
	})
	if err != nil {
		return err
	}
	m.ID, m.Seq, m.Status = id, seq, st
	if m.CreatedAt.IsZero() {
		m.CreatedAt = created
	}
	return nil
}

// titleFrom is the title a message gives an untitled thread: the first user message.
func titleFrom(m *convo.Message) string {
	if m.Role != convo.User {
		return ""
	}
	return cutTitle(m.Content)
}

// insertMessage appends m at the end of its thread and returns its id and sequence.
func insertMessage(ctx context.Context, tx *sql.Tx, m *convo.Message, st convo.Status, calls string, created time.Time) (int64, int, error) {
	var seq int
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE thread_id = ?`, m.ThreadID).Scan(&seq)
	if err != nil {
		return 0, 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO messages
		(thread_id, seq, role, kind, content, reasoning, tool_calls, tool_call_id, name, status, model,
		 prompt_tokens, completion_tokens, cached_tokens, cost_usd, created_ms)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM threads WHERE id = ?)`,
		m.ThreadID, seq, string(m.Role), string(m.Kind), m.Content, m.Reasoning, calls, m.ToolCallID, m.Name,
		string(st), m.Model, m.Usage.PromptTokens, m.Usage.CompletionTokens, m.Usage.CachedTokens, m.Usage.CostUSD,
		created.UnixMilli(), m.ThreadID)
	if err != nil {
		return 0, 0, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, 0, notFound(m.ThreadID)
	}
	id, err := res.LastInsertId()
	return id, seq, err
}

// upsertPendingRuns records a pending run for each tool call of an assistant message.
// A run that already exists keeps its status (replaying a step changes nothing).
func upsertPendingRuns(ctx context.Context, tx *sql.Tx, threadID string, msgID int64, calls []convo.ToolCall, now time.Time) error {
	for _, c := range calls {
		_, err := tx.ExecContext(ctx, `INSERT INTO tool_runs (thread_id, tool_call_id, message_id, name, arguments, status)
			VALUES (?, ?, ?, ?, ?, 'pending')
			ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET
				message_id = excluded.message_id, name = excluded.name, arguments = excluded.arguments`,
			threadID, c.ID, msgID, c.Name, c.Arguments)
		if err != nil {
			return err
		}
	}
	return nil
}

// bumpThread adds usage and (for a visible message) one to the count, sets the title
// when the thread has none, and moves updated_ms.
func bumpThread(ctx context.Context, tx *sql.Tx, threadID string, u convo.Usage, count bool, title string, now time.Time) error {
	n := 0
	if count {
		n = 1
	}
	res, err := tx.ExecContext(ctx, `UPDATE threads SET
			prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
			cached_tokens = cached_tokens + ?, cost_usd = cost_usd + ?,
			message_count = message_count + ?,
			title = CASE WHEN title = '' THEN ? ELSE title END,
			updated_ms = max(updated_ms, ?)
		WHERE id = ?`,
		u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.CostUSD, n, title, now.UnixMilli(), threadID)
	if err != nil {
		return err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return notFound(threadID)
	}
	return nil
}

// updateMessage rewrites a stored message in place (a streaming answer growing, then
// completing with its tool calls and usage).
func (s *Store) updateMessage(ctx context.Context, m *convo.Message, st convo.Status, calls string) error {
	now := s.now()
	return s.tx(ctx, "update a message", func(tx *sql.Tx) error {
		var old convo.Usage
		err := tx.QueryRowContext(ctx, `SELECT prompt_tokens, completion_tokens, cached_tokens, cost_usd
			FROM messages WHERE id = ? AND thread_id = ?`, m.ID, m.ThreadID).
			Scan(&old.PromptTokens, &old.CompletionTokens, &old.CachedTokens, &old.CostUSD)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no message %d in thread %q: %w", m.ID, m.ThreadID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE messages SET content = ?, reasoning = ?, tool_calls = ?, status = ?,
				model = ?, prompt_tokens = ?, completion_tokens = ?, cached_tokens = ?, cost_usd = ?
			WHERE id = ?`,
			m.Content, m.Reasoning, calls, string(st), m.Model,
			m.Usage.PromptTokens, m.Usage.CompletionTokens, m.Usage.CachedTokens, m.Usage.CostUSD, m.ID)
		if err != nil {
			return err
		}
		if err := upsertPendingRuns(ctx, tx, m.ThreadID, m.ID, m.ToolCalls, now); err != nil {
			return err
		}
		diff := convo.Usage{
			PromptTokens:     m.Usage.PromptTokens - old.PromptTokens,
			CompletionTokens: m.Usage.CompletionTokens - old.CompletionTokens,
			CachedTokens:     m.Usage.CachedTokens - old.CachedTokens,
			CostUSD:          m.Usage.CostUSD - old.CostUSD,
		}
		return bumpThread(ctx, tx, m.ThreadID, diff, false, "", now)
	})
}

// SaveToolResult inserts a tool message and records its run, in one transaction. It
// is idempotent: a second result for the same tool call changes nothing and m gets
// the stored message's id and sequence (a replayed step never duplicates).
func (s *Store) SaveToolResult(ctx context.Context, m *convo.Message, run convo.ToolRun) error {
	if m == nil {
		return invalid("no tool result message")
	}
	if m.Role == "" {
		m.Role = convo.Tool
	}
	if m.Role != convo.Tool {
		return invalid("a tool result must have the tool role, not %q", m.Role)
	}
	if m.ThreadID == "" {
		m.ThreadID = run.ThreadID
	}
	if m.ToolCallID == "" {
		m.ToolCallID = run.ToolCallID
	}
	if m.ThreadID == "" || m.ToolCallID == "" {
		return invalid("a tool result needs a thread id and a tool call id")
	}
	if m.Name == "" {
		m.Name = run.Name
	}
	now := s.now()
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	var id int64
	var seq int
	err := s.tx(ctx, "save a tool result", func(tx *sql.Tx) error {
		var err error
		id, seq, err = insertToolMessage(ctx, tx, m, created)
		if err != nil {
			return err
		}
		if err := upsertRun(ctx, tx, m, run, now); err != nil {
			return err
		}
		return bumpThread(ctx, tx, m.ThreadID, m.Usage, false, "", now)
	})
	if err != nil {
		return err
	}
	m.ID, m.Seq, m.Status = id, seq, convo.Complete
	if m.CreatedAt.IsZero() {
		m.CreatedAt = created
	}
	return nil
}

// insertToolMessage inserts a tool message unless one for the same call is stored,
// in which case it returns the stored one's id and sequence.
func insertToolMessage(ctx context.Context, tx *sql.Tx, m *convo.Message, created time.Time) (int64, int, error) {
	var id int64
	var seq int
	err := tx.QueryRowContext(ctx, `SELECT id, seq FROM messages WHERE thread_id = ? AND tool_call_id = ? AND role = 'tool'`,
		m.ThreadID, m.ToolCallID).Scan(&id, &seq)
	if err == nil {
		return id, seq, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, err
	}
	return insertMessage(ctx, tx, m, convo.Complete, "", created)
}

// upsertRun records a finished tool run; fields the caller left empty keep what the
// assistant message recorded.
func upsertRun(ctx context.Context, tx *sql.Tx, m *convo.Message, run convo.ToolRun, now time.Time) error {
	status := run.Status
	if status == "" || status == convo.RunPending || status == convo.RunRunning {
		status = convo.RunCompleted
		if run.Error != "" {
			status = convo.RunError
		}
	}
	result := run.Result
	if result == "" {
		result = m.Content
	}
	finished := ms(run.FinishedAt)
	if finished == 0 {
		finished = now.UnixMilli()
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO tool_runs
			(thread_id, tool_call_id, name, arguments, status, result, error, started_ms, finished_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET
			name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE name END,
			arguments = CASE WHEN excluded.arguments <> '' THEN excluded.arguments ELSE arguments END,
			status = excluded.status, result = excluded.result, error = excluded.error,
			started_ms = CASE WHEN excluded.started_ms <> 0 THEN excluded.started_ms ELSE started_ms END,
			finished_ms = excluded.finished_ms`,
		m.ThreadID, m.ToolCallID, m.Name, run.Arguments, string(status), result, run.Error, ms(run.StartedAt), finished)
	return err
}

// SaveProposal records a pending proposal and marks its tool run pending, in one
// transaction. Saving the same proposal again while it is pending rewrites it;
// once decided it is left alone.
func (s *Store) SaveProposal(ctx context.Context, p convo.Proposal) error {
	callID := p.ToolCallID
	if callID == "" {
		callID = p.ID
	}
	if p.ThreadID == "" || callID == "" {
		return invalid("a proposal needs a thread id and a tool call id")
	}
	action, err := json.Marshal(p.Action)
	if err != nil {
		return invalidBecause(err, "proposal action")
	}
	digest := convo.ActionDigest(p.Action)
	now := s.now()
	created := p.CreatedAt
	if created.IsZero() {
		created = now
	}
	return s.tx(ctx, "save a proposal", func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ?`, p.ThreadID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(p.ThreadID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO proposals (thread_id, tool_call_id, tool, action, reason, decision, created_ms, digest)
				VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)
			ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET
				tool = excluded.tool, action = excluded.action, reason = excluded.reason, digest = excluded.digest
			WHERE decision = 'pending'`,
			p.ThreadID, callID, p.Tool, string(action), p.Reason, ms(created), digest)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tool_runs (thread_id, tool_call_id, name, status, started_ms)
				VALUES (?, ?, ?, 'pending', ?)
			ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET status = 'pending'
			WHERE status <> 'completed' AND status <> 'error'`,
			p.ThreadID, callID, p.Tool, ms(created))
		if err != nil {
			return err
		}
		return bumpThread(ctx, tx, p.ThreadID, convo.Usage{}, false, "", now)
	})
}

// DecideProposal records the decision, the apply result, the tool message that
// carries the decision to the model, and the nodes and edges created (provenance),
// in one transaction. Deciding an already decided proposal the same way again is a
// no-op; deciding it differently is ErrInvalid.
func (s *Store) DecideProposal(ctx context.Context, p convo.Proposal, toolResult *convo.Message) error {
	callID := p.ToolCallID
	if callID == "" {
		callID = p.ID
	}
	if p.ThreadID == "" || callID == "" {
		return invalid("a decision needs the proposal's thread id and tool call id")
	}
	if p.Decision != convo.Approved && p.Decision != convo.Rejected {
		return invalid("decision %q is not approved or rejected", p.Decision)
	}
	result := ""
	if p.Result != nil {
		b, err := json.Marshal(p.Result)
		if err != nil {
			return invalidBecause(err, "apply result")
		}
		result = string(b)
	}
	if toolResult != nil {
		if toolResult.Role == "" {
			toolResult.Role = convo.Tool
		}
		if toolResult.ThreadID == "" {
			toolResult.ThreadID = p.ThreadID
		}
		if toolResult.ToolCallID == "" {
			toolResult.ToolCallID = callID
		}
		if toolResult.Name == "" {
			toolResult.Name = p.Tool
		}
		if toolResult.Role != convo.Tool || toolResult.ThreadID != p.ThreadID || toolResult.ToolCallID != callID {
			return invalid("the decision's tool result must be the tool message of call %q in thread %q", callID, p.ThreadID)
		}
	}
	now := s.now()
	decided := p.DecidedAt
	if decided.IsZero() {
		decided = now
	}
	var id int64
	var seq int
	created := now
	if toolResult != nil && !toolResult.CreatedAt.IsZero() {
		created = toolResult.CreatedAt
	}
	err := s.tx(ctx, "record a decision", func(tx *sql.Tx) error {
		var state, graph, outcome, opID string
		err := tx.QueryRowContext(ctx, `SELECT p.decision, t.graph_key, p.outcome, p.op_id FROM proposals p JOIN threads t ON t.id = p.thread_id
			WHERE p.thread_id = ? AND p.tool_call_id = ?`, p.ThreadID, callID).Scan(&state, &graph, &outcome, &opID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no proposal %q in thread %q: %w", callID, p.ThreadID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		claimedByUs := p.OpID != "" && outcome == string(convo.Claimed) && opID == p.OpID
		if state != string(convo.Pending) && !claimedByUs {
			if p.OpID != "" && p.OpID == opID {
				// Our own finished operation recorded again (a retry): nothing changes.
				if toolResult != nil {
					id, seq, err = insertToolMessage(ctx, tx, toolResult, created)
				}
				return err
			}
			return decidedError(callID, state, outcome)
		}
		if state == string(convo.Pending) && p.OpID != "" {
			return &convo.DecidedError{What: fmt.Sprintf("proposal %q: the claim of operation %s was released", callID, p.OpID)}
		}
		out := outcomeOf(p)
		_, err = tx.ExecContext(ctx, `UPDATE proposals SET decision = ?, feedback = ?, result = ?, decided_ms = ?,
				outcome = ?, apply_error = ?, claimed_by = ''
			WHERE thread_id = ? AND tool_call_id = ?`,
			string(p.Decision), p.Feedback, result, ms(decided), string(out), p.ApplyError, p.ThreadID, callID)
		if err != nil {
			return err
		}
		runResult := result
		if toolResult != nil {
			id, seq, err = insertToolMessage(ctx, tx, toolResult, created)
			if err != nil {
				return err
			}
			runResult = toolResult.Content
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tool_runs (thread_id, tool_call_id, name, status, result, finished_ms)
				VALUES (?, ?, ?, 'completed', ?, ?)
			ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET status = 'completed', result = excluded.result,
				finished_ms = excluded.finished_ms`,
			p.ThreadID, callID, p.Tool, runResult, ms(decided))
		if err != nil {
			return err
		}
		if p.Decision == convo.Approved && p.Result != nil && p.Result.Applied {
			for _, k := range p.Result.Created.Nodes {
				if err := addProvenance(ctx, tx, p.ThreadID, "node", k, graph, callID, decided); err != nil {
					return err
				}
			}
			for _, k := range p.Result.Created.Edges {
				if err := addProvenance(ctx, tx, p.ThreadID, "edge", k, graph, callID, decided); err != nil {
					return err
				}
			}
		}
		return bumpThread(ctx, tx, p.ThreadID, convo.Usage{}, false, "", now)
	})
	if err != nil {
		return err
	}
	if toolResult != nil {
		toolResult.ID, toolResult.Seq, toolResult.Status = id, seq, convo.Complete
		if toolResult.CreatedAt.IsZero() {
			toolResult.CreatedAt = created
		}
	}
	return nil
}

// outcomeOf is the outcome a decision records.
func outcomeOf(p convo.Proposal) convo.Outcome {
	switch {
	case p.Decision != convo.Approved:
		return convo.OutcomeNone
	case p.Result != nil && p.Result.Applied:
		return convo.Applied
	}
	return convo.NotApplied
}

// decidedError says what became of a proposal someone else decided.
func decidedError(callID, state, outcome string) error {
	what := state
	if outcome == string(convo.Claimed) {
		what = "approved and is being applied"
	}
	return &convo.DecidedError{What: fmt.Sprintf("proposal %s was already %s", callID, what)}
}

// ClaimProposal takes the decision to approve a pending proposal before anything is
// applied: in one transaction, the proposal goes from pending to approved and
// claimed by operation opID of process claimer, with planned (the action as it will
// be applied) kept for reconciliation. Only one claim can win: a proposal that is
// not pending any more is ErrDecided.
func (s *Store) ClaimProposal(ctx context.Context, threadID, id, opID, claimer, feedback string, planned datasource.Action) error {
	b, err := json.Marshal(planned)
	if err != nil {
		return invalidBecause(err, "planned action")
	}
	now := s.now()
	return s.tx(ctx, "claim a decision", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE proposals SET decision = 'approved', outcome = 'claimed', op_id = ?,
				claimed_by = ?, claimed_ms = ?, planned = ?, feedback = ?, decided_ms = ?
			WHERE thread_id = ? AND tool_call_id = ? AND decision = 'pending'`,
			opID, claimer, now.UnixMilli(), string(b), feedback, now.UnixMilli(), threadID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return bumpThread(ctx, tx, threadID, convo.Usage{}, false, "", now)
		}
		var state, outcome string
		err = tx.QueryRowContext(ctx, `SELECT decision, outcome FROM proposals WHERE thread_id = ? AND tool_call_id = ?`,
			threadID, id).Scan(&state, &outcome)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no proposal %q in thread %q: %w", id, threadID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		return decidedError(id, state, outcome)
	})
}

// ReleaseClaim puts a claimed proposal back to pending: its apply did not run (or
// did not land), and the person must fix something and decide again.
func (s *Store) ReleaseClaim(ctx context.Context, threadID, id, opID string) error {
	return s.tx(ctx, "release a decision", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE proposals SET decision = 'pending', outcome = '', op_id = '', claimed_by = '',
				claimed_ms = 0, planned = '', feedback = '', decided_ms = 0
			WHERE thread_id = ? AND tool_call_id = ? AND outcome = 'claimed' AND op_id = ?`, threadID, id, opID)
		return err
	})
}

// TakeOverClaim moves a claim from a dead process (oldClaimer) to newClaimer, so
// that exactly one process reconciles it. It reports whether this call took it.
func (s *Store) TakeOverClaim(ctx context.Context, threadID, id, opID, oldClaimer, newClaimer string) (bool, error) {
	return s.updateOne(ctx, "take over a decision", `UPDATE proposals SET claimed_by = ?, claimed_ms = ?
			WHERE thread_id = ? AND tool_call_id = ? AND outcome = 'claimed' AND op_id = ? AND claimed_by = ?`,
		newClaimer, s.now().UnixMilli(), threadID, id, opID, oldClaimer)
}

// updateOne runs one conditional UPDATE in its own transaction and reports whether
// it changed a row: how a claim changes hands between processes, exactly once.
func (s *Store) updateOne(ctx context.Context, op, query string, args ...any) (bool, error) {
	var took bool
	err := s.tx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		took = n == 1
		return nil
	})
	return took, err
}

func addProvenance(ctx context.Context, tx *sql.Tx, threadID, kind, key, graph, callID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO thread_nodes (thread_id, kind, key, graph_key, tool_call_id, created_ms)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, threadID, kind, key, graph, callID, at.UnixMilli())
	return err
}

// SetAutoApprove records the action types auto-approved for this thread.
func (s *Store) SetAutoApprove(ctx context.Context, threadID string, types []string) error {
	b, err := json.Marshal(nonNil(types))
	if err != nil {
		return invalidBecause(err, "auto-approve list")
	}
	return s.updateThread(ctx, "set auto-approve", threadID, `UPDATE threads SET auto_approve = ? WHERE id = ?`, string(b), threadID)
}

// Rename sets a thread's title (cut to one line of MaxTitle runes).
func (s *Store) Rename(ctx context.Context, id, title string) error {
	t := cutTitle(title)
	if t == "" {
		return invalid("a title cannot be empty")
	}
	return s.updateThread(ctx, "rename a thread", id, `UPDATE threads SET title = ?, updated_ms = max(updated_ms, ?) WHERE id = ?`, t, s.now().UnixMilli(), id)
}

// Archive hides a thread from `threads list` (it stays searchable and loadable).
func (s *Store) Archive(ctx context.Context, id string) error {
	return s.updateThread(ctx, "archive a thread", id, `UPDATE threads SET status = 'archived' WHERE id = ?`, id)
}

// Unarchive makes an archived thread active again.
func (s *Store) Unarchive(ctx context.Context, id string) error {
	return s.updateThread(ctx, "unarchive a thread", id, `UPDATE threads SET status = 'active' WHERE id = ?`, id)
}

func (s *Store) updateThread(ctx context.Context, op, id, query string, args ...any) error {
	return s.tx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(id)
		}
		return nil
	})
}

// Delete removes threads with everything they hold, all or none: an unknown id
// deletes nothing.
func (s *Store) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.tx(ctx, "delete threads", func(tx *sql.Tx) error {
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return notFound(id)
			}
		}
		return nil
	})
}
