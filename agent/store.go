package agent

import (
	"context"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// Store is what the agent needs of the thread store (threads.Store implements it).
// Each method is one transaction, matching one agent step, so a crash at any instant
// loses at most the step in flight. Every call is scoped by thread id.
type Store interface {
	// CreateThread inserts a thread; an empty ID gets the server's form ai_{unix ms}_{n}.
	CreateThread(ctx context.Context, t convo.Thread) (convo.Thread, error)
	// Thread returns one thread by full id (error wraps threads.ErrNotFound when absent).
	Thread(ctx context.Context, id string) (convo.Thread, error)
	// History returns the thread's messages in order, repaired: tool calls without a
	// result get a synthetic "interrupted" tool result, orphan results are dropped, and
	// messages left "streaming" by a dead process read as "interrupted".
	History(ctx context.Context, threadID string) ([]convo.Message, error)
	// SaveMessage inserts m (ID == 0: assigns ID, Seq, CreatedAt) or updates it (content,
	// reasoning, tool calls, status, usage). An assistant message's tool calls get
	// pending tool runs in the same transaction, and its usage is added to the thread's
	// totals (an update adds only the difference). Sets the title from the first user
	// message when the thread has none.
	SaveMessage(ctx context.Context, m *convo.Message) error
	// SaveToolResult inserts a tool message and records its run in one transaction.
	SaveToolResult(ctx context.Context, m *convo.Message, run convo.ToolRun) error
	// SaveProposal records a pending proposal (and its tool run as pending).
	SaveProposal(ctx context.Context, p convo.Proposal) error
	// PendingProposal returns the thread's undecided proposal, or nil.
	PendingProposal(ctx context.Context, threadID string) (*convo.Proposal, error)
	// Proposal returns one proposal of the thread by id.
	Proposal(ctx context.Context, threadID, id string) (convo.Proposal, error)
	// ClaimProposal takes an approval before anything is applied: pending → approved
	// and claimed by operation opID of process claimer, keeping the planned action.
	// A proposal no longer pending gives an error wrapping convo.ErrDecided.
	ClaimProposal(ctx context.Context, threadID, id, opID, claimer, feedback string, planned datasource.Action) error
	// ReleaseClaim puts a claimed proposal back to pending (its apply did not land).
	ReleaseClaim(ctx context.Context, threadID, id, opID string) error
	// Claims lists the thread's approvals claimed but not finished.
	Claims(ctx context.Context, threadID string) ([]convo.Claim, error)
	// TakeOverClaim moves a dead process's claim to newClaimer; true if this call did.
	TakeOverClaim(ctx context.Context, threadID, id, opID, oldClaimer, newClaimer string) (bool, error)
	// DecideProposal records the decision, the apply result, the tool message that
	// carries the decision to the model, and the nodes created (provenance), in one
	// transaction. With p.OpID set it finishes that claimed operation only; without,
	// it decides a pending proposal. Either way a proposal someone else decided gives
	// an error wrapping convo.ErrDecided.
	DecideProposal(ctx context.Context, p convo.Proposal, toolResult *convo.Message) error
	// Delete removes threads with everything they hold (a fresh thread whose run failed).
	Delete(ctx context.Context, ids ...string) error
	// SetAutoApprove records the action types auto-approved for this thread.
	SetAutoApprove(ctx context.Context, threadID string, types []string) error
}
