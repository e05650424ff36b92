package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// framed runs the Model in the real Bubble Tea loop and keeps the last screen it
// drew, so that a test reads what the program put on the terminal.
type framed struct {
	*Model
	mu   sync.Mutex
	last string
}

func (f *framed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := f.Model.Update(msg)
	return f, cmd
}

func (f *framed) View() tea.View {
	v := f.Model.View()
	f.mu.Lock()
	f.last = ansi.Strip(v.Content)
	f.mu.Unlock()
	return v
}

func (f *framed) screen() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// until polls the drawn screen for ok (no fixed sleep: it returns as soon as the
// program has drawn what is awaited).
func (f *framed) until(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s := f.screen(); ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never drawn; the screen:\n%s", what, f.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runProposal starts the program at w×h on the clock clk, asks a question whose
// answer is p, and waits for the dialog.
func runProposal(t *testing.T, clk *fakeClock, p *convo.Proposal, w, h int) (*framed, *teatest.TestModel, *fakeRunner) {
	t.Helper()
	fr := &fakeRunner{}
	fr.send = func(_ context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
		emit(convo.Event{Type: convo.EventThread, ThreadID: "t1", Graph: req.GraphKey})
		emit(convo.Event{Type: convo.EventProposal, Proposal: p})
		return agent.Result{ThreadID: "t1", Proposal: p}, nil
	}
	fr.resume = func(context.Context, convo.Decision, func(convo.Event)) (agent.Result, error) {
		return agent.Result{ThreadID: "t1"}, nil
	}
	f := &framed{Model: New(Options{Runner: fr, GraphKey: "demo", GraphName: "NBA stats", Source: longSource, NoColor: true, Now: clk.Now})}
	tm := teatest.NewTestModel(t, f, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { _ = tm.Quit() })
	tm.Type("change the code")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	f.until(t, "the dialog", func(s string) bool { return strings.Contains(s, "Proposed change") })
	return f, tm, fr
}

// In the real program at 40×18 and 80×24: PgDn alone, page by page, puts every
// line of a 60-line change with spread-out edits and of its Reason on the screen,
// none skipped; then a (past the guard, on the injected clock) approves.
func TestProgramPagesEveryLine(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			p := spreadCodeProposal()
			f, tm, fr := runProposal(t, clk, p, sz[0], sz[1])
			s := f.screen()
			rows := map[string]bool{}
			for page := 0; ; page++ {
				for _, r := range dialogLines(s) {
					rows[r] = true
				}
				if !strings.Contains(s, "more line") {
					break // the last page
				}
				if page > 100 {
					t.Fatalf("PgDn never reaches the end:\n%s", s)
				}
				prev := s
				tm.Send(tea.KeyPressMsg{Code: tea.KeyPgDown})
				s = f.until(t, "the next page", func(s string) bool { return s != prev })
			}
			// What the dialog scrolls, built again for this width.
			lk := &look{th: newTheme(false, true)}
			var body []string
			for _, l := range newProposalDialog(lk, *p, nil, longSource, time.Time{}).buildBody(max(20, min(sz[0], 100)-4)) {
				body = append(body, strings.TrimSpace(ansi.Strip(l)))
			}
			for i, b := range body {
				if b != "" && !rows[b] {
					t.Errorf("line %d of the change %q was never on screen", i, b)
				}
			}
			for _, want := range []string{"REASON why01", "why40", "NEW03", "NEW58", "CODE60", "NEW45"} {
				found := false
				for r := range rows {
					found = found || strings.Contains(r, want)
				}
				if !found {
					t.Errorf("%q never on screen", want)
				}
			}
			clk.Advance(time.Second)
			tm.Type("a")
			f.until(t, "the approval", func(string) bool { _, r := fr.calls(); return len(r) == 1 })
			if _, r := fr.calls(); !r[0].Approved || r[0].ProposalID != p.ID {
				t.Fatalf("decision %+v", r[0])
			}
		})
	}
}

// In the real program, a U+202E inside a data value shows as ⟨U+202E⟩ in the
// dialog, at 40×18 and 80×24.
func TestProgramShowsDirectionControlInData(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		clk := &fakeClock{t: time.Unix(1000, 0)}
		p := &convo.Proposal{ID: "call_d", ThreadID: "t1", Tool: "propose_update_node", Reason: "point at the file",
			Action: datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
				NodeKey: "fetch-api", Before: map[string]any{"data": map[string]any{"url": "a.json"}},
				Changes: map[string]any{"data": map[string]any{"url": "safe\u202e txt.exe"}},
			}}}
		f, _, _ := runProposal(t, clk, p, sz[0], sz[1])
		s := f.until(t, "the marker", func(s string) bool { return strings.Contains(s, "safe⟨U+202E⟩") })
		if strings.Contains(s, "safe txt.exe") {
			t.Errorf("%dx%d: the direction control is deleted:\n%s", sz[0], sz[1], s)
		}
	}
}
