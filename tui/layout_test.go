package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// checkScreen fails when the screen is not exactly w×h or a line overflows.
func checkScreen(t *testing.T, name string, screen string, w, h int) []string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("%s %dx%d: %d lines", name, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%s %dx%d: line %d is %d wide: %q", name, w, h, i, lw, l)
		}
	}
	return lines
}

var sizes = [][2]int{{40, 18}, {40, 30}, {80, 24}, {94, 30}, {120, 30}, {160, 40}, {250, 50}}

// Every key of the help is visible at every width from 40 to 250: in columns when
// there is room, scrolled (and saying so) when not; nothing is cut with "…".
func TestHelpShowsEveryKeyAtEveryWidth(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		m := newTestModel(t, testOptions())
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		press(m, "?")
		var seen strings.Builder
		for range 40 { // page through
			screen := view(m)
			checkScreen(t, "help", screen, w, h)
			seen.WriteString(screen)
			if !strings.Contains(screen, "more") {
				break
			}
			press(m, "pgdown")
		}
		all := seen.String()
		for _, sec := range helpSections(newKeyMap()) {
			for _, e := range sec.entries {
				if !strings.Contains(all, e.key) {
					t.Errorf("%dx%d: key %q not shown", w, h, e.key)
				}
				for _, word := range strings.Fields(e.what) {
					if !strings.Contains(all, word) {
						t.Errorf("%dx%d: %q of %q not shown", w, h, word, e.what)
					}
				}
			}
		}
		if strings.Contains(all, "… │") || strings.Contains(all, "…│") {
			t.Errorf("%dx%d: help text cut:\n%s", w, h, all)
		}
	}
}

// ? opens help only on an empty input, and ? again types a question mark; Esc on
// an idle input clears it; Ctrl+D on an empty input quits.
func TestQuestionMarkEscAndCtrlD(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, testOptions())
	press(m, "?")
	if _, ok := m.dlg.(*helpDialog); !ok {
		t.Fatal("? on an empty input did not open help")
	}
	runCmd(m, press(m, "?"))
	if m.dlg != nil || m.in.value() != "?" {
		t.Fatalf("? in help: dialog %T, input %q", m.dlg, m.in.value())
	}
	typeText(m, " why?")
	if m.dlg != nil || m.in.value() != "? why?" {
		t.Fatalf("a question starting with ? could not be typed: %q", m.in.value())
	}
	press(m, "esc")
	if m.in.value() != "" {
		t.Fatalf("esc left %q", m.in.value())
	}
	typeText(m, "abc")
	if cmd := press(m, "ctrl+d"); cmd != nil && isQuit(cmd) {
		t.Fatal("ctrl+d with text in the input quit")
	}
	press(m, "esc")
	if cmd := press(m, "ctrl+d"); cmd == nil || !isQuit(cmd) {
		t.Fatal("ctrl+d on an empty input did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// The proposal dialog keeps the end of the conversation visible (over its lower
// part, or beside it when wide) and never loses its frame or its keys; on a small
// terminal the change scrolls and says there is more.
func TestProposalDialogLayout(t *testing.T) {
	t.Parallel()
	big := sampleProposal()
	for i := range 80 {
		big.Action.DeleteNode.RemovedEdges = append(big.Action.DeleteNode.RemovedEdges, big.Action.DeleteNode.RemovedEdges[i%2])
	}
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		for _, p := range []*convo.Proposal{sampleProposal(), big} {
			m := newTestModel(t, Options{GraphKey: "demo", NoColor: true, Runner: &fakeRunner{}})
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			startQuestion(t, m, "remove fetch-api")
			feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, tok("I suggest deleting fetch-api: the EXPLANATION is here."),
				convo.Event{Type: convo.EventProposal, Proposal: p})
			end(m, agent.Result{ThreadID: "t1", Proposal: p}, nil)
			screen := view(m)
			lines := checkScreen(t, "dialog", screen, w, h)
			if !strings.Contains(screen, "decide later") && !strings.Contains(screen, "later") {
				t.Errorf("%dx%d: the dialog's keys are cut:\n%s", w, h, screen)
			}
			if !strings.Contains(screen, "└") || !strings.Contains(screen, "┘") {
				t.Errorf("%dx%d: no bottom border:\n%s", w, h, screen)
			}
			if h >= 24 && !strings.Contains(screen, "EXPLANATION") {
				t.Errorf("%dx%d: the explanation is hidden by the dialog:\n%s", w, h, screen)
			}
			if p == big && !strings.Contains(screen, "more line") {
				t.Errorf("%dx%d: a long change does not say there is more:\n%s", w, h, screen)
			}
			_ = lines
		}
	}
}

