package tui

import "github.com/nodius/nodius-ai/agent/convo"

// phase is what the chat is doing, as the status bar names it. A typed value, not
// a loose string: a new phase is added here once, with its words.
type phase int

const (
	phaseIdle phase = iota
	phaseNoProvider
	phaseRetrieving
	phaseThinking
	phaseStreaming
	phaseTool
	phaseRetrying
	phaseRetryWait // between two attempts
	phaseStopping
	phaseWaitingApproval
	phaseToolLimit
	phaseError
)

// String is the phase in the status bar's words.
func (p phase) String() string {
	switch p {
	case phaseNoProvider:
		return "no provider"
	case phaseRetrieving:
		return "retrieving"
	case phaseThinking:
		return "thinking"
	case phaseStreaming:
		return "streaming"
	case phaseTool:
		return "running tool"
	case phaseRetrying:
		return "retrying"
	case phaseRetryWait:
		return "waiting"
	case phaseStopping:
		return "stopping"
	case phaseWaitingApproval:
		return "waiting for approval"
	case phaseToolLimit:
		return "tool limit: alt+c continue · alt+s answer now"
	case phaseError:
		return "error"
	}
	return "idle"
}

// phaseOf is the phase of an agent state. A state this TUI does not know yet
// reads as thinking: the agent is busy, which is what the person needs to know.
func phaseOf(s convo.State) phase {
	switch s {
	case convo.StateRetrieving:
		return phaseRetrieving
	case convo.StateStreaming:
		return phaseStreaming
	case convo.StateTool:
		return phaseTool
	case convo.StateRetrying:
		return phaseRetrying
	}
	return phaseThinking
}
