package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/graphdraw"
	"github.com/nodius/nodius-ai/internal/graphpic"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/tui"
)

// pictureDepth is how many hops around the touched nodes a proposal picture shows.
const pictureDepth = 1

// drawOptions are the drawing options for this output: its width, colour only on
// a terminal without NO_COLOR, ASCII when the locale cannot show box drawing.
func drawOptions(ios *IOStreams) graphdraw.Options {
	return graphdraw.Options{Width: outputWidth(ios), Color: ios.ColorEnabled(), ASCII: !utf8Locale(ios.Getenv)}
}

// writeProposalPictures draws each proposal of a thread against the thread's own
// source (see useThreadSource; --source draws from another): a pending or rejected
// one as the neighbourhood before and after it, an approved one as the graph around
// it now, with what it created marked (an undone one says so, with its time). A
// picture that cannot be made (the graph has moved on, the source is unreachable)
// is a line saying why; the transcript above it stands. It writes to w (the pager's
// buffer on a terminal), sized and coloured for f's output.
func writeProposalPictures(ctx context.Context, f *Factory, w io.Writer, tr threads.Transcript) error {
	fmt.Fprintf(w, "\n## Pictures\n")
	if len(tr.Proposals) == 0 {
		fmt.Fprintln(w, "\nThis thread has no proposals to draw.")
		return nil
	}
	// A display changes nothing: the thread's source is drawn from even when another
	// is configured, and stderr says so.
	overridden, err := f.useThreadSource(ctx, tr.Thread, false)
	if isUntrustedSource(err) {
		fmt.Fprintf(w, "\n(no pictures: %s)\n", termtext.OneLine(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	if overridden != "" {
		fmt.Fprintf(f.IO.ErrOut, "Drawing from %s, the thread's source, not %s (the source in effect); pass --source to draw from another.\n",
			termtext.OneLine(tr.Thread.Source), termtext.OneLine(overridden))
	}
	src, err := f.Source(ctx)
	if err != nil {
		// The transcript above stands; say why there is nothing to draw.
		fmt.Fprintf(w, "\n(no pictures: %s)\n", termtext.OneLine(err.Error()))
		return nil
	}
	opts := drawOptions(f.IO)
	graph := tr.Thread.GraphKey
	undone := map[string]time.Time{} // proposal -> when its change was undone
	for _, u := range tr.Undos {
		if u.State == convo.Undone {
			undone[u.ProposalID] = u.UndoneAt
		}
	}
	for _, p := range tr.Proposals {
		at, isUndone := undone[p.ID]
		state := string(p.Decision)
		if isUndone {
			state += ", undone " + at.Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "\nProposal %s · %s · %s\n", termtext.OneLine(p.ID), termtext.OneLine(string(p.Action.Type)), state)
		if r := termtext.OneLine(p.Reason); r != "" {
			fmt.Fprintf(w, "%s\n", r)
		}
		fmt.Fprintln(w)
		var pic string
		switch p.Decision {
		case convo.Approved:
			var res datasource.Created
			if p.Result != nil {
				res = p.Result.Created
			}
			ap, err := graphpic.Applied(ctx, src, graph, p.Action, res, pictureDepth)
			if err != nil {
				fmt.Fprintf(w, "(no picture: %s)\n", termtext.OneLine(err.Error()))
				continue
			}
			if isUndone {
				// Undone: nothing it created or removed is expected in the graph.
				pic = "applied, then undone; the graph around it now:\n" + graphdraw.Draw(ap.Graph, opts)
				break
			}
			pic = "applied; the graph around it now:\n" + graphdraw.Draw(ap.Graph, opts)
			if len(ap.Removed) > 0 {
				pic += "removed: " + strings.Join(ap.Removed, ", ") + "\n"
			}
			if ap.Unseen {
				pic += "note: this graph does not show the change (it was applied to another copy, such as the demo's memory, or undone since)\n"
			}
			pic += graphpic.Legend(opts)
		default:
			c, err := graphpic.ProposedChange(ctx, src, graph, p.Action, pictureDepth)
			if err != nil {
				fmt.Fprintf(w, "(no picture: %s)\n", termtext.OneLine(err.Error()))
				continue
			}
			pic = c.Draw(graphpic.BeforeAfter, opts)
		}
		if _, err := io.WriteString(w, pic); err != nil {
			return err
		}
	}
	return nil
}

// changePictures draws proposals for the chat dialog from the session's source.
type changePictures struct{ src datasource.Source }

// chatPictures is the dialog's picture maker, or nil when the session reads no
// graph itself (a remote agent): the dialog then shows the text diff alone.
func chatPictures(rt *Runtime) tui.ChangePictures {
	if rt.Source == nil {
		return nil
	}
	return changePictures{rt.Source}
}

func (c changePictures) ProposedChange(ctx context.Context, graphKey string, a datasource.Action) (graphpic.Change, error) {
	if a.Type == datasource.CreateGraphAction {
		// Home mode: the change is a new graph, not a part of one to draw.
		if c := a.CreateGraph; c != nil && c.Type == "htmlClass" {
			return graphpic.Change{}, errors.New("a new HTML class, its graph holding one html root node")
		}
		return graphpic.Change{}, errors.New("a new graph, with its Starter and Return nodes")
	}
	return graphpic.ProposedChange(ctx, c.src, graphKey, a, pictureDepth)
}
