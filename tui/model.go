// Package tui is the interactive chat of `nodius-ai chat`: a Bubble Tea v2 program
// that drives the agent through its event stream. The model is thin: components
// (header, transcript items, input, status bar, dialogs) keep their own state and
// render themselves; Update only routes messages, and every store or agent call runs
// in a tea.Cmd.
package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/internal/clientaction"
	"github.com/nodius/nodius-ai/internal/fault"
)

// frameInterval is how often the streaming message and spinners refresh (~30 fps).
// The tick runs only while a run is in flight: an idle TUI never wakes up.
const frameInterval = 33 * time.Millisecond

type frameMsg struct{}

// nodesLoadedMsg carries the node keys for @ completion: prepared (c) by the
// command that loaded them, or only listed (tests).
type nodesLoadedMsg struct {
	nodes []NodeRef
	c     *completion
	types map[string]string // node key → type, for the assistant's {{node:K}} tags
	err   error
}

// LoadingMsg tells what loading the graph is doing ("indexing 100000 nodes"),
// shown in the status bar until the graph is ready. The program that runs the
// model sends it (from the retriever's progress reports); the graph loads in a
// command, so the editor takes keys meanwhile.
type LoadingMsg struct{ Stage string }

// NoteMsg is a notice of the source given while the screen is up (a graph file
// parsed on first use says then which node types have no code): said in the
// transcript, as the notices given before the screen opened are on the welcome.
type NoteMsg struct{ Text string }

// threadOpenedMsg carries a thread loaded from the store.
type threadOpenedMsg struct {
	thread   convo.Thread
	msgs     []convo.Message
	proposal *convo.Proposal
	// decided are the thread's decided proposals, by tool call id.
	decided map[string]convo.Proposal
	err     error
	none    bool // --continue found no thread
}

// Model is the chat. Build it with New; run it with tea.NewProgram.
type Model struct {
	opts Options
	lk   *look
	km   keyMap

	width, height int

	hdr *header
	tr  *transcript
	in  *input
	st  *statusBar
	dlg dialog
	pic *changePicture // the picture of the pending proposal (picture.go)

	threadID string
	run      *run
	runSeq   int
	cur      *entry // the answer being streamed
	badges   map[string]*entry

	pending *convo.Proposal
	// limit is the tool-round limit the last run stopped at, waiting for the
	// person's choice: more rounds, or the answer now.
	limit    *convo.ToolLimit
	asked    *entry // the "⚑ proposed … waiting for your decision" line of the pending proposal
	deciding *entry // the decision line while its outcome is not known
	decided  convo.Proposal
	// decidedAlways: the decision said "yes for this thread" to the type shown.
	decidedAlways bool
	// decidedApproved: the decision sent was an approval.
	decidedApproved bool
	decidedFeedback string
	lastKey         time.Time // the last key pressed: a proposal dialog decides only after a quiet pause
	typedAt         time.Time // when the last key typed into the input was: j/k right after it type, not scroll
	lastReq         *agent.SendRequest
	lastErr         *fault.Error
	sawProp         bool
	sawErr          bool
	stopping        bool
	ticking         bool
	quitArmed       bool
	quitting        bool

	sheets map[string]string

	showThoughts bool // reasoning expanded (ctrl+x)

	// What happened in the current run, for the wording of its final error.
	runStart time.Time
	gotData  bool // a token or reasoning arrived
	attempts int  // the last attempt the agent announced (0: no retry)
}

// New builds the chat model.
func New(opts Options) *Model {
	th := newTheme(opts.Dark, opts.NoColor)
	lk := &look{th: th, md: newMarkdown(opts.Dark, opts.NoColor)}
	model := opts.Model
	if opts.Provider != "" && opts.Model != "" {
		model = opts.Provider + "/" + opts.Model
	} else if opts.Provider != "" {
		model = opts.Provider
	}
	if opts.Runner == nil {
		model = "no provider"
	}
	graph := opts.GraphName
	if graph == "" {
		graph = opts.GraphKey
	}
	m := &Model{
		opts:   opts,
		lk:     lk,
		km:     newKeyMap(),
		width:  80,
		height: 24,
		hdr:    newHeader(lk, graph, opts.Source, model),
		tr:     newTranscript(),
		in:     newInput(th, tools.IsHome(opts.GraphKey)),
		st:     &statusBar{lk: lk, state: phaseIdle, window: opts.ContextWindow, priced: opts.Priced},
		badges: map[string]*entry{},
	}
	if opts.Runner == nil {
		m.st.state = phaseNoProvider
	}
	return m
}

// Sheets sets the graph's sheet names (id → name) shown by the proposal dialog.
func (m *Model) Sheets(s map[string]string) { m.sheets = s }

