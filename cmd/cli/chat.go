package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/tui"
)

func newChatCmd(f *Factory) *cobra.Command {
	o := &askOptions{}
	cmd := &cobra.Command{
		Use:   "chat --graph KEY [--thread ID | --continue]",
		Short: "Chat about a graph in the terminal (interactive TUI)",
		Long: `Open an interactive chat about a graph: answers stream in as rendered markdown,
tool calls show as live badges, and proposed graph edits open a dialog to approve or
reject. Press ? (or F1) inside for every key: ctrl+t threads, ctrl+o $EDITOR,
ctrl+y copy the last answer, ctrl+x show the reasoning, esc stop, ctrl+d quit.

When standard input or output is not a terminal, chat behaves exactly like 'ask'.`,
		Example: `  nodius-ai chat --graph demo
  nodius-ai chat --graph demo --continue
  echo "what does fetch-api do?" | nodius-ai chat --graph demo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if !f.IO.InTTY || !f.IO.OutTTY {
				// Not a terminal: the same path, flags and exit codes as ask.
				q, err := readQuestion(f.IO, args)
				if err != nil {
					return err
				}
				o.Question = q
				return runAsk(cmd.Context(), f, *o)
			}
			return runChat(cmd.Context(), f, *o)
		},
	}
	addThreadFlags(cmd, o)
	addOutputFlags(cmd, o) // used only without a terminal, as for ask
	return cmd
}

// runChat wires the runtime into the TUI and runs it on the alternate screen.
func runChat(ctx context.Context, f *Factory, o askOptions) error {
	// What the source says when it opens goes to stderr, which the screen then
	// covers: keep those lines to show them on the welcome too. While the screen
	// is up, stderr must not draw over it (a file source parsed on first use says
	// its notices then): see noteRecorder.
	notes := &noteRecorder{out: f.IO.ErrOut}
	f.IO.ErrOut = notes
	// A continued thread is shown, drawn and decided on the source it happened on,
	// as ask, approve and reject do.
	if err := f.adoptSourceFor(ctx, o); err != nil {
		return err
	}
	rt, err := f.Runtime(ctx)
	if err != nil {
		return err
	}
	live := holdSession(rt) // chat_live.go
	graphKey := o.Graph
	if graphKey == "" {
		graphKey = rt.DefaultGraph
	}
	if graphKey == "" {
		home, ok, err := homeGraph(ctx, rt)
		if err != nil {
			return err
		}
		if !ok {
			return usageError("--graph is required for this source")
		}
		graphKey = home
	}
	g := datasource.Graph{Key: graphKey, Name: "Home (no graph open)"}
	if graphKey != tools.HomeGraphKey {
		if g, err = chatGraph(ctx, rt, graphKey); err != nil {
			return err // a missing graph becomes a usage error listing the source's graphs
		}
	}
	threadID := ""
	if o.Thread != "" {
		if rt.Remote != nil {
			threadID, err = resolveRemoteThread(ctx, rt, o.Thread, graphKey, true)
		} else {
			threadID, err = threadsResolve(ctx, rt.Store, o.Thread)
		}
		if err != nil {
			return err
		}
	}
	// One chat per thread: a thread another chat works on is refused here, before
	// the screen opens (and, picked later in the screen, when sending to it).
	var lock *chatLock
	if rt.Remote == nil && rt.Store != nil {
		lock = newChatLock(rt.Store.Path(), f.rerunFlags())
		defer lock.release()
		first := threadID
		if first == "" && o.Continue {
			if th, err := rt.Store.Latest(ctx, graphKey); err == nil {
				first = th.ID
			}
		}
		if err := lock.hold(first); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
	}
	opts := tui.Options{
		GraphKey:      graphKey,
		GraphName:     g.Name,
		Source:        describeSource(rt.Source, rt.Config.Source),
		Provider:      rt.Config.Provider,
		Model:         rt.Config.Model,
		ContextWindow: rt.Config.Entry.ContextWindow,
		Priced:        rt.Config.Entry.Pricing != (config.Pricing{}),
		Threads:       storeAdapter{rt.Store},
		Nodes:         chatNodes(rt, graphKey),
		Pictures:      chatPictures(rt),
		ThreadID:      threadID,
		Continue:      o.Continue,
		Notes:         notes.hold(),
		NoColor:       f.IO.Getenv("NO_COLOR") != "" || f.IO.Getenv("TERM") == "dumb",
		Dark:          true,
	}
	if rt.Remote != nil {
		opts.Provider, opts.Model = remote.Provider, "assistant"
		opts.Runner = rt.Runner
	} else if rt.Provider != nil {
		opts.Runner = chatRunner{rt: rt, lock: lock}
	} else if ce, ok := fault.As(rt.Config.RequireLLM()); ok {
		opts.ConfigErr = ce
		opts.ConfigHelp = ce.Message
	}
	m := tui.New(opts)
	m.Sheets(g.Sheets)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out))
	rt.Loading.set(func(stage string) { p.Send(tui.LoadingMsg{Stage: stage}) })
	notes.showWith(func(n string) { p.Send(tui.NoteMsg{Text: n}) })
	live.watch(rt, graphKey, func() { p.Send(tui.GraphChangedMsg{}) })
	_, err = p.Run()
	rt.Loading.set(nil)
	notes.release()
	syncAfterChat(ctx, f)
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func describeSource(src datasource.Source, configured string) string {
	if d, ok := src.(datasource.Describer); ok {
		return d.Describe()
	}
	return configured
}

// storeAdapter fits *threads.Store to the TUI's small Threads interface.
type storeAdapter struct{ s *threads.Store }

func (a storeAdapter) List(ctx context.Context, graph string) ([]convo.Thread, error) {
	return a.s.List(ctx, threads.ListOptions{Graph: graph})
}
func (a storeAdapter) History(ctx context.Context, id string) ([]convo.Message, error) {
	return a.s.History(ctx, id)
}
func (a storeAdapter) Rename(ctx context.Context, id, title string) error {
	return a.s.Rename(ctx, id, title)
}
func (a storeAdapter) Delete(ctx context.Context, id string) error { return a.s.Delete(ctx, id) }
func (a storeAdapter) PendingProposal(ctx context.Context, id string) (*convo.Proposal, error) {
	return a.s.PendingProposal(ctx, id)
}
func (a storeAdapter) Proposal(ctx context.Context, threadID, id string) (convo.Proposal, error) {
	return a.s.Proposal(ctx, threadID, id)
}

// nodeLister lists node keys and types for @ completion: from the retriever's
// indexed graph when there is one (a large file graph is then loaded once, from
// the index cache when it has it, and is ready for the first question), else from
// the source.
type nodeLister struct {
	src       datasource.Source
	retriever *rag.Retriever
}

func (n nodeLister) NodeRefs(ctx context.Context, graph string) ([]tui.NodeRef, error) {
	var out []tui.NodeRef
	if n.retriever != nil {
		keys, types, err := n.retriever.NodeKeys(ctx, graph)
		if err != nil {
			return nil, err
		}
		out = make([]tui.NodeRef, len(keys))
		for i := range keys {
			out[i] = tui.NodeRef{Key: keys[i], Type: types[i]}
		}
	} else {
		nodes, err := n.src.Nodes(ctx, graph, "")
		if err != nil {
			return nil, err
		}
		out = make([]tui.NodeRef, len(nodes))
		for i, nd := range nodes {
			out[i] = tui.NodeRef{Key: nd.Key, Type: nd.Type}
		}
	}
	// The types' display names, read once here (off the UI loop), name the nodes
	// of the assistant's tags as ask does (tagNames); without them a tag shows
	// the type key.
	if n.src != nil {
		if cs, err := n.src.Configs(ctx, graph); err == nil {
			names := make(map[string]string, len(cs))
			for _, c := range cs {
				names[c.Key] = c.DisplayName
			}
			for i := range out {
				out[i].TypeName = names[out[i].Type]
			}
		}
	}
	return out, nil
}

// noteRecorder stands in for stderr during chat. Before the screen opens, writes
// go to the terminal and the notes among them (lines "nodius-ai: …") are kept for
// the welcome. While the screen is up (hold), nothing is written to the terminal,
// where it would draw over the screen: writes are held and written out when the
// screen closes (release), and each note is also shown in the transcript.
type noteRecorder struct {
	out io.Writer // the real stderr

	mu      sync.Mutex
	phase   notePhase
	partial []byte
	lines   []string     // the notes kept before the screen opened
	show    func(string) // while the screen is up: says a note in the transcript
	held    []byte       // while the screen is up: what was written
}

type notePhase int

const (
	notesBefore notePhase = iota // before the screen: pass through, keep the notes
	notesHeld                    // the screen is up: hold, show the notes
	notesAfter                   // the screen closed: pass through
)

const (
	// maxNotes bounds what the welcome shows: a source says a line or two.
	maxNotes = 8
	// maxHeld bounds what is held while the screen is up (a note is one line).
	maxHeld = 1 << 20
)

func (r *noteRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.phase {
	case notesAfter:
		return r.out.Write(p)
	case notesHeld:
		if len(r.held)+len(p) <= maxHeld {
			r.held = append(r.held, p...)
		}
	default:
		if n, err := r.out.Write(p); err != nil {
			return n, err
		}
	}
	r.partial = append(r.partial, p...)
	var shown []string
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(r.partial[:i]))
		r.partial = r.partial[i+1:]
		n, ok := strings.CutPrefix(line, "nodius-ai: ")
		switch {
		case !ok:
		case r.phase == notesBefore && len(r.lines) < maxNotes:
			r.lines = append(r.lines, n)
		case r.phase == notesHeld && r.show != nil:
			shown = append(shown, n)
		}
	}
	if len(r.partial) > 4096 { // not lines: nothing to keep
		r.partial = r.partial[:0]
	}
	if len(shown) > 0 {
		// Not from this goroutine: the screen's own loop may be the writer, and
		// the program takes one message at a time.
		go func(show func(string)) {
			for _, n := range shown {
				show(n)
			}
		}(r.show)
	}
	return len(p), nil
}

// hold ends the recording, holds what is written from now on, and returns the
// notes kept for the welcome.
func (r *noteRecorder) hold() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase = notesHeld
	return r.lines
}

// showWith gives the screen's way of saying a note, once the screen exists.
func (r *noteRecorder) showWith(show func(string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.show = show
}

// release writes out what was held: the screen has closed.
func (r *noteRecorder) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase, r.show = notesAfter, nil
	if len(r.held) > 0 {
		_, _ = r.out.Write(r.held)
		r.held = nil
	}
}
