package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// undoRunner is a fakeRunner that can undo: a dry run reports what it would revert;
// a real one is counted.
type undoRunner struct {
	fakeRunner
	mu     sync.Mutex
	undone []agent.UndoRequest
	refuse bool
	many   int // this many more lines reverted: a long undo
}

func (u *undoRunner) Undo(_ context.Context, req agent.UndoRequest) (agent.UndoResult, error) {
	res := agent.UndoResult{ThreadID: req.ThreadID, ProposalID: "c1", Change: "create node n1 (log-node)",
		Reversed: []string{"remove node n1 (created by the change)"}, DryRun: req.DryRun}
	for i := range u.many {
		res.Reversed = append(res.Reversed, fmt.Sprintf("restore edge e%d of n1", i+1))
	}
	res.Change += " \u202e"
	if u.refuse && !req.Force {
		res.Drift = []string{"node n1 got new edges since (e9)"}
		return res, errors.New("cannot undo create node n1: node n1 got new edges since (e9); nothing was changed")
	}
	if !req.DryRun {
		u.mu.Lock()
		u.undone = append(u.undone, req)
		u.mu.Unlock()
	}
	return res, nil
}

func undoModel(t *testing.T, u *undoRunner) (*Model, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	opts := testOptions()
	opts.Runner, opts.Now = u, clock.Now
	m := newTestModel(t, opts)
	m.threadID = "ai_1"
	return m, clock
}

// ctrl+z shows what will be reverted; y (after the quiet pause) undoes once, and the
// transcript says so; a y typed at once, or esc, undoes nothing.
func TestUndoKeyConfirms(t *testing.T) {
	u := &undoRunner{}
	m, clock := undoModel(t, u)
	runCmd(m, press(m, "ctrl+z"))
	v := view(m)
	if !strings.Contains(v, "Undo the last applied change") || !strings.Contains(v, "remove node n1") || !strings.Contains(v, "y undo") {
		t.Fatalf("confirmation:\n%s", v)
	}
	press(m, "y") // at once: too soon to be meant for the dialog
	if len(u.undone) != 0 {
		t.Fatal("a y typed at once undid the change")
	}
	clock.Advance(time.Second)
	runCmd(m, press(m, "y"))
	if len(u.undone) != 1 || u.undone[0].Force {
		t.Fatalf("undone %+v, want one unforced undo", u.undone)
	}
	if v := view(m); !strings.Contains(v, "Undone: create node n1") || strings.Contains(v, "y undo") {
		t.Fatalf("after undo:\n%s", v)
	}
	runCmd(m, press(m, "ctrl+z"))
	clock.Advance(time.Second)
	press(m, "esc")
	if len(u.undone) != 1 || m.dlg != nil {
		t.Fatal("esc did not cancel")
	}
}

// When the graph changed since, the dialog says what changed; f forces after a
// second preview.
func TestUndoKeyRefusalAndForce(t *testing.T) {
	u := &undoRunner{refuse: true}
	m, clock := undoModel(t, u)
	runCmd(m, press(m, "ctrl+z"))
	clock.Advance(time.Second)
	press(m, "y")
	if len(u.undone) != 0 {
		t.Fatal("y undid a refused change")
	}
	if v := view(m); !strings.Contains(v, "got new edges since (e9)") || !strings.Contains(v, "f reverse only what still matches") {
		t.Fatalf("refusal:\n%s", v)
	}
	runCmd(m, press(m, "f"))
	clock.Advance(time.Second)
	runCmd(m, press(m, "y"))
	if len(u.undone) != 1 || !u.undone[0].Force {
		t.Fatalf("undone %+v, want one forced undo", u.undone)
	}
}

// The undo confirmation is laid out like the proposal dialog: the end of the
// conversation stays visible above it (or beside it when wide), the frame and the
// keys are whole, at every size.
func TestUndoDialogLayout(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
		m := newTestModel(t, Options{GraphKey: "demo", NoColor: true, Runner: &undoRunner{}, Now: clock.Now})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		startQuestion(t, m, "add a log node")
		feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, tok("I created n1: the EXPLANATION is here."))
		end(m, agent.Result{ThreadID: "t1"}, nil)
		runCmd(m, press(m, "ctrl+z"))
		screen := view(m)
		checkScreen(t, "undo dialog", screen, w, h)
		for _, want := range []string{"Undo the last applied change", "y undo", "└", "┘"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%dx%d: the dialog lacks %q:\n%s", w, h, want, screen)
			}
		}
		if h >= 24 && !strings.Contains(screen, "EXPLANATION") {
			t.Errorf("%dx%d: the conversation is hidden behind the undo dialog:\n%s", w, h, screen)
		}
		if strings.Contains(screen, "scroll") {
			t.Errorf("%dx%d: the status bar offers to scroll a dialog that does not:\n%s", w, h, screen)
		}
	}
}

// A long undo scrolls to its last line at 40×18 and 80×24, the keys always shown;
// scrolling is not guarded, y is; a direction control is shown, not hidden.
func TestUndoDialogScrollsToTheEnd(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		u := &undoRunner{many: 60}
		m, clock := undoModel(t, u)
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		runCmd(m, press(m, "ctrl+z"))
		var seen strings.Builder
		prev := ""
		for range 500 {
			s := view(m)
			checkScreen(t, "undo", s, sz[0], sz[1])
			if !strings.Contains(s, "y undo") {
				t.Fatalf("%v: the keys are cut:\n%s", sz, s)
			}
			if s == prev {
				break
			}
			prev = s
			seen.WriteString(s)
			press(m, "j")
		}
		all := seen.String()
		for _, want := range []string{"restore edge e60 of n1", "remove node n1", "⟨U+202E⟩"} {
			if !strings.Contains(all, want) {
				t.Errorf("%v: %q never shown:\n%s", sz, want, view(m))
			}
		}
		if len(u.undone) != 0 {
			t.Fatal("scrolling undid the change")
		}
		clock.Advance(time.Second)
		runCmd(m, press(m, "y"))
		if len(u.undone) != 1 {
			t.Fatalf("%v: y after scrolling: %+v", sz, u.undone)
		}
	}
}