// Init asks the terminal for its background, loads node keys, and opens the
// requested thread (or shows the welcome).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.opts.Nodes != nil {
		nl, g := m.opts.Nodes, m.opts.GraphKey
		m.st.loading = "loading graph " + strip(g)
		cmds = append(cmds, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), graphLoadTimeout)
			defer cancel()
			n, err := nl.NodeRefs(ctx, g)
			if err != nil {
				return nodesLoadedMsg{err: err}
			}
			types := make(map[string]string, len(n))
			for _, r := range n {
				types[r.Key] = cmp.Or(r.TypeName, r.Type)
			}
			return nodesLoadedMsg{c: newCompletion(n), types: types}
		})
	}
	switch {
	case m.opts.ThreadID != "" && m.opts.Threads != nil:
		cmds = append(cmds, m.openThread(m.opts.ThreadID, false))
	case m.opts.Continue && m.opts.Threads != nil:
		cmds = append(cmds, m.openThread("", true))
	default:
		m.welcome()
	}
	return tea.Batch(cmds...)
}

// openThread loads a thread by its full id (the CLI resolves prefixes before the TUI
// starts; the picker passes full ids), or the graph's latest when latest is set.
func (m *Model) openThread(id string, latest bool) tea.Cmd {
	ts, graph := m.opts.Threads, m.opts.GraphKey
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		list, err := ts.List(ctx, graph)
		if err != nil {
			return threadOpenedMsg{err: err}
		}
		t := convo.Thread{ID: id} // a thread of another graph is not listed: open it by id
		if latest {
			if len(list) == 0 {
				return threadOpenedMsg{none: true}
			}
			t = slices.MaxFunc(list, func(a, b convo.Thread) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
		} else if i := slices.IndexFunc(list, func(x convo.Thread) bool { return x.ID == id }); i >= 0 {
			t = list[i]
		}
		msgs, err := ts.History(ctx, t.ID)
		if err != nil {
			return threadOpenedMsg{err: err}
		}
		p, err := ts.PendingProposal(ctx, t.ID)
		if err != nil {
			return threadOpenedMsg{err: err}
		}
		decided := map[string]convo.Proposal{}
		for _, msg := range msgs {
			for _, c := range msg.ToolCalls {
				if !strings.HasPrefix(c.Name, "propose_") {
					continue
				}
				if dp, err := ts.Proposal(ctx, t.ID, c.ID); err == nil && dp.Decision != convo.Pending {
					decided[c.ID] = dp
				}
			}
		}
		return threadOpenedMsg{thread: t, msgs: msgs, proposal: p, decided: decided}
	}
}

func (m *Model) welcome() {
	name := m.hdr.graph
	text := fmt.Sprintf("New conversation about %q. Ask anything about the graph, for example:\n"+
		"  • What does this workflow do, step by step?\n"+
		"  • Which nodes call external APIs, and what happens when they fail?\n"+
		"  • Add a node that logs the result before it is returned.\n"+
		"Type @ to mention a node · ctrl+t lists earlier threads · ? shows every key.", name)
	if tools.IsHome(m.opts.GraphKey) {
		text = "New conversation with no graph open: ask about your graphs, for example:\n" +
			"  • Which graphs do I have, and what does each do?\n" +
			"  • Which node types can I use?\n" +
			"  • Create a new graph named Invoices.\n" +
			"Open one with --graph KEY to ask about its nodes · ctrl+t lists earlier threads · ? shows every key."
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: nWelcome, text: text})
	for _, n := range m.opts.Notes {
		m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: strip(n)})
	}
	if m.opts.Runner == nil {
		msg := "No LLM provider is configured, so questions cannot be sent yet (threads can still be browsed)."
		if m.opts.ConfigHelp != "" {
			msg += "\n" + m.opts.ConfigHelp
		} else if m.opts.ConfigErr != nil {
			msg += "\n" + m.opts.ConfigErr.Message
		}
		m.tr.add(&noticeItem{lk: m.lk, kind: nError, text: msg})
	}
}

func (m *Model) now() time.Time { return m.opts.now() }

