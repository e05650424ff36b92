// Package convo is the conversation model shared by the agent, the thread store, the
// LLM providers and the TUI: threads, messages, tool calls, proposals, decisions and
// the events a run emits. It is a leaf: it imports only the graph model (for actions),
// so nothing ever has to import upward to talk about a conversation.
package convo

import (
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

// Proposal is a graph change the model proposed through a propose_* tool call,
// waiting for (or having had) a person's decision.
type Proposal struct {
	ID         string                  `json:"id"` // the tool call id
	ThreadID   string                  `json:"thread_id"`
	ToolCallID string                  `json:"tool_call_id"`
	Tool       string                  `json:"tool"`
	Action     datasource.Action       `json:"action"`
	Reason     string                  `json:"reason"`
	Decision   DecisionState           `json:"decision"`
	Feedback   string                  `json:"feedback,omitempty"`
	Result     *datasource.ApplyResult `json:"result,omitempty"`
	CreatedAt  time.Time               `json:"created_at"`
	DecidedAt  time.Time               `json:"decided_at"`
}

// Decision is what a person says of a pending proposal.
type Decision struct {
	Approved bool
	Feedback string
	// AlwaysForThread turns this action type to auto-approve for the rest of the thread.
	AlwaysForThread bool
}
