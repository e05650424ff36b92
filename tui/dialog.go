package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/changetext"
)

// dialog is every modal the TUI shows (proposal, thread picker, help) behind one
// interface: the model hands it messages while it is open and draws it over the
// transcript. It reports what the user chose through the messages its commands
// return, so the model stays the only owner of the conversation state.
type dialog interface {
	// Update handles a message; closed=true removes the dialog.
	Update(msg tea.Msg, now time.Time) (closed bool, cmd tea.Cmd)
	Render(width, height int) string
}

// emit wraps a message as a command.
func emit(m tea.Msg) tea.Cmd { return func() tea.Msg { return m } }

// boxed draws body in the dialog frame, at most width wide and height high.
func boxed(th theme, title, body string, width, height int) string {
	inner := max(20, width-4)
	lines := strings.Split(body, "\n")
	if maxBody := height - 3; maxBody > 0 && len(lines) > maxBody {
		lines = lines[:maxBody]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, inner, "…")
	}
	content := th.title.Render(ansi.Truncate(title, inner, "…")) + "\n" + strings.Join(lines, "\n")
	return th.dialog.Width(min(width, inner+4)).Render(content)
}

// ---- proposal dialog ----

// decisionMsg is the user's verdict on the pending proposal.
type decisionMsg struct{ d convo.Decision }

// statusNoteMsg is a one-off sentence for the status bar (why a key was refused).
type statusNoteMsg struct{ text string }

// dismissProposalMsg closes the dialog and leaves the proposal pending.
type dismissProposalMsg struct{}

// proposalGuard is the quiet pause the proposal dialog needs before it takes a
// decision key: 400 ms since it opened and since the last key pressed anywhere.
// Every key pressed meanwhile restarts the wait and goes to the input, so a word
// being typed can never approve a change the person has not seen.
const proposalGuard = 400 * time.Millisecond

// guarding reports whether a key pressed now, quiet after the previous key, comes
// too soon to decide anything.
func (d *proposalDialog) guarding(now time.Time, quiet time.Duration) bool {
	if d.feedback != nil {
		return false // typing the feedback
	}
	return now.Sub(d.opened) < proposalGuard || quiet < proposalGuard
}

// proposalDialog previews a proposal and takes the decision. It shows first what
// matters most: the action, the source it is written to (always on screen), the
// reason, then the line diff and the picture, every line reachable by scrolling.
type proposalDialog struct {
	lk       *look
	p        convo.Proposal
	sheets   map[string]string
	source   string // where the change is written: "file:/tmp/g.json", "demo (embedded)"
	opened   time.Time
	scroll   scroller
	typing   bool             // the keys now coming continue a word typed for the input
	feedback *textinput.Model // non-nil while typing feedback
	pic      *changePicture   // the change drawn on the graph, above the text diff (picture.go)

	// body is the diff and reason drawn for bodyW and bodyDark: built (and stripped)
	// once per width and theme, not on every redraw while the user reads and scrolls.
	body     []string
	bodyW    int
	bodyDark bool

	// seen holds the text of every body line that has been on screen: approving
	// waits until no line of the change's text (textLines: the action, the Reason,
	// the diff; the picture under it only draws them again) is left unseen, so a
	// change is never approved on code that was paged past or jumped over (End).
	// Text, not positions: a line seen before the picture arrived or the theme
	// changed stays seen.
	seen      map[string]bool
	textLines int
}

func newProposalDialog(lk *look, p convo.Proposal, sheets map[string]string, source string, now time.Time) *proposalDialog {
	return &proposalDialog{lk: lk, p: p, sheets: sheets, source: source, opened: now}
}