// Update routes one message. It never blocks and never does I/O.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		return m, nil
	case tea.BackgroundColorMsg:
		m.setDark(msg.IsDark())
		return m, nil
	case runBatchMsg:
		return m, m.onBatch(msg)
	case frameMsg:
		return m, m.onFrame()
	case nodesLoadedMsg:
		m.st.loading = ""
		if msg.err != nil {
			m.st.note = "@ completion is off: " + firstLine(strip(msg.err.Error()))
			return m, nil
		}
		if msg.c == nil {
			msg.c = newCompletion(msg.nodes)
		}
		m.in.setNodes(msg.c)
		if msg.types != nil {
			types, sheets, graphKey, graphName := msg.types, m.sheets, m.opts.GraphKey, m.opts.GraphName
			m.lk.md.names = clientaction.Names{
				NodeType: func(k string) string { return types[k] },
				Sheet:    func(k string) string { return sheets[k] },
				// The open graph, named as ask names it; another graph shows its key.
				Graph: func(k string) string {
					if k == graphKey {
						return graphName
					}
					return ""
				},
			}
		}
		m.in.refreshMenu() // a mention typed while the graph loaded gets its menu now
		return m, nil
	case GraphChangedMsg:
		m.hdr.setChanged(true)
		return m, nil
	case NoteMsg:
		m.closeAnswer(aDone)
		m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: strip(msg.Text)})
		return m, nil
	case LoadingMsg:
		if m.st.loading != "" && msg.Stage != "" {
			m.st.loading = strip(msg.Stage)
		}
		return m, nil
	case threadOpenedMsg:
		m.onThreadOpened(msg)
		return m, nil
	case decisionMsg:
		return m, m.decide(msg.d)
	case pendingLoadedMsg:
		m.onPendingLoaded(msg)
		return m, nil
	case dismissProposalMsg:
		m.dlg = nil
		return m, nil
	case pictureMsg:
		m.onPicture(msg)
		return m, nil
	case openThreadMsg:
		return m, m.switchThread(msg.id)
	case copiedMsg:
		m.st.note = describeCopy(msg)
		return m, nil
	case statusNoteMsg:
		m.st.note = msg.text
		return m, nil
	case undoNoticeMsg:
		m.onUndoNotice(msg)
		return m, nil
	case editorDoneMsg:
		if msg.err != nil {
			m.st.note = "the editor failed: " + firstLine(strip(msg.err.Error()))
			return m, nil
		}
		// What was written comes back to the input to be read over: enter sends
		// it, as anything typed there (the editor exiting is no "send").
		m.in.reset()
		m.in.ta.InsertString(msg.text)
		m.in.stale = true
		if strings.TrimSpace(msg.text) != "" {
			m.st.note = "back from the editor: enter sends it"
		}
		return m, nil
	case insertTextMsg:
		m.in.ta.InsertString(msg.text)
		m.in.stale = true
		return m, nil
	case threadOpMsg:
		if msg.deleted != "" && msg.deleted == m.threadID && msg.err == nil {
			m.newThread()
		}
	case tea.MouseWheelMsg:
		if m.dlg == nil {
			switch msg.Button {
			case tea.MouseWheelUp:
				m.tr.scroll(3)
			case tea.MouseWheelDown:
				m.tr.scroll(-3)
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		if key.Matches(msg, m.km.Quit) {
			return m, m.ctrlC()
		}
		now := m.now()
		prev := m.lastKey
		quiet := now.Sub(prev)
		m.lastKey = now
		m.quitArmed, m.st.note = false, ""
		if m.dlg == nil {
			if msg.Text != "" {
				m.typedAt = now
			}
			return m, m.key(msg)
		}
		if d, ok := m.dlg.(*proposalDialog); ok {
			// Scrolling decides nothing, so it is never guarded: arrows always
			// scroll, and j/k do unless they continue a word being typed.
			typing := quiet < proposalGuard && !prev.IsZero() && m.typedAt.Equal(prev)
			reading := isScrollKey(msg) && (msg.Text == "" || !typing)
			if !reading && d.guarding(now, quiet) {
				// Typed in a stream of keys, or before the dialog could be read: it
				// was meant for the input, never for the decision.
				if msg.Text != "" {
					m.typedAt = now
					return m, m.in.update(msg)
				}
				return m, nil
			}
		}
	}
	if m.dlg != nil {
		closed, cmd := m.dlg.Update(msg, m.now())
		if closed {
			m.dlg = nil
		}
		return m, cmd
	}
	if _, ok := msg.(tea.KeyPressMsg); !ok {
		if _, isPaste := msg.(tea.PasteMsg); isPaste {
			return m, m.in.update(msg)
		}
	}
	return m, nil
}

func (m *Model) setDark(dark bool) {
	if m.opts.NoColor || dark == m.lk.th.dark {
		return
	}
	m.lk.th = newTheme(dark, false)
	m.lk.md = newMarkdown(dark, false)
	for _, e := range m.tr.entries {
		e.width = 0 // re-rendered lazily, as they come into view
	}
	m.hdr.cacheW = 0
}

func (m *Model) ctrlC() tea.Cmd {
	if m.run != nil && !m.quitArmed {
		m.quitArmed = true
		m.st.note = "a reply is streaming: ctrl+c again quits"
		return nil
	}
	if m.run != nil {
		m.run.cancel()
	}
	m.quitting = true
	return tea.Quit
}

