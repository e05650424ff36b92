package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestHeaderSaysTheGraphChanged: a change by another editor is said in the
// header until the next question is sent.
func TestHeaderSaysTheGraphChanged(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, testOptions())
	m.opts.Runner = &fakeRunner{}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	header := func() string { return strings.Split(view(m), "\n")[0] }
	if strings.Contains(header(), changedByOthers) {
		t.Fatalf("said before any change: %q", header())
	}
	m.Update(GraphChangedMsg{})
	if !strings.Contains(header(), changedByOthers) {
		t.Fatalf("header %q does not say the graph changed", header())
	}
	startQuestion(t, m, "and now?")
	if strings.Contains(header(), changedByOthers) {
		t.Fatalf("still said after the next question: %q", header())
	}
}
