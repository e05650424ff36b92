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
)

// A tool call focused with Tab is scrolled into view, however much was said
// after it: each Tab shows the call it focuses, whole when it fits.
func TestFocusedToolCallIsInView(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		m := newTestModel(t, testOptions())
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		m.opts.Runner = &fakeRunner{}
		startQuestion(t, m, "q")
		for i := 1; i <= 3; i++ {
			call := convo.ToolCall{ID: fmt.Sprint("c", i), Name: fmt.Sprintf("tool%d", i), Arguments: `{"nodeKey":"fetch-api"}`}
			feed(m, convo.Event{Type: convo.EventToolStart, ToolCall: call},
				convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: fmt.Sprintf("RESULT%d", i)},
				tok(strings.Repeat(fmt.Sprintf("Paragraph %d of what the assistant found out. ", i), 12)+"\n\n"))
		}
		end(m, agent.Result{}, nil)
		view(m)
		for _, want := range []string{"tool3", "tool2", "tool1"} {
			press(m, "tab")
			v := view(m)
			if !strings.Contains(v, "▶ ✓ "+want) || !strings.Contains(v, "RESULT"+want[4:]) {
				t.Errorf("%dx%d: tab focused %s out of view:\n%s", sz[0], sz[1], want, v)
			}
		}
		press(m, "esc", "end")
		if v := view(m); !strings.Contains(v, "Paragraph 3") {
			t.Errorf("%dx%d: end does not go back to the end:\n%s", sz[0], sz[1], v)
		}
	}
}

// The header names the source an approval writes to at every width: whole at
// 80 columns (the model goes first), shortened to its end at 40.
func TestHeaderKeepsTheSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    int
		want string
	}{{200, "file:/home/someone/projects/nba/graphs/players-graph.json · no provider"},
		{80, "/graphs/players-graph.json"}, {60, "/players-graph.json"}, {40, "/players-graph.json"}} {
		o := testOptions()
		o.Source = longSource
		o.GraphName = "NBA Stats Workflow"
		m := newTestModel(t, o)
		m.Update(tea.WindowSizeMsg{Width: tc.w, Height: 24})
		m.hdr.setTitle("change the api code")
		h := strings.Split(view(m), "\n")[0]
		if !strings.Contains(h, tc.want) || !strings.Contains(h, "◆ NBA") || ansi.StringWidth(h) > tc.w {
			t.Errorf("%d: header %q, want %q in it", tc.w, h, tc.want)
		}
	}
}

// Accepting a mention leaves one space after it: a space typed next from habit
// is not a second one, and none is added before a blank already there.
func TestMentionLeavesOneSpace(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	m.Update(nodesLoadedMsg{nodes: []NodeRef{{Key: "fetch-api", Type: "api-call"}, {Key: "root", Type: "starter"}}})
	typeText(m, "what does @fe")
	press(m, "tab")
	typeText(m, " do  with")
	if got := m.in.value(); got != "what does @fetch-api do  with" {
		t.Errorf("typing a space after accepting: %q", got)
	}
	m.in.reset()
	typeText(m, "ask @ro about it")
	for range len(" about it") {
		m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	}
	press(m, "tab")
	if got := m.in.value(); got != "ask @root about it" {
		t.Errorf("accepting before a space: %q", got)
	}
}

// What is written in $EDITOR (ctrl+o) comes back to the input to be read over;
// nothing is sent until enter.
func TestEditorTextComesBackForReview(t *testing.T) {
	t.Parallel()
	fr := &fakeRunner{}
	m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", NoColor: true})
	m.Update(editorDoneMsg{text: "what does\nfetch-api do?"})
	if sends, _ := fr.calls(); len(sends) != 0 || m.run != nil {
		t.Fatalf("the editor's text was sent as it closed: %+v", sends)
	}
	if got := m.in.value(); got != "what does\nfetch-api do?" {
		t.Errorf("input after the editor: %q", got)
	}
	if v := view(m); !strings.Contains(v, "enter sends it") {
		t.Errorf("no word on what to do next:\n%s", v)
	}
	pumpRun(m, press(m, "enter"))
	if sends, _ := fr.calls(); len(sends) != 1 || sends[0].Text != "what does\nfetch-api do?" {
		t.Fatalf("enter after the editor: %+v", sends)
	}
}

// The status bar's keys follow the state: after f (typing feedback) it offers
// sending the feedback, not approving; back in the dialog, approving again.
func TestStatusHintsFollowTheDialog(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, _ := openProposal(t, clk)
	clk.Advance(time.Second)
	status := func() string { l := strings.Split(view(m), "\n"); return l[len(l)-1] }
	if s := status(); !strings.Contains(s, "a approve") {
		t.Fatalf("dialog status: %q", s)
	}
	press(m, "f")
	if s := status(); strings.Contains(s, "approve") || !strings.Contains(s, "enter send the feedback") {
		t.Errorf("after f the status bar says %q", s)
	}
	press(m, "esc")
	if s := status(); !strings.Contains(s, "a approve") {
		t.Errorf("back from the feedback: %q", s)
	}
}