// key handles a key press when no dialog is open, dispatching on the keymap that
// also draws the help screen.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	spaced := m.in.spaced
	m.in.spaced = false
	if spaced && k.Text == " " {
		return nil // the space a mention was accepted with is already there
	}
	if m.in.menuKey(k) {
		return nil
	}
	km := m.km
	switch {
	case key.Matches(k, km.Stop):
		if m.run != nil {
			m.stop()
			return nil
		}
		if !m.in.empty() { // Esc on an idle input clears it
			m.in.reset()
			return nil
		}
		m.tr.unfocus()
		return nil
	case key.Matches(k, km.QuitEmpty) && m.in.empty(): // as in a shell: Ctrl+D on an empty line quits
		return m.ctrlC()
	case key.Matches(k, km.Send):
		if m.in.empty() {
			if b := m.tr.focused(); b != nil && b.state != bRunning {
				m.dlg = newResultViewer(m.lk, b)
				return nil
			}
		}
		return m.send()
	case key.Matches(k, km.Help) && (k.String() != "?" || m.in.empty()): // ? on an empty input, f1 always
		m.dlg = &helpDialog{lk: m.lk, km: m.km}
		return nil
	case key.Matches(k, km.Reasoning):
		m.toggleReasoning()
		return nil
	case key.Matches(k, km.CopyAnswer):
		if a := m.tr.lastAnswer(); a != "" {
			return copyText(a, "last answer")
		}
		m.st.note = "no answer to copy yet"
		return nil
	case key.Matches(k, km.CopyCode):
		if c := m.tr.lastCodeBlock(); c != "" {
			return copyText(c, "last code block")
		}
		m.st.note = "no code block to copy"
		return nil
	case key.Matches(k, km.Editor):
		if m.run != nil {
			m.st.note = "wait for the answer, or esc to stop it"
			return nil
		}
		return openEditor(m.in.value(), m.opts.getenv)
	case key.Matches(k, km.Retry):
		return m.retry()
	case key.Matches(k, km.Undo):
		return m.undoKey()
	case key.Matches(k, km.Threads):
		p, cmd := newPicker(m.lk, m.opts.Threads, m.opts.GraphKey, m.threadID)
		m.dlg = p
		return cmd
	case key.Matches(k, km.ScrollUp):
		m.tr.scroll(max(1, m.transcriptHeight()-1)) // a page, less one line of overlap
		return nil
	case key.Matches(k, km.ScrollDown):
		m.tr.scroll(-max(1, m.transcriptHeight()-1))
		return nil
	case key.Matches(k, km.Bottom) && (k.String() != "end" || m.in.empty()): // end on an empty input, ctrl+end always
		m.tr.toBottom()
		return nil
	case key.Matches(k, km.BadgeNext):
		m.tr.focusBadge(-1)
		return nil
	case key.Matches(k, km.BadgePrev):
		m.tr.focusBadge(1)
		return nil
	case key.Matches(k, km.HistoryUp) && m.in.recall(-1):
		return nil
	case key.Matches(k, km.HistoryDown) && m.in.recall(1):
		return nil
	case key.Matches(k, km.LimitContinue) && m.limit != nil:
		return m.chooseLimit(true)
	case key.Matches(k, km.LimitSummary) && m.limit != nil:
		return m.chooseLimit(false)
	case key.Matches(k, km.Proposal) && m.pending != nil:
		// Reopening is a key no one types as text: a word typed in the input can
		// never bring the dialog back and decide with its next letter.
		m.dlg = newProposalDialog(m.lk, *m.pending, m.sheets, m.opts.Source, m.now())
		return m.loadPicture(*m.pending)
	}
	return m.in.update(k)
}

// toggleReasoning expands or collapses the reasoning of every answer.
func (m *Model) toggleReasoning() {
	m.showThoughts = !m.showThoughts
	for _, e := range m.tr.entries {
		if a, ok := e.it.(*assistantItem); ok && a.reasoning.Len() > 0 {
			a.expanded = m.showThoughts
			m.tr.touch(e)
		}
	}
}

func (m *Model) stop() {
	if m.run == nil || m.stopping {
		return
	}
	m.stopping = true
	m.st.state = phaseStopping
	m.run.cancel()
}

// send starts a question from the input.
func (m *Model) send() tea.Cmd {
	text := strings.TrimSpace(m.in.value())
	if text == "" {
		return nil
	}
	if m.run != nil {
		m.st.note = "wait for the answer, or esc to stop it"
		return nil
	}
	if m.pending != nil {
		m.st.note = "a proposal is waiting: ctrl+p to decide it first"
		return nil
	}
	m.limit = nil // a new question answers the tool-round limit's choice too
	req := agent.SendRequest{GraphKey: m.opts.GraphKey, ThreadID: m.threadID, Text: text, Mentions: m.in.mentions(text)}
	m.in.remember(text)
	m.in.reset()
	m.tr.add(newUser(m.lk, text))
	m.tr.toBottom()
	if m.hdr.title == "" {
		m.hdr.setTitle(firstLine(text))
	}
	if m.opts.Runner == nil {
		ce := m.opts.ConfigErr
		if ce == nil {
			ce = &fault.Error{Code: fault.Config, Message: "no LLM provider is configured"}
		}
		m.showError(ce)
		return nil
	}
	m.lastReq = &req
	m.hdr.setChanged(false) // this question sees the graph as it is now
	return m.start(func(ctx context.Context, e func(convo.Event)) (agent.Result, error) {
		return m.opts.Runner.Send(ctx, req, e)
	})
}

