package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// fakeRunner records calls and plays scripts; a nil script returns an empty result.
type fakeRunner struct {
	mu      sync.Mutex
	sends   []agent.SendRequest
	resumes []convo.Decision
	send    func(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error)
	resume  func(ctx context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error)
}

func (f *fakeRunner) Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
	f.mu.Lock()
	f.sends = append(f.sends, req)
	s := f.send
	f.mu.Unlock()
	if s == nil {
		return agent.Result{}, nil
	}
	return s(ctx, req, emit)
}

func (f *fakeRunner) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
	f.mu.Lock()
	f.resumes = append(f.resumes, d)
	s := f.resume
	f.mu.Unlock()
	if s == nil {
		return agent.Result{ThreadID: threadID}, nil
	}
	return s(ctx, d, emit)
}

func (f *fakeRunner) calls() ([]agent.SendRequest, []convo.Decision) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.SendRequest(nil), f.sends...), append([]convo.Decision(nil), f.resumes...)
}

// fakeThreads is an in-memory thread store.
type fakeThreads struct {
	mu      sync.Mutex
	threads []convo.Thread
	history map[string][]convo.Message
	pending map[string]*convo.Proposal
	decided map[string]convo.Proposal // by proposal id
	renamed map[string]string
	deleted []string
}

func (f *fakeThreads) List(_ context.Context, graph string) ([]convo.Thread, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []convo.Thread
	for _, t := range f.threads {
		if t.GraphKey == graph {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeThreads) History(_ context.Context, id string) ([]convo.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.history[id], nil
}

func (f *fakeThreads) Rename(_ context.Context, id, title string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.renamed == nil {
		f.renamed = map[string]string{}
	}
	f.renamed[id] = title
	for i := range f.threads {
		if f.threads[i].ID == id {
			f.threads[i].Title = title
		}
	}
	return nil
}

func (f *fakeThreads) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	for i := range f.threads {
		if f.threads[i].ID == id {
			f.threads = append(f.threads[:i], f.threads[i+1:]...)
			break
		}
	}
	return nil
}

func (f *fakeThreads) PendingProposal(_ context.Context, id string) (*convo.Proposal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending[id], nil
}

func (f *fakeThreads) Proposal(_ context.Context, _, id string) (convo.Proposal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.decided[id]; ok {
		return p, nil
	}
	return convo.Proposal{}, errors.New("no such proposal")
}

type fakeNodes []NodeRef

func (n fakeNodes) NodeRefs(context.Context, string) ([]NodeRef, error) { return n, nil }

// fakeClock is an injectable clock for the proposal guard.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testOptions() Options {
	return Options{GraphKey: "demo", GraphName: "NBA stats", Source: "demo (embedded)", Provider: "fake", Model: "m1",
		ContextWindow: 100000, NoColor: true, Dark: true}
}

// newTestModel builds a sized model with Init's synchronous parts done.
func newTestModel(t testing.TB, opts Options) *Model {
	t.Helper()
	m := New(opts)
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	return m
}

// view returns the screen without styling.
func view(m *Model) string { return ansi.Strip(m.View().Content) }

func press(m *Model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		_, last = m.Update(keyMsg(k))
	}
	return last
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	if strings.HasPrefix(k, "ctrl+") {
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// feed delivers events of the current run as one batch, then a frame.
func feed(m *Model, evs ...convo.Event) {
	items := make([]runItem, len(evs))
	for i, e := range evs {
		items[i] = runItem{ev: e}
	}
	deliver(m, items...)
}

// end delivers the end of the current run, then a frame.
func end(m *Model, res agent.Result, err error) {
	deliver(m, runItem{done: true, res: res, err: err})
}

func deliver(m *Model, items ...runItem) {
	m.Update(runBatchMsg{runID: m.run.id, items: items})
	m.Update(frameMsg{})
}

// runCmd executes a command and feeds what it returns (batches flattened), one
// level deep: enough for store commands, which answer at once.
func runCmd(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c)
		}
	case nil:
	default:
		_, next := m.Update(msg)
		runCmd(m, next)
	}
}

func tok(s string) convo.Event { return convo.Event{Type: convo.EventToken, Text: s} }

func sampleProposal() *convo.Proposal {
	return &convo.Proposal{ID: "call_9", ThreadID: "t1", Tool: "propose_delete_node", Reason: "fetch-api is unused",
		Action: datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{
			NodeKey: "fetch-api",
			RemovedEdges: []datasource.Edge{{Key: "e1", Source: "root", SourceHandle: "0", Target: "fetch-api", TargetHandle: "0"},
				{Key: "e2", Source: "fetch-api", SourceHandle: "0", Target: "filter", TargetHandle: "0"}},
		}}}
}

// pumpRun executes a run's start command (skipping frame ticks) and feeds its
// batches until the run ends.
func pumpRun(m *Model, cmd tea.Cmd) {
	var cmds []tea.Cmd
	if cmd != nil {
		cmds = append(cmds, cmd)
	}
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = cmds[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case tea.BatchMsg:
			cmds = append(cmds, msg...)
		case frameMsg, nil:
		default:
			_, next := m.Update(msg)
			if next != nil {
				cmds = append(cmds, next)
			}
		}
	}
	m.Update(frameMsg{})
}