// Reasoning shows collapsed with a correct plural and expands with ctrl+x (every
// answer, and the ones that come later).
func TestReasoningExpands(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, testOptions())
	m.opts.Runner = &fakeRunner{}
	startQuestion(t, m, "q1")
	feed(m, convo.Event{Type: convo.EventReasoning, Text: "Hmm."}, tok("One."))
	end(m, agent.Result{}, nil)
	v := view(m)
	if !strings.Contains(v, "thought for 1 word ") || strings.Contains(v, "Hmm.") {
		t.Fatalf("collapsed reasoning:\n%s", v)
	}
	press(m, "ctrl+x")
	if v = view(m); !strings.Contains(v, "Hmm.") {
		t.Fatalf("ctrl+x did not expand:\n%s", v)
	}
	startQuestion(t, m, "q2")
	feed(m, convo.Event{Type: convo.EventReasoning, Text: "Let me check the edges first."}, tok("Two."))
	end(m, agent.Result{}, nil)
	if v = view(m); !strings.Contains(v, "check the edges") {
		t.Fatalf("a later answer is not expanded:\n%s", v)
	}
	press(m, "ctrl+x")
	if v = view(m); strings.Contains(v, "Hmm.") || !strings.Contains(v, "thought for 6 words") {
		t.Fatalf("ctrl+x did not collapse:\n%s", v)
	}
}

// The status bar: no cost for an unpriced endpoint, key hints that follow the
// state, and "new output below" when scrolled up while output arrives.
func TestStatusBarFollowsState(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, testOptions())
	m.opts.Runner = &fakeRunner{}
	status := func() string { l := strings.Split(view(m), "\n"); return l[len(l)-1] }
	if s := status(); strings.Contains(s, "$") || !strings.Contains(s, "enter send") || !strings.Contains(s, "ctrl+t threads") {
		t.Errorf("idle, unpriced: %q", s)
	}
	typeText(m, "hello")
	if s := status(); !strings.Contains(s, "alt+enter new line") || !strings.Contains(s, "esc clear") {
		t.Errorf("typing: %q", s)
	}
	press(m, "enter")
	if s := status(); !strings.Contains(s, "esc stop") {
		t.Errorf("streaming: %q", s)
	}
	for i := range 60 {
		feed(m, tok(fmt.Sprintf("line %d\n\n", i)))
	}
	press(m, "pgup")
	if s := status(); !strings.Contains(s, "end follow") {
		t.Errorf("scrolled: %q", s)
	}
	feed(m, tok("more text arrives\n\n"))
	if s := status(); !strings.Contains(s, "new output below") {
		t.Errorf("scrolled while output arrives: %q", s)
	}
	press(m, "end")
	if s := status(); strings.Contains(s, "new output below") {
		t.Errorf("still says new output after end: %q", s)
	}

	priced := testOptions()
	priced.Priced = true
	p := newTestModel(t, priced)
	if l := strings.Split(view(p), "\n"); !strings.Contains(l[len(l)-1], "$0.0000") {
		t.Errorf("priced endpoint shows no cost: %q", l[len(l)-1])
	}
}

// A long thread title is cut; the source and model stay in the header.
func TestHeaderTruncatesTheTitle(t *testing.T) {
	t.Parallel()
	for _, w := range []int{60, 80, 160} {
		m := newTestModel(t, testOptions())
		m.Update(tea.WindowSizeMsg{Width: w, Height: 20})
		m.hdr.setTitle(strings.Repeat("a very long thread title ", 10))
		h := strings.Split(view(m), "\n")[0]
		if !strings.Contains(h, "demo (embedded)") || !strings.Contains(h, "no provider") || !strings.Contains(h, "…") {
			t.Errorf("%d: header %q", w, h)
		}
		if ansi.StringWidth(h) > w {
			t.Errorf("%d: header too wide: %q", w, h)
		}
	}
}