func (m *Model) retry() tea.Cmd {
	if m.run != nil || m.lastErr == nil || m.lastReq == nil || m.opts.Runner == nil {
		return nil
	}
	req := *m.lastReq
	if req.ThreadID == "" {
		req.ThreadID = m.threadID
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "↻ retrying: " + firstLine(req.Text)})
	m.tr.toBottom()
	return m.start(func(ctx context.Context, e func(convo.Event)) (agent.Result, error) {
		return m.opts.Runner.Send(ctx, req, e)
	})
}

func (m *Model) start(call func(context.Context, func(convo.Event)) (agent.Result, error)) tea.Cmd {
	m.runSeq++
	r, cmd := startRun(m.runSeq, call)
	m.run = r
	m.lastErr, m.sawErr, m.sawProp, m.stopping = nil, false, false, false
	m.st.busy, m.st.retry = true, nil
	m.st.setState(phaseRetrieving, m.now())
	m.runStart, m.gotData, m.attempts = m.now(), false, 0
	return tea.Batch(cmd, m.ensureTick())
}

func (m *Model) ensureTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tea.Tick(frameInterval, func(time.Time) tea.Msg { return frameMsg{} })
}

// onFrame shows the tokens that arrived since the last frame and turns spinners.
func (m *Model) onFrame() tea.Cmd {
	m.ticking = false
	m.flush()
	m.st.frame++
	for _, e := range m.badges {
		if b := e.it.(*badgeItem); b.state == bRunning {
			b.frame++
			m.tr.touch(e)
		}
	}
	if m.run != nil {
		return m.ensureTick()
	}
	return nil
}

func (m *Model) flush() {
	if m.cur == nil {
		return
	}
	a := m.cur.it.(*assistantItem)
	if a.shown != a.text.Len() {
		a.shown = a.text.Len()
		m.tr.touch(m.cur)
	}
}

func (m *Model) onBatch(msg runBatchMsg) tea.Cmd {
	if m.run == nil || msg.runID != m.run.id {
		return nil // a stale run (the user switched threads)
	}
	var cmds []tea.Cmd
	for _, it := range msg.items {
		if it.done {
			cmds = append(cmds, m.finish(it.res, it.err))
			return tea.Batch(cmds...)
		}
		if c := m.onEvent(it.ev); c != nil {
			cmds = append(cmds, c)
		}
	}
	cmds = append(cmds, readRun(m.run))
	return tea.Batch(cmds...)
}

func (m *Model) assistant() *assistantItem {
	if m.cur == nil {
		m.cur = m.tr.add(&assistantItem{lk: m.lk, expanded: m.showThoughts})
	}
	return m.cur.it.(*assistantItem)
}

// closeAnswer ends the streaming answer (dropping it when nothing came).
func (m *Model) closeAnswer(state assistantState) {
	if m.cur == nil {
		return
	}
	a := m.cur.it.(*assistantItem)
	if a.text.Len() == 0 && a.reasoning.Len() == 0 {
		m.tr.remove(m.cur)
	} else {
		a.state = state
		a.shown = a.text.Len()
		m.tr.touch(m.cur)
	}
	m.cur = nil
}

