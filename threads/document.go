package threads

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/threads/threaddoc"
)

// The thread document's format and checks live in package threaddoc, apart from the
// database; these are its names here.
type (
	// Document is the server's thread document, with nodius-ai's local record.
	Document = threaddoc.Document
	// LocalRecord is the whole stored thread, as threads show --format json prints it.
	LocalRecord = threaddoc.LocalRecord
	// DocMessage is one message in the OpenAI chat format the server keeps and sends.
	DocMessage = threaddoc.DocMessage
	// DocToolCall is an OpenAI tool call.
	DocToolCall = threaddoc.DocToolCall
	// DocFunction is the function part of a tool call.
	DocFunction = threaddoc.DocFunction
	// DocInterrupt is the pending proposal of a thread.
	DocInterrupt = threaddoc.DocInterrupt
	// UndoRecord is what a thread keeps to undo one applied change.
	UndoRecord = threaddoc.UndoRecord
	// CreatedKey is one node or edge an approved proposal of a thread created.
	CreatedKey = threaddoc.CreatedKey
)

const (
	// LocalVersion is the version of the local record this build writes and the
	// newest it reads.
	LocalVersion = threaddoc.LocalVersion
	// MaxDocumentSize bounds what ParseDocument reads.
	MaxDocumentSize = threaddoc.MaxDocumentSize
)

// ParseDocument reads and checks one server document (see threaddoc.Parse).
func ParseDocument(r io.Reader) (Document, error) { return threaddoc.Parse(r) }

func docCall(c convo.ToolCall) DocToolCall {
	return DocToolCall{ID: c.ID, Type: "function", Function: DocFunction{Name: c.Name, Arguments: c.Arguments}}
}

// Export builds the thread's server document. The history is repaired as for a
// provider, except that the calls of a pending proposal's batch stay open: the
// proposal travels as pendingInterrupt and its remaining calls are listed there.
func (s *Store) Export(ctx context.Context, id string) (Document, error) {
	tr, err := s.Transcript(ctx, id)
	if err != nil {
		return Document{}, err
	}
	return DocumentOf(tr), nil
}

// DocumentOf builds the server document of a transcript (see Export), with the
// local record of everything else.
func DocumentOf(tr Transcript) Document {
	doc := serverDocument(tr)
	doc.Local = &LocalRecord{Version: LocalVersion, Thread: tr.Thread, Messages: tr.Messages, ToolRuns: tr.ToolRuns,
		Proposals: tr.Proposals, Created: tr.Created, Undos: tr.Undos}
	return doc
}

