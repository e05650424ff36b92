// Package convo is the conversation model shared by the agent, the thread store, the
// LLM providers and the TUI: threads, messages, tool calls, proposals, decisions and
// the events a run emits. It is a leaf: it imports only the graph model (for actions),
// so nothing ever has to import upward to talk about a conversation.
package convo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

// Role of a message, in the OpenAI chat format the server's threads use.
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Kind tells system messages apart: the system prompt (sent once) and the per-question
// retrieval context (dropped first when the history is over budget).
type Kind string

const (
	KindPrompt  Kind = "prompt"
	KindContext Kind = "context"
)

// Status of a message: streaming while tokens arrive, interrupted when the run was
// stopped or the process died before the message completed.
type Status string

const (
	Complete    Status = "complete"
	Streaming   Status = "streaming"
	Interrupted Status = "interrupted"
)

// ToolCall is one function call requested by the model. Arguments is the raw JSON text.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef is a tool offered to the model: a JSON-schema function definition.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Usage counts the tokens of one LLM call (or a sum of calls) and what they cost.
// CachedTokens are part of PromptTokens, priced apart.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CachedTokens     int     `json:"cached_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		CachedTokens:     u.CachedTokens + o.CachedTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}

// Total is prompt + completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Message is one entry of a thread's history. ID and Seq are assigned by the store.
type Message struct {
	ID         int64      `json:"id,omitempty"`
	ThreadID   string     `json:"thread_id,omitempty"`
	Seq        int        `json:"seq,omitempty"`
	Role       Role       `json:"role"`
	Kind       Kind       `json:"kind,omitempty"`
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"` // tool name, on tool messages
	Status     Status     `json:"status,omitempty"`
	Model      string     `json:"model,omitempty"`
	Usage      Usage      `json:"usage"`
	CreatedAt  time.Time  `json:"created_at"`
}

// ThreadStatus is active or archived.
type ThreadStatus string

const (
	Active   ThreadStatus = "active"
	Archived ThreadStatus = "archived"
)

// ProviderMCP is the provider of a thread driven by an outside client over the Model
// Context Protocol: its tool calls come from that client, not from a model of ours,
// so no model continues it after a decision. The thread's Model is the client's name.
const ProviderMCP = "mcp"

// Thread is one conversation about one graph.
type Thread struct {
	ID        string       `json:"id"`
	GraphKey  string       `json:"graph"`
	Workspace string       `json:"workspace"`
	UserID    string       `json:"user_id"`
	Title     string       `json:"title"`
	Provider  string       `json:"provider"`
	Model     string       `json:"model"`
	Status    ThreadStatus `json:"status"`
	// Source is the data source the thread works on, without credentials ("demo",
	// "file:/abs/path.json", "arango://user@host:8529/db?workspace=w", "server:URL").
	// Empty for threads made before sources were recorded.
	Source string `json:"source,omitempty"`
	// AutoApprove lists the action types the user said "yes for this thread" to.
	AutoApprove  []datasource.ActionType `json:"auto_approve,omitempty"`
	Usage        Usage                   `json:"usage"`
	MessageCount int                     `json:"messages"`
	CreatedAt    time.Time               `json:"created_at"`
	UpdatedAt    time.Time               `json:"updated_at"`
}

// ToolRunStatus is the life of one tool execution.
type ToolRunStatus string

const (
	RunPending   ToolRunStatus = "pending"
	RunRunning   ToolRunStatus = "running"
	RunCompleted ToolRunStatus = "completed"
	RunError     ToolRunStatus = "error"
)

// ToolRun records one tool call's execution.
type ToolRun struct {
	ThreadID   string        `json:"thread_id"`
	ToolCallID string        `json:"tool_call_id"`
	Name       string        `json:"name"`
	Arguments  string        `json:"arguments"`
	Status     ToolRunStatus `json:"status"`
	Result     string        `json:"result"`
	Error      string        `json:"error,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
}

// DecisionState of a proposal.
type DecisionState string

const (
	Pending  DecisionState = "pending"
	Approved DecisionState = "approved"
	Rejected DecisionState = "rejected"
)

// Outcome is what became of an approved proposal.
type Outcome string

const (
	// OutcomeNone: not approved (pending or rejected).
	OutcomeNone Outcome = ""
	// Claimed: approved, the apply is running (or its process died: reconciled on
	// the next open against the source).
	Claimed Outcome = "claimed"
	// Applied: approved and applied to the graph.
	Applied Outcome = "applied"
	// NotApplied: approved, but the graph no longer allowed it (ApplyError says why).
	NotApplied Outcome = "not_applied"
)

// Proposal is a graph change the model proposed through a propose_* tool call,
// waiting for (or having had) a person's decision.
type Proposal struct {
	ID         string            `json:"id"` // the tool call id, unique in the thread
	ThreadID   string            `json:"thread_id"`
	ToolCallID string            `json:"tool_call_id"`
	Tool       string            `json:"tool"`
	Action     datasource.Action `json:"action"`
	// Digest identifies the action shown (ActionDigest): a decision made on one
	// version of a proposal cannot apply another.
	Digest     string                  `json:"digest,omitempty"`
	Reason     string                  `json:"reason"`
	Decision   DecisionState           `json:"decision"`
	Feedback   string                  `json:"feedback,omitempty"`
	Outcome    Outcome                 `json:"outcome,omitempty"`
	ApplyError string                  `json:"apply_error,omitempty"` // why an approved proposal was not applied
	OpID       string                  `json:"op_id,omitempty"`       // the operation id of the apply
	Result     *datasource.ApplyResult `json:"result,omitempty"`
	CreatedAt  time.Time               `json:"created_at"`
	DecidedAt  time.Time               `json:"decided_at"`
}

// State is the one word a screen shows for the proposal: pending, applying,
// applied, not applied or rejected.
func (p Proposal) State() string {
	switch {
	case p.Decision == Rejected:
		return "rejected"
	case p.Decision == Pending:
		return "pending"
	case p.Outcome == Claimed:
		return "applying"
	case p.Outcome == Applied || (p.Outcome == OutcomeNone && p.Result != nil && p.Result.Applied):
		return "applied"
	}
	return "not applied"
}

// ActionDigest is a short, stable fingerprint of an action (SHA-256 of its JSON;
// encoding/json sorts map keys, so equal actions give equal digests).
func ActionDigest(a datasource.Action) string {
	b, err := json.Marshal(a)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Claim is an approval taken but not finished: the apply of operation OpID, run by
// process ClaimedBy, to carry out Planned (the action with every key it creates
// assigned). A claim whose process died is reconciled against the source.
type Claim struct {
	ProposalID string
	OpID       string
	ClaimedBy  string
	ClaimedAt  time.Time
	Planned    datasource.Action
}

// Decision is what a person says of a pending proposal.
type Decision struct {
	Approved bool
	Feedback string
	// AlwaysForThread turns the action types of the proposal decided to auto-approve
	// for the rest of the thread.
	AlwaysForThread bool
	// ProposalID is the proposal the person saw and decided. When set, the decision
	// applies to that proposal only: if another one is pending now, nothing happens.
	ProposalID string
	// Digest, when set, is the ActionDigest of the action shown: a proposal whose
	// action changed since is not decided.
	Digest string
}