func (m *Model) onEvent(ev convo.Event) tea.Cmd {
	switch ev.Type {
	case convo.EventThread:
		if ev.ThreadID != "" {
			m.threadID = ev.ThreadID
		}
	case convo.EventStatus:
		if ev.State == convo.StateRetrying && ev.Attempt > 0 {
			cause := "an error"
			if ev.Err != nil {
				cause = string(ev.Err.Code)
			}
			m.st.retry = &retryInfo{attempt: ev.Attempt, attempts: ev.Attempts, at: m.now().Add(ev.Wait), cause: cause}
			m.attempts = ev.Attempt
			m.st.setState(phaseRetryWait, m.now())
			break
		}
		m.st.setState(phaseOf(ev.State), m.now())
	case convo.EventToken:
		m.assistant().text.WriteString(ev.Text)
		m.st.setState(phaseStreaming, m.now())
		m.gotData = true
	case convo.EventReasoning:
		m.assistant().reasoning.WriteString(ev.Text)
		m.st.setState(phaseThinking, m.now())
		m.gotData = true
	case convo.EventToolStart:
		m.closeAnswer(aDone)
		e := m.tr.add(newBadge(m.lk, ev.ToolCall))
		m.badges[ev.ToolCall.ID] = e
		m.st.setTool(strip(ev.ToolCall.Name), m.now())
	case convo.EventToolResult:
		e := m.badges[ev.ToolCall.ID]
		if e == nil {
			m.closeAnswer(aDone)
			e = m.tr.add(newBadge(m.lk, ev.ToolCall))
			m.badges[ev.ToolCall.ID] = e
		}
		e.it.(*badgeItem).finish(ev.Result, ev.ToolErr, ev.Duration)
		delete(m.badges, ev.ToolCall.ID) // no longer spins
		m.tr.touch(e)
		if ev.Proposal != nil {
			m.decisionOutcome(*ev.Proposal, ev.Result)
		}
	case convo.EventProposal:
		m.closeAnswer(aDone)
		if ev.Proposal != nil {
			m.sawProp = true
			m.openProposal(ev.Proposal)
			return tea.Batch(m.ensureTick(), m.loadPicture(*ev.Proposal))
		}
	case convo.EventNote:
		// A note did not stop the run (a question searched without its expansion,
		// say): the person sees it where it happened, like any other notice.
		m.closeAnswer(aDone)
		m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "! " + strip(ev.Text)})
	case convo.EventUsage:
		m.st.usage = m.st.usage.Add(ev.Usage)
		m.st.lastPrompt = ev.Usage.PromptTokens
	case convo.EventComplete:
		m.closeAnswer(aDone)
		if ev.ThreadID != "" {
			m.threadID = ev.ThreadID
		}
		if strings.TrimSpace(ev.Text) == "" {
			// An empty last message (an "answer now" the model left blank) is said,
			// not shown as nothing.
			m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "! " + emptyAnswer})
		}
	case convo.EventError:
		if ev.Err != nil && ev.Err.Code == fault.Interrupted {
			break
		}
		if m.stopping {
			break
		}
		m.closeAnswer(aDone)
		m.sawErr = true
		m.showError(ev.Err)
	}
	return m.ensureTick()
}

// finish ends a run: the answer is closed, errors and proposals shown.
func (m *Model) finish(res agent.Result, err error) tea.Cmd {
	var reload tea.Cmd
	stopped := m.stopping
	m.run, m.stopping, m.st.busy, m.st.retry = nil, false, false, nil
	if res.ThreadID != "" {
		m.threadID = res.ThreadID
	}
	ce, isCE := fault.As(err)
	interrupted := errors.Is(err, context.Canceled) || (isCE && ce.Code == fault.Interrupted)
	switch {
	case stopped || interrupted:
		m.closeAnswer(aStopped)
		m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "■ stopped — the partial answer is kept"})
		m.st.state = phaseIdle
	case err != nil:
		m.closeAnswer(aDone)
		if m.deciding != nil {
			// Nothing was decided (another decision came first, the graph is not in
			// this source, …): say so, and show what is pending now.
			n := m.deciding.it.(*noticeItem)
			n.kind, n.text = nError, "× not decided: "+describeAction(m.decided)
			m.tr.touch(m.deciding)
			m.deciding = nil
			reload = m.reloadPending()
		}
		if !isCE {
			ce = &fault.Error{Code: fault.Internal, Message: strip(err.Error())}
		}
		if !m.sawErr {
			m.showError(ce)
		} else {
			m.lastErr = ce
			m.st.state = phaseError
		}
	default:
		m.closeAnswer(aDone)
		m.st.state = phaseIdle
		if m.deciding != nil {
			// A runtime that did not report the outcome (the server's assistant).
			if res.Decided != nil {
				m.decisionOutcome(*res.Decided, "")
			} else {
				// No outcome reported: say the decision that was sent, nothing more.
				n := m.deciding.it.(*noticeItem)
				n.text = "rejected " + describeAction(m.decided)
				if m.decidedFeedback != "" {
					n.text += ": " + strip(m.decidedFeedback)
				}
				if m.decidedApproved {
					n.text = "approved " + describeAction(m.decided)
				}
				m.tr.touch(m.deciding)
				m.deciding = nil
			}
		}
		if res.Proposal != nil && !m.sawProp {
			m.openProposal(res.Proposal)
		}
		if m.pending != nil {
			m.st.state = phaseWaitingApproval
		}
		if res.ToolLimit != nil && m.pending == nil {
			m.offerLimit(*res.ToolLimit)
		}
	}
	if m.quitting {
		return tea.Quit
	}
	return reload
}

// showError puts a classified error inline, with what to do next.
func (m *Model) showError(ce *fault.Error) {
	if ce == nil {
		ce = &fault.Error{Code: fault.Internal, Message: "the run failed"}
	}
	m.lastErr = ce
	m.st.state = phaseError
	text := fmt.Sprintf("× %s: %s", ce.Code, m.errorWords(ce))
	if hint := errorHint(ce, m.opts.ConfigHelp); hint != "" {
		text += "\n" + hint
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: nError, text: text})
	m.tr.toBottom()
}