// serverDocument is the part of the document the server knows.
func serverDocument(tr Transcript) Document {
	t := tr.Thread
	doc := Document{
		Key: t.ID, GraphKey: t.GraphKey, Workspace: t.Workspace, UserID: t.UserID, ContextType: "graph",
		Title:             docTitle(t.Title, tr.Messages),
		TotalPromptTokens: t.Usage.PromptTokens, TotalCompletionTokens: t.Usage.CompletionTokens,
		TotalTokens: t.Usage.Total(), TotalCost: t.Usage.CostUSD, Provider: t.Provider, Model: t.Model,
		CreatedTime: ms(t.CreatedAt), LastUpdatedTime: ms(t.UpdatedAt),
		ConversationHistory: []DocMessage{},
	}
	var pending *convo.Proposal
	for i := range tr.Proposals {
		if tr.Proposals[i].Decision == convo.Pending {
			pending = &tr.Proposals[i] // the latest pending one wins, as in PendingProposal
		}
	}
	answered := map[string]bool{}
	for _, m := range tr.Messages {
		if m.Role == convo.Tool {
			answered[m.ToolCallID] = true
		}
	}
	open := map[string]bool{}
	var batch []convo.ToolCall
	if pending != nil {
		for _, m := range tr.Messages {
			for _, c := range m.ToolCalls {
				if c.ID == pending.ToolCallID {
					batch = m.ToolCalls
				}
			}
		}
		for _, c := range batch {
			if !answered[c.ID] {
				open[c.ID] = true
			}
		}
	}
	for _, m := range Repair(tr.Messages, open) {
		dm := DocMessage{Role: string(m.Role), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			dm.ToolCalls = append(dm.ToolCalls, docCall(c))
		}
		if !(m.Role == convo.Assistant && m.Content == "" && len(m.ToolCalls) > 0) {
			c := m.Content
			dm.Content = &c
		}
		doc.ConversationHistory = append(doc.ConversationHistory, dm)
		if m.Role == convo.User || m.Role == convo.Assistant {
			doc.MessageCount++ // as the server counts: questions and answers, tool calls included
		}
		doc.ToolCallCount += len(m.ToolCalls)
	}
	if pending != nil {
		in := &DocInterrupt{
			Kind: threaddoc.KindProposal, ToolCallID: pending.ToolCallID, ToolName: pending.Tool, Args: json.RawMessage("{}"),
			Context: json.RawMessage("{}"), ToolCallLog: []json.RawMessage{},
			ProposedAction: pending.Action, Reason: pending.Reason,
			CreatedTime: ms(pending.CreatedAt), RemainingToolCalls: []DocToolCall{},
		}
		in.ToolCall = DocToolCall{ID: pending.ToolCallID, Type: "function", Function: DocFunction{Name: pending.Tool}}
		after := false
		for _, c := range batch {
			switch {
			case c.ID == pending.ToolCallID:
				in.ToolCall = docCall(c)
				if json.Valid([]byte(c.Arguments)) && len(strings.TrimSpace(c.Arguments)) > 0 {
					in.Args = json.RawMessage(c.Arguments)
				}
				after = true
			case after && open[c.ID]:
				in.RemainingToolCalls = append(in.RemainingToolCalls, docCall(c))
			}
		}
		doc.PendingInterrupt = in
	}
	return doc
}

// ImportOptions tune Import.
type ImportOptions struct {
	// Replace an existing thread with the same id; otherwise that is ErrExists.
	Replace bool
}