func (d *proposalDialog) Update(msg tea.Msg, now time.Time) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if d.feedback != nil {
			var cmd tea.Cmd
			*d.feedback, cmd = d.feedback.Update(msg)
			return false, cmd
		}
		return false, nil
	}
	if d.feedback != nil {
		switch k.String() {
		case "enter":
			fb := strings.TrimSpace(d.feedback.Value())
			return true, emit(decisionMsg{convo.Decision{Feedback: fb, ProposalID: d.p.ID, Digest: d.p.Digest}})
		case "esc":
			d.feedback = nil
			return false, nil
		}
		var cmd tea.Cmd
		*d.feedback, cmd = d.feedback.Update(k)
		return false, cmd
	}
	d.markSeen() // what the last drawing showed, before the key moves it
	if d.scroll.scrollKey(k) {
		return false, nil // reading is never guarded; deciding is
	}
	if now.Sub(d.opened) < proposalGuard {
		return false, nil // typed before the dialog could be read
	}
	// The decision names the proposal shown: if another one is pending by now,
	// nothing is decided.
	shown := convo.Decision{ProposalID: d.p.ID, Digest: d.p.Digest}
	km := proposalKeys
	switch {
	case key.Matches(k, km.Approve, km.Always) && !d.readThrough():
		// Said in the status bar: the dialog keeps its height, so End still ends.
		return false, emit(statusNoteMsg{plural(max(1, d.unseen()), "line") + " unread: pgdn reads on, then " + k.String()})
	case key.Matches(k, km.Approve):
		shown.Approved = true
		return true, emit(decisionMsg{shown})
	case key.Matches(k, km.Always):
		shown.Approved, shown.AlwaysForThread = true, true
		return true, emit(decisionMsg{shown})
	case key.Matches(k, km.Reject):
		return true, emit(decisionMsg{shown})
	case key.Matches(k, km.Feedback):
		ti := textinput.New()
		ti.Placeholder = "what should change instead?"
		ti.Prompt = "feedback> "
		ti.SetVirtualCursor(true)
		ti.Focus()
		d.feedback = &ti
		return false, nil
	case key.Matches(k, km.Later):
		return true, emit(dismissProposalMsg{})
	}
	return false, nil
}

func (d *proposalDialog) Render(width, height int) string {
	th := d.lk.th
	w := max(20, min(width, 100)-4)
	if d.body == nil || d.bodyW != w || d.bodyDark != th.dark {
		d.body, d.bodyW, d.bodyDark = d.buildBody(w), w, th.dark
	}
	var foot []string
	if d.feedback != nil {
		d.feedback.SetWidth(w - 12)
		foot = []string{"", d.feedback.View(), th.dim.Render("enter send · esc back")}
	} else {
		km := proposalKeys
		pairs := [][2]string{pair(km.Approve, ""), pair(km.Reject, ""), pair(km.Feedback, ""),
			pair(km.Always, "approve, always for "+string(d.p.Action.Type)+" here"), pair(km.Later, "")}
		if w < 60 { // narrow: the short words, so the change keeps its room
			pairs = [][2]string{pair(km.Approve, ""), pair(km.Reject, ""), pair(km.Feedback, "feedback"),
				pair(km.Always, "always"), pair(km.Later, "later")}
		}
		hints := keyHints(th, w, pairs)
		foot = append([]string{""}, strings.Split(hints, "\n")...)
	}
	// The frame (borders and title) takes 3 lines; the source and the keys are
	// always shown, and the change scrolls in what is left.
	head := sourceLines(th, d.source, d.p.Action.Type == datasource.CreateGraphAction, w)
	room := height - 3 - len(head) - len(foot)
	if room < 6 { // small: drop the blank line before the keys
		foot = foot[1:]
		room = height - 3 - len(head) - len(foot)
	}
	view := d.scroll.view(th, d.body, room)
	title := "Proposed change · " + reveal(d.p.Tool)
	if ansi.StringWidth(title) > w {
		title = "Proposed change"
	}
	return boxed(th, title, strings.Join(slices.Concat(head, view, foot), "\n"), min(width, 100), height)
}

// markSeen notes the body lines the last drawing showed.
func (d *proposalDialog) markSeen() {
	first, end := d.scroll.shown()
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	for _, l := range d.body[min(first, len(d.body)):min(end, len(d.body))] {
		d.seen[seenKey(l)] = true
	}
}

// unseen counts the lines of the change's text that have not been on screen,
// the lines of the last drawing (on screen now) counted as seen.
func (d *proposalDialog) unseen() int {
	first, end := d.scroll.shown()
	n := 0
	for i, l := range d.body[:min(d.textLines, len(d.body))] {
		if k := seenKey(l); k != "" && !d.seen[k] && (i < first || i >= end) {
			n++
		}
	}
	return n
}

