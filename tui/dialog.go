package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
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

// proposalDialog previews a proposal as a graph diff and takes the decision.
type proposalDialog struct {
	lk       *look
	p        convo.Proposal
	sheets   map[string]string
	opened   time.Time
	offset   int
	feedback *textinput.Model // non-nil while typing feedback
	pic      *changePicture   // the change drawn on the graph, above the text diff (picture.go)

	// body is the diff and reason drawn for bodyW and bodyDark: built (and stripped)
	// once per width and theme, not on every redraw while the user reads and scrolls.
	body     []string
	bodyW    int
	bodyDark bool
}

func newProposalDialog(lk *look, p convo.Proposal, sheets map[string]string, now time.Time) *proposalDialog {
	return &proposalDialog{lk: lk, p: p, sheets: sheets, opened: now}
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
	if now.Sub(d.opened) < proposalGuard {
		return false, nil // typed before the dialog could be read
	}
	// The decision names the proposal shown: if another one is pending by now,
	// nothing is decided.
	shown := convo.Decision{ProposalID: d.p.ID, Digest: d.p.Digest}
	switch k.String() {
	case "a":
		shown.Approved = true
		return true, emit(decisionMsg{shown})
	case "A":
		shown.Approved, shown.AlwaysForThread = true, true
		return true, emit(decisionMsg{shown})
	case "r":
		return true, emit(decisionMsg{shown})
	case "f":
		ti := textinput.New()
		ti.Placeholder = "what should change instead?"
		ti.Prompt = "feedback> "
		ti.SetVirtualCursor(true)
		ti.Focus()
		d.feedback = &ti
		return false, nil
	case "esc", "q":
		return true, emit(dismissProposalMsg{})
	case "up", "k":
		d.offset = max(0, d.offset-1)
	case "down", "j":
		d.offset++
	case "pgup":
		d.offset = max(0, d.offset-10)
	case "pgdown":
		d.offset += 10
	}
	return false, nil
}

func (d *proposalDialog) Render(width, height int) string {
	th := d.lk.th
	w := max(20, min(width, 100)-4)
	if d.body == nil || d.bodyW != w || d.bodyDark != th.dark {
		d.body, d.bodyW, d.bodyDark = diffLines(th, d.p.Action, d.sheets, w), w, th.dark
		if d.pic != nil {
			d.body = append(slices.Clip(d.pic.render(th, w)), d.body...)
		}
		if r := strings.TrimSpace(strip(d.p.Reason)); r != "" {
			d.body = append(d.body, "", th.dim.Render("Reason:"))
			d.body = append(d.body, strings.Split(indent(wrapPlain(r, w-2), 2), "\n")...)
		}
		d.body = wrapStyled(d.body, w)
	}
	body := d.body
	var foot []string
	if d.feedback != nil {
		d.feedback.SetWidth(w - 12)
		foot = []string{"", d.feedback.View(), th.dim.Render("enter send · esc back")}
	} else {
		pairs := [][2]string{{"a", "approve"}, {"r", "reject"}, {"f", "reject with feedback"},
			{"A", "approve, always for " + string(d.p.Action.Type) + " here"}, {"esc", "decide later"}}
		if w < 60 { // narrow: the short words, so the change keeps its room
			pairs = [][2]string{{"a", "approve"}, {"r", "reject"}, {"f", "feedback"}, {"A", "always"}, {"esc", "later"}}
		}
		hints := keyHints(th, w, pairs)
		foot = append([]string{""}, strings.Split(hints, "\n")...)
	}
	// The frame (borders and title) takes 3 lines; the keys are always shown, and
	// the change scrolls in what is left, saying what is above and below.
	room := height - 3 - len(foot)
	if room < 2 { // tiny: drop the blank line before the keys
		foot = foot[1:]
		room = height - 3 - len(foot)
	}
	room = max(1, room)
	if d.offset > max(0, len(body)-room) {
		d.offset = max(0, len(body)-room)
	}
	view := body[d.offset:]
	if len(view) > room {
		more := len(body) - d.offset - room + 1
		view = append(view[:room-1:room-1], th.dim.Render("  ↓ "+plural(more, "more line")+" (↓/j scrolls)"))
	}
	if d.offset > 0 && len(view) > 2 {
		view = append([]string{th.dim.Render("  ↑ " + plural(d.offset+1, "line") + " above (↑/k)")}, view[1:]...)
	}
	title := "Proposed change · " + strip(d.p.Tool)
	if ansi.StringWidth(title) > w {
		title = "Proposed change"
	}
	return boxed(th, title, strings.Join(slices.Concat(view, foot), "\n"), min(width, 100), height)
}