// Import stores a server document as a thread with the document's _key as its id, in
// one transaction. The first system message is the system prompt and later ones are
// retrieval contexts; a pendingInterrupt becomes a pending proposal. Token counts and
// costs, which the document does not carry, start at zero.
func (s *Store) Import(ctx context.Context, doc Document, o ImportOptions) (convo.Thread, error) {
	if err := doc.Validate(); err != nil {
		return convo.Thread{}, err
	}
	if doc.Local != nil && localAgrees(doc) {
		return s.importLocal(ctx, doc, o)
	}
	created := fromMS(doc.CreatedTime)
	if created.IsZero() {
		created = s.now()
	}
	updated := fromMS(doc.LastUpdatedTime)
	if updated.IsZero() || updated.Before(created) {
		updated = created
	}
	title := cutTitle(doc.Title)
	msgs := make([]convo.Message, 0, len(doc.ConversationHistory))
	names := map[string]string{}
	results := map[string]string{}
	for i, dm := range doc.ConversationHistory {
		m := convo.Message{ThreadID: doc.Key, Role: convo.Role(dm.Role), ToolCallID: dm.ToolCallID, Status: convo.Complete, CreatedAt: created}
		if dm.Content != nil {
			m.Content = *dm.Content
		}
		if m.Role == convo.System {
			m.Kind = convo.KindContext
			if i == 0 {
				m.Kind = convo.KindPrompt
			}
		}
		for _, c := range dm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, convo.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			names[c.ID] = c.Function.Name
		}
		if m.Role == convo.Tool {
			m.Name = names[m.ToolCallID]
			if _, dup := results[m.ToolCallID]; !dup {
				results[m.ToolCallID] = m.Content
			}
		}
		if title == "" && m.Role == convo.User {
			title = cutTitle(m.Content)
		}
		msgs = append(msgs, m)
	}
	// The server's totals are kept: the thread's usage grows from them, and an export
	// written back does not reset the web chat's figures.
	t := convo.Thread{
		ID: doc.Key, GraphKey: doc.GraphKey, Workspace: doc.Workspace, UserID: doc.UserID, Title: title,
		Provider: doc.Provider, Model: doc.Model, Status: convo.Active, CreatedAt: created, UpdatedAt: updated,
		Usage: convo.Usage{PromptTokens: doc.TotalPromptTokens, CompletionTokens: doc.TotalCompletionTokens, CostUSD: doc.TotalCost},
	}
	var incoming []convo.Proposal
	if in := doc.PendingInterrupt; in != nil && !in.ToolLimit() {
		incoming = append(incoming, convo.Proposal{ID: cmpOr(in.ToolCallID, in.ToolCall.ID), Action: in.ProposedAction, Decision: convo.Pending})
	}
	err := s.tx(ctx, "import a thread", func(tx *sql.Tx) error {
		if err := keepDecisions(ctx, tx, doc.Key, incoming); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, doc.Key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 && !o.Replace {
			return fmt.Errorf("thread %q is already in the threads database (use --replace to overwrite it): %w", doc.Key, ErrExists)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO threads (id, graph_key, workspace, user_id, title, provider, model, status,
				prompt_tokens, completion_tokens, cost_usd, created_ms, updated_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)`,
			t.ID, t.GraphKey, t.Workspace, t.UserID, t.Title, t.Provider, t.Model,
			t.Usage.PromptTokens, t.Usage.CompletionTokens, t.Usage.CostUSD, ms(created), ms(updated))
		if err != nil {
			return err
		}
		if err := markImported(ctx, tx, t.ID); err != nil {
			return err
		}
		for i := range msgs {
			m := &msgs[i]
			if m.Role == convo.Tool {
				if _, _, err := insertToolMessage(ctx, tx, m, created); err != nil {
					return err
				}
				continue
			}
			calls, err := encodeCalls(m.ToolCalls)
			if err != nil {
				return err
			}
			id, _, err := insertMessage(ctx, tx, m, convo.Complete, calls, created)
			if err != nil {
				return err
			}
			for _, c := range m.ToolCalls {
				status, result := "pending", ""
				if r, ok := results[c.ID]; ok {
					status, result = "completed", r
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO tool_runs (thread_id, tool_call_id, message_id, name, arguments, status, result, started_ms, finished_ms)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, c.ID, id, c.Name, c.Arguments, status, result, ms(created), ms(created))
				if err != nil {
					return err
				}
			}
			if visible(m.Role) {
				t.MessageCount++
			}
		}
		if in := doc.PendingInterrupt; in != nil && !in.ToolLimit() {
			callID := in.ToolCallID
			if callID == "" {
				callID = in.ToolCall.ID
			}
			tool := in.ToolCall.Function.Name
			if tool == "" {
				tool = names[callID]
			}
			action, err := json.Marshal(in.ProposedAction)
			if err != nil {
				return invalidBecause(err, "pendingInterrupt.proposedAction")
			}
			at := in.CreatedTime
			if at == 0 {
				at = ms(updated)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO proposals (thread_id, tool_call_id, tool, action, reason, decision, created_ms)
				VALUES (?, ?, ?, ?, ?, 'pending', ?)`, t.ID, callID, tool, string(action), in.Reason, at)
			if err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE threads SET message_count = ? WHERE id = ?`, t.MessageCount, t.ID)
		return err
	})
	if err != nil {
		return convo.Thread{}, err
	}
	return t, nil
}

// localAgrees reports whether the document's local record describes the same
// conversation as its server part: the history and the pending proposal the record
// gives are the ones the document carries.
func localAgrees(doc Document) bool {
	l := doc.Local
	if l.Thread.ID != doc.Key || l.Thread.GraphKey != doc.GraphKey {
		return false
	}
	for _, m := range l.Messages {
		if m.ThreadID != "" && m.ThreadID != doc.Key {
			return false
		}
	}
	for _, p := range l.Proposals {
		if p.ThreadID != "" && p.ThreadID != doc.Key {
			return false
		}
	}
	again := serverDocument(Transcript{Thread: l.Thread, Messages: l.Messages, Proposals: l.Proposals})
	a, err1 := json.Marshal(struct {
		H []DocMessage
		P *DocInterrupt
	}{again.ConversationHistory, again.PendingInterrupt})
	b, err2 := json.Marshal(struct {
		H []DocMessage
		P *DocInterrupt
	}{doc.ConversationHistory, doc.PendingInterrupt})
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// importLocal stores a thread exactly as its local record says, message ids
// included when they are free (they are after --replace of the same thread).
func (s *Store) importLocal(ctx context.Context, doc Document, o ImportOptions) (convo.Thread, error) {
	l := doc.Local
	t := l.Thread
	auto, err := json.Marshal(nonNil(t.AutoApprove))
	if err != nil {
		return convo.Thread{}, invalidBecause(err, "auto-approve list")
	}
	if t.Status != convo.Archived {
		t.Status = convo.Active
	}
	incoming := make([]convo.Proposal, len(l.Proposals))
	for i, p := range l.Proposals {
		incoming[i] = convo.Proposal{ID: cmpOr(p.ToolCallID, p.ID), Action: p.Action, Decision: p.Decision}
		if p.Outcome == convo.Claimed {
			incoming[i].Decision = convo.Pending // as it is imported
		}
	}
	err = s.tx(ctx, "import a thread", func(tx *sql.Tx) error {
		if err := keepDecisions(ctx, tx, t.ID, incoming); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, t.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 && !o.Replace {
			return fmt.Errorf("thread %q is already in the threads database (use --replace to overwrite it): %w", t.ID, ErrExists)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO threads (id, graph_key, workspace, user_id, title, provider, model, status,
				auto_approve, source, prompt_tokens, completion_tokens, cached_tokens, cost_usd, message_count, created_ms, updated_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.GraphKey, t.Workspace, t.UserID, cutTitle(t.Title), t.Provider, t.Model, string(t.Status), string(auto), t.Source,
			t.Usage.PromptTokens, t.Usage.CompletionTokens, t.Usage.CachedTokens, t.Usage.CostUSD, t.MessageCount,
			ms(t.CreatedAt), ms(t.UpdatedAt))
		if err != nil {
			return err
		}
		if err := markImported(ctx, tx, t.ID); err != nil {
			return err
		}
		msgOf := map[string]int64{} // tool call id -> the assistant message that made it
		for i, m := range l.Messages {
			if !validRole(m.Role) {
				return invalid("nodiusAi.messages[%d] has role %q", i, m.Role)
			}
			st := m.Status
			if st == "" {
				st = convo.Complete
			}
			if !validStatus(st) {
				return invalid("nodiusAi.messages[%d] has status %q", i, st)
			}
			calls, err := encodeCalls(m.ToolCalls)
			if err != nil {
				return err
			}
			var id any // a free id is kept; a taken one is given anew
			if m.ID > 0 {
				var one int
				if err := tx.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE id = ?`, m.ID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
					id = m.ID
				}
			}
			seq := m.Seq
			if seq <= 0 {
				seq = i + 1
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO messages
				(id, thread_id, seq, role, kind, content, reasoning, tool_calls, tool_call_id, name, status, model,
				 prompt_tokens, completion_tokens, cached_tokens, cost_usd, created_ms)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				id, t.ID, seq, string(m.Role), string(m.Kind), m.Content, m.Reasoning, calls, m.ToolCallID, m.Name,
				string(st), m.Model, m.Usage.PromptTokens, m.Usage.CompletionTokens, m.Usage.CachedTokens, m.Usage.CostUSD, ms(m.CreatedAt))
			if err != nil {
				return err
			}
			rowID, err := res.LastInsertId()
			if err != nil {
				return err
			}
			for _, c := range m.ToolCalls {
				msgOf[c.ID] = rowID
			}
		}
		for _, r := range l.ToolRuns {
			var msgID any
			if id, ok := msgOf[r.ToolCallID]; ok {
				msgID = id
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO tool_runs (thread_id, tool_call_id, message_id, name, arguments, status, result, error, started_ms, finished_ms)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, r.ToolCallID, msgID, r.Name, r.Arguments, string(r.Status), r.Result, r.Error,
				ms(r.StartedAt), ms(r.FinishedAt))
			if err != nil {
				return err
			}
		}
		for _, p := range l.Proposals {
			action, err := json.Marshal(p.Action)
			if err != nil {
				return invalidBecause(err, "proposal %s action", p.ID)
			}
			result := ""
			if p.Result != nil {
				b, err := json.Marshal(p.Result)
				if err != nil {
					return invalidBecause(err, "proposal %s result", p.ID)
				}
				result = string(b)
			}
			outcome := p.Outcome
			if outcome == convo.Claimed {
				// An apply in flight elsewhere cannot be finished here: decide it again.
				p.Decision, outcome = convo.Pending, convo.OutcomeNone
			}
			callID := p.ToolCallID
			if callID == "" {
				callID = p.ID
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO proposals (thread_id, tool_call_id, tool, action, reason, decision, feedback, result,
					created_ms, decided_ms, digest, outcome, op_id, apply_error)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				t.ID, callID, p.Tool, string(action), p.Reason, string(p.Decision), p.Feedback, result,
				ms(p.CreatedAt), ms(p.DecidedAt), convo.ActionDigest(p.Action), string(outcome), p.OpID, p.ApplyError)
			if err != nil {
				return invalidBecause(err, "proposal %s", p.ID)
			}
		}
		for _, c := range l.Created {
			if err := addProvenance(ctx, tx, t.ID, c.Kind, c.Key, c.Graph, c.ToolCallID, fromMS(c.CreatedAt)); err != nil {
				return err
			}
		}
		return importUndos(ctx, tx, t.ID, l.Undos)
	})
	if err != nil {
		return convo.Thread{}, err
	}
	return s.Thread(ctx, t.ID)
}