// readThrough reports whether every line of the change has been on screen (the
// dialog drawn at least once), which approving waits for.
func (d *proposalDialog) readThrough() bool { return d.body != nil && d.unseen() == 0 }

func seenKey(l string) string { return strings.TrimSpace(ansi.Strip(l)) }

// buildBody is what the dialog scrolls, most important first: the action, the
// reason, the line diff, then the change drawn on the graph.
func (d *proposalDialog) buildBody(w int) []string {
	th := d.lk.th
	body := []string{th.title.Render(reveal(datasource.Describe(d.p.Action)))}
	if r := strings.TrimSpace(reveal(d.p.Reason)); r != "" {
		body = append(body, th.dim.Render("Reason:"))
		body = append(body, strings.Split(indent(wrapPlain(r, w-2), 2), "\n")...)
	}
	body = append(body, "")
	body = wrapStyled(append(body, diffLines(th, d.p.Action, d.sheets, w)...), w)
	d.textLines = len(body)
	if d.pic != nil {
		body = append(append(body, ""), wrapStyled(d.pic.render(th, w), w)...)
	}
	for len(body) > 1 && strings.TrimSpace(ansi.Strip(body[len(body)-1])) == "" {
		body = body[:len(body)-1] // no blank rows to scroll to at the end
	}
	d.textLines = min(d.textLines, len(body))
	return body
}

// sourceLines names where the change will be written, in at most two lines: a
// path too long keeps its end, the file name. A new graph is not written into the
// source's graph: a graph file makes it a new file next to itself, a database or
// server a new graph beside the others.
func sourceLines(th theme, source string, newGraph bool, w int) []string {
	if source == "" {
		return nil
	}
	where := "into " + reveal(source)
	if newGraph {
		where = "a new graph on " + reveal(source)
		if strings.HasPrefix(source, "file:") {
			where = "a new file next to " + reveal(source)
		}
	}
	lines := strings.Split(ansi.Hardwrap(where, w, true), "\n")
	if len(lines) > 2 {
		tail := []rune(strings.Join(lines[1:], ""))
		lines = []string{lines[0], "…" + string(tail[max(0, len(tail)-(w-1)):])}
	}
	for i, l := range lines {
		lines[i] = th.statusKey.Render(l)
	}
	return lines
}

// pair is a binding's key and its words for a key line (what, when not "").
func pair(b key.Binding, what string) [2]string {
	if what == "" {
		what = b.Help().Desc
	}
	return [2]string{b.Help().Key, what}
}