// errorWords says what happened in this run: a stall with nothing received is not
// a stream cut "mid-answer", and retries are counted, with the time they took.
func (m *Model) errorWords(ce *fault.Error) string {
	msg := strip(ce.Message)
	if !m.gotData && (ce.Code == fault.Timeout || ce.Code == fault.Network) && strings.Contains(msg, "mid-answer") {
		msg = "the provider accepted the question but sent nothing back"
		if ce.Code == fault.Network {
			msg = "the connection was cut before any answer arrived"
		}
	}
	if m.attempts > 1 && !m.runStart.IsZero() {
		msg += fmt.Sprintf(" (%d attempts over %s)", m.attempts, fmtElapsed(m.now().Sub(m.runStart)))
	}
	return msg
}

func errorHint(ce *fault.Error, cfgHelp string) string {
	switch ce.Code {
	case fault.Config:
		if cfgHelp == ce.Message {
			return "" // the message already says what to set
		}
		return cfgHelp
	case fault.Auth:
		return "Check the API key (NODIUS_AI_API_KEY or the provider's own variable)."
	case fault.ContextLength:
		return "The thread is too long for this model: start a new one (ctrl+t, n)."
	case fault.BudgetExceeded:
		return "A spending limit was reached: raise it in the config file or start a new thread."
	}
	if ce.Retryable {
		return "ctrl+r retries."
	}
	return ""
}

// switchThread opens another thread ("" starts a new one).
func (m *Model) switchThread(id string) tea.Cmd {
	if m.run != nil {
		m.st.note = "stop the answer (esc) before switching threads"
		return nil
	}
	if id == "" {
		m.newThread()
		return nil
	}
	if m.opts.Threads == nil {
		return nil
	}
	return m.openThread(id, false)
}

func (m *Model) newThread() {
	m.tr.reset()
	m.threadID, m.pending, m.lastErr, m.lastReq, m.cur = "", nil, nil, nil, nil
	m.limit = nil // the limit's choice was the other thread's
	m.badges = map[string]*entry{}
	m.st.usage, m.st.lastPrompt = convo.Usage{}, 0
	if m.opts.Runner != nil {
		m.st.state = phaseIdle
	}
	m.hdr.setTitle("")
	m.welcome()
}

func (m *Model) onThreadOpened(msg threadOpenedMsg) {
	if msg.none {
		m.welcome()
		return
	}
	if msg.err != nil {
		if len(m.tr.entries) == 0 {
			m.welcome()
		}
		m.tr.add(&noticeItem{lk: m.lk, kind: nError, text: "× could not open the thread: " + strip(msg.err.Error())})
		return
	}
	m.tr.reset()
	m.badges = map[string]*entry{}
	m.threadID = msg.thread.ID
	m.hdr.setTitle(msg.thread.Title)
	m.st.usage = msg.thread.Usage
	m.st.lastPrompt = 0
	m.lastErr, m.lastReq, m.cur, m.limit = nil, nil, nil, nil
	m.loadHistory(msg.msgs, msg.decided)
	m.pending = msg.proposal
	m.asked, m.deciding = nil, nil
	if m.pending != nil {
		m.asked = m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "⚑ proposed: " + describeAction(*m.pending) + " — waiting for your decision (ctrl+p to review it)"})
		m.st.state = phaseWaitingApproval
	} else if m.opts.Runner != nil {
		m.st.state = phaseIdle
	}
	if len(m.tr.entries) == 0 {
		m.welcome()
	}
}

// loadHistory rebuilds the transcript from stored messages and the decided
// proposals among them (by tool call id).
func (m *Model) loadHistory(msgs []convo.Message, decided map[string]convo.Proposal) {
	calls := map[string]*entry{}
	for _, msg := range msgs {
		switch msg.Role {
		case convo.User:
			m.tr.add(newUser(m.lk, msg.Content))
			if m.hdr.title == "" {
				m.hdr.setTitle(firstLine(msg.Content))
			}
		case convo.Assistant:
			if strings.TrimSpace(msg.Content) != "" || strings.TrimSpace(msg.Reasoning) != "" {
				a := &assistantItem{lk: m.lk, state: aDone, expanded: m.showThoughts}
				if msg.Status == convo.Interrupted {
					a.state = aInterrupted
				}
				a.text.WriteString(msg.Content)
				a.reasoning.WriteString(msg.Reasoning)
				a.shown = a.text.Len()
				m.tr.add(a)
			}
			for _, c := range msg.ToolCalls {
				calls[c.ID] = m.tr.add(newBadge(m.lk, c))
			}
		case convo.Tool:
			if e := calls[msg.ToolCallID]; e != nil {
				b := e.it.(*badgeItem)
				if p, ok := decided[msg.ToolCallID]; ok {
					b.finishDecided(msg.Content, p)
				} else {
					b.finish(msg.Content, "", 0)
				}
				// The store answers a call still waiting for a decision (or cut off by
				// a dead process) with a synthetic "interrupted" result: that is no
				// decision, and must not read as one.
				if p, ok := decided[msg.ToolCallID]; ok {
					m.tr.add(decidedNotice(m.lk, p))
				}
			}
		}
	}
	// calls left without a result: a pending proposal, or an interrupted run
	for _, e := range calls {
		if b := e.it.(*badgeItem); b.state == bRunning {
			b.finish("", "no result (interrupted or awaiting a decision)", 0)
		}
	}
}

