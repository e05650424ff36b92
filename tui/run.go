package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// runItem is one thing a run reports to the model: an event, or its end.
type runItem struct {
	ev   convo.Event
	done bool
	res  agent.Result
	err  error
}

// runBatchMsg carries the items a run produced since the last read. Reading every
// item already waiting in one message coalesces a burst of tokens into one Update.
type runBatchMsg struct {
	runID int
	items []runItem
}

// maxBatch bounds one batch so a flood of tokens cannot starve key handling.
const maxBatch = 1024

// run is the model's handle on one agent call running on its own goroutine.
type run struct {
	id     int
	ch     chan runItem
	ctx    context.Context
	cancel context.CancelFunc
}

// startRun prepares a run and returns the command that starts the agent call and
// then reads its first batch. The agent's emit pushes into a channel that the
// model drains through readRun, so Update never blocks or does I/O.
func startRun(id int, call func(ctx context.Context, emit func(convo.Event)) (agent.Result, error)) (*run, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{id: id, ch: make(chan runItem, 256), ctx: ctx, cancel: cancel}
	ch := r.ch
	start := func() tea.Msg {
		go func() {
			defer close(ch)
			res, err := call(ctx, func(ev convo.Event) {
				// After a stop nobody may be reading any more: drop events rather
				// than block the agent's goroutine; the end item still arrives.
				select {
				case ch <- runItem{ev: ev}:
				case <-ctx.Done():
				}
			})
			ch <- runItem{done: true, res: res, err: err}
		}()
		return readBatch(id, ch)
	}
	return r, start
}

// readRun returns the command that waits for the run's next items.
func readRun(r *run) tea.Cmd {
	id, ch := r.id, r.ch
	return func() tea.Msg { return readBatch(id, ch) }
}

func readBatch(id int, ch <-chan runItem) tea.Msg {
	first, ok := <-ch
	if !ok {
		return runBatchMsg{runID: id, items: []runItem{{done: true}}}
	}
	items := []runItem{first}
	for len(items) < maxBatch && !first.done {
		select {
		case it, ok := <-ch:
			if !ok {
				return runBatchMsg{runID: id, items: items}
			}
			items = append(items, it)
			if it.done {
				return runBatchMsg{runID: id, items: items}
			}
		default:
			return runBatchMsg{runID: id, items: items}
		}
	}
	return runBatchMsg{runID: id, items: items}
}