// diffLines renders an action as a graph diff: + added, − removed, ~ changed.
func diffLines(th theme, a datasource.Action, sheets map[string]string, w int) []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	sheet := func(id string) string {
		if n, ok := sheets[id]; ok && n != "" && n != id {
			return fmt.Sprintf("sheet %s (%s)", reveal(n), reveal(id))
		}
		return "sheet " + reveal(id)
	}
	edgeLine := func(sign string, st lipgloss.Style, e datasource.Edge) string {
		s := fmt.Sprintf("%s edge %s: %s:%s → %s:%s", sign, reveal(e.Key), reveal(e.Source), reveal(e.SourceHandle), reveal(e.Target), reveal(e.TargetHandle))
		if e.Label != "" {
			s += fmt.Sprintf(" [%s]", reveal(e.Label))
		}
		return st.Render(s)
	}
	switch a.Type {
	case datasource.CreateNodeAction:
		p := a.CreateNode
		if p == nil {
			break
		}
		key := p.NodeKey
		if key == "" {
			key = "(new key)"
		}
		add(th.added.Render(fmt.Sprintf("+ node %s (%s)", reveal(key), reveal(p.TypeKey))),
			th.dim.Render(fmt.Sprintf("  %s at (%g, %g)", sheet(p.Sheet), p.PosX, p.PosY)))
		if p.Process != "" {
			add("  process:")
			add(codeLines(th, changetext.Added(p.Process), w)...)
		}
		if p.Data != nil {
			add("  data: " + th.added.Render(compactJSON(p.Data)))
		}
	case datasource.UpdateNodeAction:
		p := a.UpdateNode
		if p == nil {
			break
		}
		add(th.changed.Render("~ node " + reveal(p.NodeKey)))
		fields := make([]string, 0, len(p.Changes))
		for f := range p.Changes {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			newV := p.Changes[f]
			oldV, had := p.Before[f]
			if f == "process" {
				add("  " + reveal(f) + ":")
				add(codeLines(th, changetext.LineDiff(valueText(oldV), valueText(newV)), w)...)
				continue
			}
			// Only what changed, field by field down nested values (data.headers.auth),
			// as ask and threads show say it.
			for _, c := range changetext.ValueChanges(f, oldV, had, newV) {
				if c.Code != nil {
					add("  " + reveal(c.Path) + ":")
					add(codeLines(th, c.Code, w)...)
					continue
				}
				add(fmt.Sprintf("  %s: %s → %s", reveal(c.Path), th.removed.Render(reveal(c.Old)), th.added.Render(reveal(c.New))))
			}
		}
	case datasource.MoveNodeAction:
		if p := a.MoveNode; p != nil {
			add(th.changed.Render(fmt.Sprintf("~ node %s moves to (%g, %g)", reveal(p.NodeKey), p.PosX, p.PosY)))
		}
	case datasource.DeleteNodeAction:
		if p := a.DeleteNode; p != nil {
			add(th.removed.Render("− node " + reveal(p.NodeKey)))
			if len(p.RemovedEdges) > 0 {
				add(th.dim.Render("  and the " + plural(len(p.RemovedEdges), "edge") + " attached to it:"))
				for _, e := range p.RemovedEdges {
					add("  " + edgeLine("−", th.removed, e))
				}
			}
		}
	case datasource.CreateEdgeAction:
		if p := a.CreateEdge; p != nil {
			e := datasource.Edge{Key: p.EdgeKey, Source: p.SourceKey, SourceHandle: p.SourceHandle, Target: p.TargetKey, TargetHandle: p.TargetHandle, Label: p.Label}
			if e.Key == "" {
				e.Key = "(new)"
			}
			add(edgeLine("+", th.added, e), th.dim.Render("  "+sheet(p.Sheet)))
		}
	case datasource.DeleteEdgeAction:
		if p := a.DeleteEdge; p != nil {
			if p.Edge != nil {
				add(edgeLine("−", th.removed, *p.Edge))
			} else {
				add(th.removed.Render("− edge " + reveal(p.EdgeKey)))
			}
		}
	case datasource.BatchAction:
		if p := a.Batch; p != nil {
			add(th.dim.Render(fmt.Sprintf("%d changes, applied together:", len(p.Actions))))
			for _, sub := range p.Actions {
				add(diffLines(th, sub, sheets, w)...)
			}
		}
	case datasource.ConfigureNodeTypeAction:
		if p := a.ConfigureNodeType; p != nil {
			what := "~ node type "
			if p.Mode == "create" {
				what = "+ node type "
			}
			add(th.changed.Render(what + reveal(p.TypeKey) + " (" + reveal(p.DisplayName) + ")"))
			for _, l := range changetext.TypeFieldLines(*p) {
				add("  " + reveal(l))
			}
			if len(p.Nodes) > 0 {
				keys := make([]string, len(p.Nodes))
				for i, k := range p.Nodes {
					keys[i] = reveal(k)
				}
				add(th.dim.Render("  every node of this type changes with it: " + strings.Join(keys, ", ")))
			}
			diffed := false
			for _, d := range p.CodeDiffs {
				diffed = diffed || d.Field == "process"
				add("  " + reveal(d.Field) + ":")
				add(codeLines(th, changetext.LineDiff(d.Original, d.Modified), w)...)
			}
			if !diffed && p.Process != "" {
				add("  process:")
				add(codeLines(th, changetext.Added(p.Process), w)...)
			}
		}
	}
	if len(out) == 0 {
		// A kind this dialog draws no graph diff for: its text, as approve prints it.
		var b strings.Builder
		changetext.WriteForDecision(&b, a, "")
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if l != "" {
				add(l)
			}
		}
	}
	if len(out) == 0 {
		add(th.dim.Render("(an action of type " + reveal(string(a.Type)) + " with no details)"))
	}
	return out
}