// diffLines renders an action as a graph diff: + added, − removed, ~ changed.
func diffLines(th theme, a datasource.Action, sheets map[string]string, w int) []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	sheet := func(id string) string {
		if n, ok := sheets[id]; ok && n != "" && n != id {
			return fmt.Sprintf("sheet %s (%s)", strip(n), strip(id))
		}
		return "sheet " + strip(id)
	}
	edgeLine := func(sign string, st lipgloss.Style, e datasource.Edge) string {
		s := fmt.Sprintf("%s edge %s: %s:%s → %s:%s", sign, strip(e.Key), strip(e.Source), strip(e.SourceHandle), strip(e.Target), strip(e.TargetHandle))
		if e.Label != "" {
			s += fmt.Sprintf(" [%s]", strip(e.Label))
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
		add(th.added.Render(fmt.Sprintf("+ node %s (%s)", strip(key), strip(p.TypeKey))),
			th.dim.Render(fmt.Sprintf("  %s at (%g, %g)", sheet(p.Sheet), p.PosX, p.PosY)))
		if p.Process != "" {
			add("  process:")
			add(codeLines(th, "+", th.added, p.Process, w)...)
		}
		if p.Data != nil {
			add("  data: " + th.added.Render(compactJSON(p.Data)))
		}
	case datasource.UpdateNodeAction:
		p := a.UpdateNode
		if p == nil {
			break
		}
		add(th.changed.Render("~ node " + strip(p.NodeKey)))
		fields := make([]string, 0, len(p.Changes))
		for f := range p.Changes {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			newV := p.Changes[f]
			oldV, had := p.Before[f]
			if f == "process" || strings.Contains(valueText(newV), "\n") || strings.Contains(valueText(oldV), "\n") {
				add("  " + strip(f) + ":")
				if had {
					add(codeLines(th, "−", th.removed, valueText(oldV), w)...)
				}
				add(codeLines(th, "+", th.added, valueText(newV), w)...)
				continue
			}
			old := "(unset)"
			if had {
				old = compactJSON(oldV)
			}
			add(fmt.Sprintf("  %s: %s → %s", strip(f), th.removed.Render(old), th.added.Render(compactJSON(newV))))
		}
	case datasource.MoveNodeAction:
		if p := a.MoveNode; p != nil {
			add(th.changed.Render(fmt.Sprintf("~ node %s moves to (%g, %g)", strip(p.NodeKey), p.PosX, p.PosY)))
		}
	case datasource.DeleteNodeAction:
		if p := a.DeleteNode; p != nil {
			add(th.removed.Render("− node " + strip(p.NodeKey)))
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
				add(th.removed.Render("− edge " + strip(p.EdgeKey)))
			}
		}
	case datasource.BatchAction:
		if p := a.Batch; p != nil {
			add(th.dim.Render(fmt.Sprintf("%d changes, applied together:", len(p.Actions))))
			for _, sub := range p.Actions {
				add(diffLines(th, sub, sheets, w)...)
			}
		}
	}
	if len(out) == 0 {
		add(th.dim.Render("(an action of type " + strip(string(a.Type)) + " with no details)"))
	}
	return out
}

// codeLines shows code with a diff sign per line, highlighted, wrapped to width.
func codeLines(th theme, sign string, signStyle lipgloss.Style, code string, w int) []string {
	code = strings.TrimRight(strip(code), "\n")
	var out []string
	for _, l := range strings.Split(code, "\n") {
		l = strings.ReplaceAll(l, "\t", "  ")
		for _, part := range strings.Split(ansi.Hardwrap(l, max(10, w-6), true), "\n") {
			out = append(out, "    "+signStyle.Render(sign)+" "+th.code.Render(part))
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

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strip(string(b))
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
		parts := strings.Split(ansi.Wrap(l, w, ""), "\n")
		out = append(out, parts[0])
		for _, p := range parts[1:] {
			for _, q := range strings.Split(ansi.Wrap(p, w-len(pad), ""), "\n") {
				out = append(out, pad+q)
			}
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