func (m *Model) transcriptHeight() int {
	h := m.height - 2 - m.inputHeight()
	if m.banner() != "" {
		h--
	}
	return max(1, h)
}

func (m *Model) inputHeight() int { return m.in.ta.Height() + m.in.menuHeight() }

func (m *Model) banner() string {
	if m.pending != nil && m.dlg == nil {
		return m.lk.th.banner.Render("⚑ A proposal is waiting for your decision — press ctrl+p to review it")
	}
	return ""
}

// View draws header, transcript (or the open dialog), banner, input and status.
func (m *Model) View() tea.View {
	w := max(m.width, 20)
	inputView := m.in.Render(w, m.lk.th)
	th := m.transcriptHeight()
	var body string
	switch d := m.dlg.(type) {
	case nil:
		body = strings.Join(m.tr.window(w, th), "\n")
	case *proposalDialog, *undoDialog:
		body = m.proposalLayout(d, w, th)
	default:
		body = lipgloss.Place(w, th, lipgloss.Center, lipgloss.Center, m.dlg.Render(w, th))
		body = clipHeight(body, th)
	}
	parts := []string{m.hdr.Render(w), body}
	if b := m.banner(); b != "" {
		parts = append(parts, truncateLine(b, w))
	}
	m.st.mode, m.st.newBelow, m.st.now = m.hintMode(), m.tr.newBelow, m.now()
	parts = append(parts, inputView, m.st.Render(w))
	v := tea.NewView(strings.Join(parts, "\n"))
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "nodius-ai · " + m.hdr.graph
	if m.dlg == nil {
		if c := m.in.ta.Cursor(); c != nil {
			c.Position.Y += 1 + th + boolInt(m.banner() != "") + m.in.menuHeight()
			v.Cursor = c
		}
	}
	return v
}

// hintMode says which key hints the status bar shows.
func (m *Model) hintMode() hintMode {
	switch d := m.dlg.(type) {
	case nil:
	case *proposalDialog:
		switch {
		case d.feedback != nil:
			return hintFeedback
		case !d.readThrough():
			return hintDialogUnread
		}
		return hintDialog
	case *undoDialog:
		return hintUndo // its other keys are in it
	case *picker:
		return hintPicker
	default:
		return hintViewer
	}
	switch {
	case !m.tr.following():
		return hintScrolled
	case m.run != nil:
		return hintStreaming
	case m.pending != nil:
		return hintPending
	case !m.in.empty():
		return hintTyping
	}
	return hintIdle
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func clipHeight(s string, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// offerLimit shows the tool-round limit as a choice, as the web client's banner does:
// let the assistant go on with more rounds, or have it answer with what it has.
func (m *Model) offerLimit(tl convo.ToolLimit) {
	m.limit = &tl
	text := fmt.Sprintf("⏸ The assistant used its %d tool rounds. %s: let it continue", tl.RoundsUsed, m.km.LimitContinue.Help().Key)
	if tl.MaxExtended > 0 {
		text += fmt.Sprintf(" (up to %d rounds)", tl.MaxExtended)
	}
	text += fmt.Sprintf(" · %s: ask for its answer now", m.km.LimitSummary.Help().Key)
	m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: text})
	m.tr.toBottom()
	m.st.state = phaseToolLimit
}

// chooseLimit resumes the run stopped at the tool-round limit: approved continues
// with more rounds, otherwise the assistant answers without tools.
func (m *Model) chooseLimit(more bool) tea.Cmd {
	if m.limit == nil || m.run != nil {
		return nil
	}
	m.limit = nil
	text := "… continuing with more tool rounds"
	if !more {
		text = "… asking for the answer now"
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: text})
	m.tr.toBottom()
	if m.opts.Runner == nil {
		m.showError(m.opts.ConfigErr)
		return nil
	}
	threadID := m.threadID
	return m.start(func(ctx context.Context, e func(convo.Event)) (agent.Result, error) {
		return m.opts.Runner.Resume(ctx, threadID, convo.Decision{Approved: more}, e)
	})
}

// emptyAnswer is said when a run ends with an empty last message.
const emptyAnswer = "the assistant ended without an answer (its last message is empty): ask again, or ask it to answer with what it found"
