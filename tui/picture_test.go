package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/graphpic"
)

// demoPictures draws proposals against the embedded demo graph, as the CLI wires
// graphpic over the session's source.
type demoPictures struct{ src datasource.Source }

func (d demoPictures) ProposedChange(ctx context.Context, graphKey string, a datasource.Action) (graphpic.Change, error) {
	if d.src == nil {
		return graphpic.Change{}, errors.New("source unreachable")
	}
	return graphpic.ProposedChange(ctx, d.src, graphKey, a, 1)
}

// runCmds runs a command and those it batches, handing every message but frame
// ticks back to the model; a command still blocked after a second (reading the
// run's next events) is left alone.
func runCmds(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-got:
	case <-time.After(time.Second):
		return
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmds(m, c)
		}
	case frameMsg, nil:
	default:
		_, next := m.Update(msg)
		runCmds(m, next)
	}
}

func TestProposalDialogPicture(t *testing.T) {
	t.Parallel()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pics ChangePictures
		want []string
	}{
		{"drawn", demoPictures{src}, []string{"− fetch-api", "root", "filter-active", "error-handler", "+ created   − removed"}},
		{"failed", demoPictures{}, []string{"(no picture: source unreachable)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true, Now: clk.Now, Pictures: tc.pics})
			m.Update(tea.WindowSizeMsg{Width: 100, Height: 50})
			startQuestion(t, m, "remove fetch-api")
			_, cmd := m.Update(runBatchMsg{runID: m.run.id, items: []runItem{{ev: convo.Event{Type: convo.EventProposal, Proposal: sampleProposal()}}}})
			if !strings.Contains(view(m), "drawing the change on the graph") {
				t.Errorf("no placeholder while the picture is computed:\n%s", view(m))
			}
			runCmds(m, cmd)
			v := view(m)
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("dialog lacks %q:\n%s", w, v)
				}
			}
			// The text diff is still there, below the picture.
			if !strings.Contains(v, "fetch-api is unused") {
				t.Errorf("the reason is gone:\n%s", v)
			}
			// Reopening after esc reuses the picture: no new command.
			clk.Advance(time.Second)
			press(m, "esc")
			if cmd := press(m, "ctrl+p"); cmd != nil {
				t.Error("reopening recomputed the picture")
			}
			if !strings.Contains(view(m), tc.want[0]) {
				t.Errorf("reopened dialog lost the picture:\n%s", view(m))
			}
		})
	}
}