// codeLines shows a line diff numbered as in the code, − removed, + added, the
// context plain, highlighted, wrapped to width: a wrapped part is marked ↪ under
// the number, never with a sign of its own, so it cannot read as another line.
func codeLines(th theme, diff []changetext.DiffLine, w int) []string {
	last := 0
	for _, d := range diff {
		last = max(last, d.Old, d.New)
	}
	num := len(fmt.Sprint(last))
	pad := strings.Repeat(" ", num)
	text := max(10, w-num-5) // "  " + number + " " + sign + " "
	var out []string
	for _, d := range diff {
		if d.Op == changetext.Gap {
			out = append(out, th.dim.Render("  "+pad+" ⋮"))
			continue
		}
		sign, st := " ", th.dim
		switch d.Op {
		case '-':
			sign, st = "−", th.removed
		case '+':
			sign, st = "+", th.added
		}
		l := strings.ReplaceAll(reveal(d.Text), "\t", "  ")
		for i, part := range strings.Split(ansi.Wrap(l, text, ""), "\n") {
			if i == 0 {
				out = append(out, "  "+st.Render(fmt.Sprintf("%*d %s", num, d.Number(), sign))+" "+th.code.Render(part))
			} else {
				out = append(out, "  "+pad+th.dim.Render(" ↪")+" "+th.code.Render(part))
			}
		}
	}
	return out
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return compactJSON(v)
}

// compactJSON is a value as one line of JSON, written as the graph will hold it:
// no HTML escaping (a "<" stays "<"), and every hidden character shown (reveal),
// so the text read is the text applied.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return reveal(fmt.Sprint(v))
	}
	return reveal(strings.TrimSuffix(b.String(), "\n"))
}

// wrapStyled wraps styled lines wider than w (a long edge at 40 columns), each
// continuation indented under the line it continues, rather than cutting them.
func wrapStyled(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		if ansi.StringWidth(l) <= w {
			out = append(out, l)
			continue
		}
		plain := ansi.Strip(l)
		pad := strings.Repeat(" ", min(len(plain)-len(strings.TrimLeft(plain, " "))+2, w/2))
		first := strings.SplitN(ansi.Wrap(l, w, ""), "\n", 2)[0]
		// The rest is wrapped whole at the narrower width, not piece by piece (which
		// left fragments of a few letters on lines of their own).
		lw := ansi.StringWidth(l)
		rest := ansi.Cut(l, ansi.StringWidth(first), lw)
		for strings.HasPrefix(ansi.Strip(rest), " ") {
			rest = ansi.Cut(rest, 1, lw)
		}
		out = append(out, first)
		for _, q := range strings.Split(ansi.Wrap(rest, w-len(pad), ""), "\n") {
			out = append(out, pad+q)
		}
	}
	return out
}

// keyHints renders "a approve · r reject" fitted to width.
func keyHints(th theme, width int, pairs [][2]string) string {
	var parts []string
	for _, p := range pairs {
		part := th.statusKey.Render(p[0]) + " " + th.status.Render(p[1])
		if ansi.StringWidth(part) > width { // one hint wider than the line: wrap it
			part = strings.Join(wrapStyled([]string{part}, width), "\n")
		}
		parts = append(parts, part)
	}
	s := strings.Join(parts, th.status.Render(" · "))
	if ansi.StringWidth(s) <= width && !strings.Contains(s, "\n") {
		return s
	}
	// wrap onto several lines rather than hide a key
	var lines []string
	cur := ""
	for _, p := range parts {
		if strings.Contains(p, "\n") { // a wrapped hint stands on its own lines
			if cur != "" {
				lines = append(lines, cur)
			}
			lines = append(lines, p)
			cur = ""
			continue
		}
		cand := p
		if cur != "" {
			cand = cur + th.status.Render(" · ") + p
		}
		if ansi.StringWidth(cand) > width && cur != "" {
			lines = append(lines, cur)
			cand = p
		}
		cur = cand
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return strings.Join(lines, "\n")
}
