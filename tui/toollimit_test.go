package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// TestToolLimitIsAChoice: a run that stops at the tool-round limit offers the
// choice (as the web client's banner), a word typed in the input decides nothing,
// and each key resumes with its decision: continue (approved) or the answer now.
func TestToolLimitIsAChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  string
		more bool
		word string
	}{{"ctrl+g", true, "continuing"}, {"ctrl+s", false, "answer now"}} {
		fr := &fakeRunner{}
		fr.send = func(_ context.Context, _ agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
			tl := &convo.ToolLimit{RoundsUsed: 5, MaxExtended: 10}
			return agent.Result{ThreadID: "t1", ToolLimit: tl}, nil
		}
		fr.resume = func(_ context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
			emit(tok("Here is the answer."))
			return agent.Result{ThreadID: "t1", Text: "Here is the answer."}, nil
		}
		opts := testOptions()
		opts.Runner = fr
		m := newTestModel(t, opts)
		typeText(m, "search everything")
		pumpRun(m, press(m, "enter"))
		v := strings.Join(strings.Fields(view(m)), " ")
		if !strings.Contains(v, "used its 5 tool rounds") || !strings.Contains(v, "up to 10 rounds") {
			t.Fatalf("no choice offered:\n%s", v)
		}
		typeText(m, "cs")
		if _, res := fr.calls(); len(res) != 0 {
			t.Fatalf("typing decided the limit: %+v", res)
		}
		press(m, "backspace", "backspace")
		pumpRun(m, press(m, tc.key))
		_, res := fr.calls()
		if len(res) != 1 || res[0].Approved != tc.more {
			t.Fatalf("%s: resume decisions = %+v", tc.key, res)
		}
		if v := view(m); !strings.Contains(v, tc.word) || !strings.Contains(v, "Here is the answer.") {
			t.Fatalf("%s: view:\n%s", tc.key, v)
		}
		// Decided: the key does nothing more.
		press(m, tc.key)
		if _, res := fr.calls(); len(res) != 1 {
			t.Fatalf("%s decided twice", tc.key)
		}
	}
}

// TestToolLimitChoiceStaysWithItsThread: the choice belongs to the thread that
// stopped; once another thread is open, the limit keys resume nothing (resuming
// the new thread would approve whatever it is waiting on).
func TestToolLimitChoiceStaysWithItsThread(t *testing.T) {
	t.Parallel()
	fr := &fakeRunner{}
	fr.send = func(_ context.Context, _ agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
		return agent.Result{ThreadID: "t1", ToolLimit: &convo.ToolLimit{RoundsUsed: 5, MaxExtended: 10}}, nil
	}
	opts := testOptions()
	opts.Runner = fr
	m := newTestModel(t, opts)
	typeText(m, "search everything")
	pumpRun(m, press(m, "enter"))
	if v := view(m); !strings.Contains(strings.Join(strings.Fields(v), " "), "used its 5 tool rounds") {
		t.Fatalf("no choice offered:\n%s", v)
	}
	m.Update(openThreadMsg{id: ""}) // a new thread
	pumpRun(m, press(m, "ctrl+g"))
	pumpRun(m, press(m, "ctrl+s"))
	if _, res := fr.calls(); len(res) != 0 {
		t.Fatalf("a limit key resumed after the thread changed: %+v", res)
	}
}