// keepDecisions refuses an import over an existing thread (--replace, a pull) that
// would change what one of its proposals is: a decision is pinned by the action
// shown, so an imported document may not put another action behind a proposal id
// the thread has (approve would apply what nobody was shown), nor make a decided
// proposal pending again (approve would apply a change twice).
func keepDecisions(ctx context.Context, tx *sql.Tx, threadID string, incoming []convo.Proposal) error {
	rows, err := tx.QueryContext(ctx, `SELECT tool_call_id, action, decision FROM proposals WHERE thread_id = ?`, threadID)
	if err != nil {
		return err
	}
	defer rows.Close()
	type had struct{ digest, decision string }
	existing := map[string]had{}
	for rows.Next() {
		var id, action, decision string
		if err := rows.Scan(&id, &action, &decision); err != nil {
			return err
		}
		var a datasource.Action
		if err := json.Unmarshal([]byte(action), &a); err != nil {
			return fmt.Errorf("proposal %s: stored action: %w", id, err)
		}
		existing[id] = had{convo.ActionDigest(a), decision}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range incoming {
		h, ok := existing[p.ID]
		if !ok {
			continue
		}
		if convo.ActionDigest(p.Action) != h.digest {
			return invalid("the document gives proposal %s of thread %s another action (%s) than the one this thread has: an import cannot change a proposal; delete the thread first if you mean to replace it",
				p.ID, threadID, datasource.Describe(p.Action))
		}
		if p.Decision == convo.Pending && h.decision != string(convo.Pending) {
			return invalid("the document makes proposal %s of thread %s pending again, but it was decided here (%s): an import cannot undo a decision",
				p.ID, threadID, h.decision)
		}
	}
	return nil
}

// cmpOr is the first of a and b that is not empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// docTitle is the thread's title, else what the server would make of it: the first
// question, trimmed, on one line, at most 80 characters ("New conversation" before
// any), so the web chat's thread list reads the same.
func docTitle(title string, msgs []convo.Message) string {
	if strings.TrimSpace(title) != "" {
		return title
	}
	for _, m := range msgs {
		if m.Role != convo.User {
			continue
		}
		t := strings.Join(strings.Fields(m.Content), " ")
		if r := []rune(t); len(r) > 80 {
			t = string(r[:77]) + "..."
		}
		if t != "" {
			return t
		}
	}
	return "New conversation"
}
