package tui

import (
	"context"
	"os"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Runner runs questions and decisions. *agent.Agent satisfies it as is; tests use a
// scripted fake so the TUI can be exercised without a network or a database.
type Runner interface {
	Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error)
	Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error)
}

// Threads is what the TUI needs of the thread store: browsing and housekeeping only
// (the agent writes the messages). Every call runs inside a tea.Cmd, never in Update.
type Threads interface {
	List(ctx context.Context, graphKey string) ([]convo.Thread, error)
	History(ctx context.Context, threadID string) ([]convo.Message, error)
	Rename(ctx context.Context, threadID, title string) error
	Delete(ctx context.Context, threadID string) error
	PendingProposal(ctx context.Context, threadID string) (*convo.Proposal, error)
	// Proposal is a proposal of the thread by id (its tool call's id), with its
	// decision and outcome: what a reopened thread shows, typed, never read back
	// from the sentence the model was told.
	Proposal(ctx context.Context, threadID, id string) (convo.Proposal, error)
}

// NodeRef is one node offered by @ completion.
type NodeRef struct {
	Key  string
	Type string
	// TypeName is the type's display name when a node type config names it
	// ("API Call" for api-call): what the assistant's {{node:K}} tags show, as
	// the web client does. Empty: the type key is shown.
	TypeName string
}

// NodeLister lists the graph's nodes for @ completion (loaded once, in a command).
type NodeLister interface {
	NodeRefs(ctx context.Context, graphKey string) ([]NodeRef, error)
}

// Options configure one chat session. Runner may be nil when no provider is
// configured: the TUI still opens, shows ConfigHelp, and browsing threads works.
type Options struct {
	GraphKey  string
	GraphName string
	Source    string // "demo (embedded)", "file:/tmp/g.json", ...
	Provider  string
	Model     string
	// ContextWindow of the model in tokens, for the context-use percentage (0 hides it).
	ContextWindow int
	// Priced says the endpoint's price is known; without it the status bar shows no
	// cost (a local model is not free of charge by $0.0000, it is unpriced).
	Priced bool

	Runner  Runner
	Threads Threads    // may be nil: the picker then says threads are unavailable
	Nodes   NodeLister // may be nil: @ completion is then off
	// Pictures draws proposals on the graph in the dialog; nil: text diff only.
	Pictures ChangePictures

	// ConfigErr is why no Runner could be built (missing provider or key); sending
	// shows it inline. ConfigHelp names the variables to set, shown on the welcome.
	ConfigErr  *fault.Error
	ConfigHelp string

	// Notes are what the source said when it was opened (an export's missing node
	// types, a file of the earlier format, only the saved state of a server graph):
	// written to stderr before the screen took over, so shown on the welcome too.
	Notes []string

	// ThreadID opens this thread at start; Continue opens the graph's latest thread.
	ThreadID string
	Continue bool

	// NoColor gives plain output (NO_COLOR); Dark picks the glamour style until the
	// terminal reports its background.
	NoColor bool
	Dark    bool

	// Now is the clock (the proposal dialog's 400 ms guard); nil means time.Now.
	Now func() time.Time
	// Getenv reads $VISUAL / $EDITOR for ctrl+o; nil means os.Getenv.
	Getenv func(string) string
}

func (o Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