// A focused tool call opens its whole result with enter.
func TestToolResultViewer(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, testOptions())
	m.opts.Runner = &fakeRunner{}
	startQuestion(t, m, "q")
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf("result line %d", i))
	}
	call := convo.ToolCall{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}
	feed(m, convo.Event{Type: convo.EventToolStart, ToolCall: call},
		convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: strings.Join(long, "\n")})
	end(m, agent.Result{}, nil)
	press(m, "tab")
	if v := view(m); !strings.Contains(v, "more lines · enter shows all") {
		t.Fatalf("expanded badge:\n%s", v)
	}
	press(m, "enter")
	if _, ok := m.dlg.(*textViewer); !ok {
		t.Fatalf("enter opened %T", m.dlg)
	}
	for range 10 {
		view(m) // drawn before each key, as the program does
		press(m, "pgdown")
	}
	if v := view(m); !strings.Contains(v, "result line 39") {
		t.Fatalf("the end of the result is not reachable:\n%s", v)
	}
	press(m, "esc")
	if m.dlg != nil {
		t.Fatal("esc did not close the viewer")
	}
}

// The no-provider hint never splits a flag across lines.
func TestNoProviderHintKeepsFlagsWhole(t *testing.T) {
	t.Parallel()
	for w := 40; w <= 100; w++ {
		o := testOptions()
		o.ConfigHelp = "no LLM provider configured — set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --base-url for an OpenAI-compatible server (ollama needs no key: --provider ollama)"
		m := newTestModel(t, o)
		m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
		v := view(m)
		for _, flag := range []string{"--base-url", "--provider", "ANTHROPIC_API_KEY", "OpenAI-compatible"} {
			if !strings.Contains(v, flag) {
				t.Errorf("%d columns: %q split:\n%s", w, flag, v)
			}
		}
	}
}

// A stall shows the elapsed time; a retry its attempt, cause and wait; and the
// final error says what happened (nothing arrived, after how many attempts).
func TestStallAndRetryDisplay(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	o := testOptions()
	o.Now = clk.Now
	o.Runner = &fakeRunner{}
	m := newTestModel(t, o)
	status := func() string { l := strings.Split(view(m), "\n"); return l[len(l)-1] }
	startQuestion(t, m, "q")
	feed(m, convo.Event{Type: convo.EventStatus, State: convo.StateWaiting})
	clk.Advance(42 * time.Second)
	if s := status(); !strings.Contains(s, "thinking 42s") {
		t.Errorf("stalled: %q", s)
	}
	feed(m, convo.Event{Type: convo.EventStatus, State: convo.StateRetrying, Attempt: 2, Attempts: 3, Wait: 20 * time.Second,
		Err: &fault.Error{Code: fault.RateLimit}})
	clk.Advance(5 * time.Second)
	if s := status(); !strings.Contains(s, "attempt 2 of 3 after rate_limit, next in 15s") {
		t.Errorf("waiting to retry: %q", s)
	}
	clk.Advance(25 * time.Second)
	if s := status(); !strings.Contains(s, "attempt 2 of 3") || !strings.Contains(s, "10s") {
		t.Errorf("retrying: %q", s)
	}
	feed(m, convo.Event{Type: convo.EventStatus, State: convo.StateRetrying, Attempt: 3, Attempts: 3, Wait: time.Second,
		Err: &fault.Error{Code: fault.Timeout}})
	clk.Advance(70 * time.Second)
	end(m, agent.Result{}, &fault.Error{Code: fault.Timeout, Retryable: true, Message: "deepseek stopped sending data mid-answer — retry"})
	v := view(m)
	if strings.Contains(v, "mid-answer") || !strings.Contains(v, "sent nothing back") || !strings.Contains(v, "attempts over 2m22s") {
		t.Errorf("final error:\n%s", v)
	}
}
