package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/graphdraw"
	"github.com/nodius/nodius-ai/internal/graphpic"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// ChangePictures computes a proposed change as pictures: the neighbourhood of what
// it touches before and after (graphpic.ProposedChange over the session's source).
// It only reads the graph. nil in Options means the proposal dialog shows the text
// diff alone.
type ChangePictures interface {
	ProposedChange(ctx context.Context, graphKey string, a datasource.Action) (graphpic.Change, error)
}

// pictureTimeout bounds reading the neighbourhood for a picture: the dialog must
// not wait on a slow source, the text diff is there meanwhile.
const pictureTimeout = 5 * time.Second

// pictureMsg carries a computed picture back to Update.
type pictureMsg struct {
	proposalID string
	change     graphpic.Change
	err        error
}

// changePicture is the picture component of the proposal dialog: loading, failed
// or ready, and drawn once per width.
type changePicture struct {
	proposalID string
	ready      bool
	change     graphpic.Change
	err        error

	lines []string
	w     int
}

// loadPicture starts computing the picture of p (in a command: it reads the
// source) unless it is already there, and hands it to the open dialog.
func (m *Model) loadPicture(p convo.Proposal) tea.Cmd {
	if m.opts.Pictures == nil {
		return nil
	}
	var cmd tea.Cmd
	if m.pic == nil || m.pic.proposalID != p.ID {
		m.pic = &changePicture{proposalID: p.ID}
		pics, graph, action := m.opts.Pictures, m.opts.GraphKey, p.Action
		cmd = func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), pictureTimeout)
			defer cancel()
			c, err := pics.ProposedChange(ctx, graph, action)
			return pictureMsg{proposalID: p.ID, change: c, err: err}
		}
	}
	if d, ok := m.dlg.(*proposalDialog); ok {
		d.pic, d.body = m.pic, nil
	}
	return cmd
}

// onPicture stores a computed picture; the dialog redraws with it.
func (m *Model) onPicture(msg pictureMsg) {
	if m.pic == nil || m.pic.proposalID != msg.proposalID {
		return // a picture for a proposal no longer shown
	}
	m.pic.ready, m.pic.change, m.pic.err, m.pic.lines = true, msg.change, msg.err, nil
	if d, ok := m.dlg.(*proposalDialog); ok && d.pic == m.pic {
		d.body = nil
	}
}

// render draws the picture w columns wide: one drawing with created parts marked
// +, removed ones −, changed ones ~ (the markers stay under NO_COLOR).
func (c *changePicture) render(th theme, w int) []string {
	if c.lines != nil && c.w == w {
		return c.lines
	}
	var out []string
	switch {
	case !c.ready:
		out = []string{th.dim.Render("drawing the change on the graph…")}
	case c.err != nil:
		out = []string{th.dim.Render("(no picture: " + termtext.OneLine(c.err.Error()) + ")")}
	default:
		pic := c.change.Draw(graphpic.Unified, graphdraw.Options{Width: w, Color: !th.noColor})
		out = strings.Split(strings.TrimSuffix(pic, "\n"), "\n")
	}
	c.lines, c.w = append(out, ""), w
	return c.lines
}
