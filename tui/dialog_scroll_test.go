package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// longCodeProposal rewrites 40 lines of code: the shape that used to stop at
// "↓ 6 more lines" with the new code and the Reason never shown.
func longCodeProposal() *convo.Proposal {
	var old, new []string
	for i := 1; i <= 40; i++ {
		old = append(old, fmt.Sprintf("const oldValue%d = compute(%d); // the old way of doing step %d", i, i, i))
		new = append(new, fmt.Sprintf("const newValue%d = await computeFaster(%d, options); // step %d", i, i, i))
	}
	new[len(new)-1] = "return LASTLINE; // the very last line of the new code"
	return &convo.Proposal{ID: "call_u", ThreadID: "t1", Tool: "propose_update_node", Reason: "REASONTEXT: the API moved to v2",
		Action: datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
			NodeKey: "fetch-api",
			Before:  map[string]any{"process": strings.Join(old, "\n")},
			Changes: map[string]any{"process": strings.Join(new, "\n")},
		}}}
}

const longSource = "file:/home/someone/projects/nba/graphs/players-graph.json"

// openSized opens p in a w×h model whose clock is clk.
func openSized(t *testing.T, clk *fakeClock, p *convo.Proposal, w, h int) (*Model, *fakeRunner) {
	t.Helper()
	fr := &fakeRunner{}
	m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", Source: longSource, NoColor: true, Now: clk.Now})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	typeText(m, "use v2")
	clk.Advance(50 * time.Millisecond)
	press(m, "enter")
	feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, tok("Here is the new code."), convo.Event{Type: convo.EventProposal, Proposal: p})
	end(m, agent.Result{ThreadID: "t1", Proposal: p}, nil)
	if _, ok := m.dlg.(*proposalDialog); !ok {
		t.Fatal("the dialog did not open")
	}
	return m, fr
}

// Every line of a long change is reachable by scrolling at every size from 40×18:
// the Reason, the first and the last line of the new code; the source written to
// is on every screen; the action and the reason come first; approving then works.
func TestLongChangeIsReachableAtEverySize(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		clk := &fakeClock{t: time.Unix(1000, 0)}
		m, fr := openSized(t, clk, longCodeProposal(), w, h)
		clk.Advance(time.Second)
		first := view(m)
		checkScreen(t, "dialog", first, w, h)
		if !strings.Contains(first, "REASONTEXT") || !strings.Contains(first, "update node fetch-api") {
			t.Errorf("%dx%d: the action and the reason are not shown first:\n%s", w, h, first)
		}
		var seen strings.Builder
		prev := ""
		for range 1000 {
			s := view(m)
			if s == prev {
				break // at the end
			}
			prev = s
			checkScreen(t, "dialog", s, w, h)
			if !strings.Contains(s, "players-graph.json") {
				t.Fatalf("%dx%d: the source is not on screen while deciding:\n%s", w, h, s)
			}
			seen.WriteString(s)
			press(m, "down")
		}
		all := seen.String()
		for _, want := range []string{"REASONTEXT", "newValue1 ", "oldValue40 ", "LASTLINE", "newValue39 "} {
			if !strings.Contains(all, want) {
				t.Errorf("%dx%d: %q is never shown:\n%s", w, h, want, view(m))
			}
		}
		if s := view(m); strings.Contains(s, "more line") || !strings.Contains(s, "LASTLINE") {
			t.Errorf("%dx%d: the end of the change is not reachable:\n%s", w, h, s)
		}
		clk.Advance(time.Second)
		pumpRun(m, press(m, "a"))
		if _, res := fr.calls(); len(res) != 1 || !res[0].Approved || res[0].ProposalID != "call_u" {
			t.Fatalf("%dx%d: approving after scrolling: %+v", w, h, res)
		}
	}
}

// Scroll keys work at once, also in a stream of keys and right after the dialog
// opens: holding j or ↓ scrolls and never types into the input. Deciding keys stay
// guarded.
func TestScrollKeysAreNotGuarded(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, fr := openSized(t, clk, longCodeProposal(), 80, 24)
	d := m.dlg.(*proposalDialog)
	view(m) // drawn once, as the program does before any key
	for _, k := range []string{"j", "j", "j", "down", "down", "pgdown", "k"} {
		clk.Advance(30 * time.Millisecond)
		runCmd(m, m.updateCmd(keyMsg(k)))
	}
	if got := m.in.value(); got != "" {
		t.Errorf("scroll keys typed %q into the input", got)
	}
	// A page from the middle is the room less the two indicator lines and one
	// line of overlap.
	if want := 5 + (d.scroll.room - 3) - 1; d.scroll.offset != want {
		t.Errorf("offset after 5 down, a page down and one up: %d, want %d", d.scroll.offset, want)
	}
	clk.Advance(30 * time.Millisecond)
	runCmd(m, m.updateCmd(keyMsg("a")))
	if _, res := fr.calls(); len(res) != 0 {
		t.Fatalf("a in a stream of keys decided: %+v", res)
	}
	// Read, then hold j: it scrolls all the way, nothing is typed.
	m, _ = openSized(t, clk, longCodeProposal(), 80, 24)
	d = m.dlg.(*proposalDialog)
	view(m)
	clk.Advance(time.Second)
	for range 20 {
		clk.Advance(30 * time.Millisecond)
		runCmd(m, m.updateCmd(keyMsg("j")))
		view(m)
	}
	if got := m.in.value(); got != "" || d.scroll.offset != 20 {
		t.Errorf("holding j: input %q, offset %d", got, d.scroll.offset)
	}
}
