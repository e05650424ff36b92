package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent/convo"
)

// header is the top line: graph, source, provider/model, thread title. It is cached
// per width: it changes only when the thread or the configuration does. Its fields
// are stripped when set (newHeader, setTitle), so rendering never strips.
type header struct {
	lk                   *look
	graph, source, model string
	title                string
	changed              bool // the graph changed by others since the last question (live.go)
	cache                string
	cacheW               int
}

func newHeader(lk *look, graph, source, model string) *header {
	return &header{lk: lk, graph: strip(graph), source: strip(source), model: strip(model)}
}

func (h *header) setTitle(t string) {
	t = strings.TrimSpace(strip(t))
	if h.title != t {
		h.title, h.cacheW = t, 0
	}
}

// Render draws "◆ graph · source · model │ title" in width columns. The source
// is where an approved change is written, so it is never dropped: the title is cut
// first (down to a dozen columns), then the model is dropped, then the source is
// shortened to its end (the file name), then the title goes; the graph's name is
// cut last.
func (h *header) Render(width int) string {
	if h.cacheW == width && h.cache != "" {
		return h.cache
	}
	th := h.lk.th
	title := h.title
	if title == "" {
		title = "new thread"
	}
	const minTitle, minSource = 12, 16
	sep := " │ "
	titleW := min(minTitle, ansi.StringWidth(title)) + len(sep)
	graph := "◆ " + h.graph
	note := h.changedNote() // "changed by others": kept with the graph's name
	nw := ansi.StringWidth(note)
	line := func(graph, rest, title string) string {
		l := th.header.Render(graph) + note + th.headerDim.Render(rest)
		if room := width - ansi.StringWidth(l) - len(sep); title != "" && room >= 4 {
			l += th.headerDim.Render(sep) + th.focus.Render(ansi.Truncate(title, room, "…"))
		}
		return ansi.Truncate(l, width, "…")
	}
	fits := func(s string, extra int) bool { return ansi.StringWidth(s)+nw+extra <= width }
	gw := ansi.StringWidth(graph) + nw
	switch {
	case h.source == "":
		h.cache = line(graph, " · "+h.model, title)
	case fits(graph+" · "+h.source+" · "+h.model, titleW):
		h.cache = line(graph, " · "+h.source+" · "+h.model, title)
	case fits(graph+" · "+h.source, titleW):
		h.cache = line(graph, " · "+h.source, title)
	case width-gw-3-titleW >= minSource:
		h.cache = line(graph, " · "+shortSource(h.source, width-gw-3-titleW), title)
	default:
		// Narrow: the graph's name and the source share the line, no title.
		g := ansi.Truncate(graph, max(8, min(gw, width-3-sourceWant(h.source))), "…")
		h.cache = line(g, " · "+shortSource(h.source, width-ansi.StringWidth(g)-3), "")
	}
	h.cacheW = width
	return h.cache
}

// shortSource fits a source in w columns keeping its end, where the file name
// or the graph is: "file:…/graphs/players.json", else "…/players.json", else as
// much of the end as fits.
func shortSource(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw <= w {
		return s
	}
	tail := func(n int) string { return ansi.TruncateLeft(s, sw-max(1, n), "") }
	base := ansi.StringWidth(s[strings.LastIndex(s, "/")+1:])
	if i := strings.Index(s, ":"); i > 0 && i <= 8 {
		if keep := w - (i + 1) - 1; keep >= base+1 {
			return s[:i+1] + "…" + tail(keep)
		}
	}
	return "…" + tail(w-1)
}

// sourceWant is the width a source needs to keep its file name: "…/name".
func sourceWant(s string) int {
	return min(ansi.StringWidth(s), ansi.StringWidth(s[strings.LastIndex(s, "/")+1:])+2)
}

// statusBar is the bottom line: state, tokens, cost, context use, key hints.
type statusBar struct {
	lk         *look
	priced     bool // the endpoint's price is known: show the cost
	mode       hintMode
	newBelow   bool // scrolled up while output arrived
	state      phase
	tool       string // the tool running, in phaseTool
	busy       bool
	frame      int
	usage      convo.Usage
	lastPrompt int
	window     int
	note       string // one-off message (quit confirmation, hints)
	loading    string // what loading the graph is doing; "" once it is ready

	// Time: since is when the current state began (shown as elapsed while busy),
	// now is the clock at this render; retry describes a pending retry.
	since, now time.Time
	retry      *retryInfo

	// hints is the key hints line for hintsW and hintsDark, built once: the bar is
	// drawn on every token batch and the hints never change.
	hints     string
	hintsW    int
	hintsDark bool
	hintsMode hintMode
}

// hintMode is what the user is doing, which decides the key hints shown.
type hintMode int

const (
	hintIdle hintMode = iota
	hintTyping
	hintStreaming
	hintScrolled
	hintPending
	hintDialog
	hintDialogUnread // the proposal dialog with lines not on screen yet
	hintFeedback     // typing the feedback of a rejection
	hintPicker
	hintViewer
	hintUndo
)

// hintsFor lists the keys that matter in a mode, most useful first (the bar drops
// the last ones when narrow).
func hintsFor(m hintMode) [][2]string {
	switch m {
	case hintTyping:
		return [][2]string{{"enter", "send"}, {"alt+enter", "new line"}, {"ctrl+o", "editor"}, {"esc", "clear"}}
	case hintStreaming:
		return [][2]string{{"esc", "stop"}, {"pgup", "scroll"}, {"ctrl+c", "quit"}}
	case hintScrolled:
		return [][2]string{{"end", "follow"}, {"pgup/pgdn", "scroll"}, {"?", "help"}}
	case hintPending:
		return [][2]string{{"ctrl+p", "review the proposal"}, {"ctrl+t", "threads"}, {"?", "help"}}
	case hintDialog:
		return [][2]string{{"a", "approve"}, {"r", "reject"}, {"esc", "later"}}
	case hintDialogUnread:
		return [][2]string{{"pgdn", "read on"}, {"r", "reject"}, {"esc", "later"}}
	case hintFeedback:
		return [][2]string{{"enter", "send the feedback"}, {"esc", "back"}}
	case hintPicker:
		return [][2]string{{"enter", "open"}, {"ctrl+n", "new"}, {"esc", "close"}}
	case hintViewer:
		return [][2]string{{"↑/↓", "scroll"}, {"esc", "close"}}
	case hintUndo:
		return [][2]string{{"esc", "cancel the undo"}}
	}
	return [][2]string{{"enter", "send"}, {"ctrl+t", "threads"}, {"ctrl+y", "copy"}, {"?", "help"}}
}

// retryInfo is a retry the agent announced: attempt n of max, at a time, and why.
type retryInfo struct {
	attempt, attempts int
	at                time.Time
	cause             string
}

// setState changes the state label and restarts the elapsed time.
func (s *statusBar) setState(p phase, now time.Time) {
	if s.state != p {
		s.state, s.since, s.tool = p, now, ""
	}
}

// setTool is setState(phaseTool) naming the tool that runs.
func (s *statusBar) setTool(name string, now time.Time) {
	if s.state != phaseTool || s.tool != name {
		s.state, s.since, s.tool = phaseTool, now, name
	}
}

// stateText is the state with what the user needs while waiting: how long it has
// been, which attempt this is, and how long until the next one.
func (s *statusBar) stateText() string {
	state := s.state.String()
	if s.state == phaseTool && s.tool != "" {
		state = "running " + s.tool
	}
	if !s.busy {
		return state
	}
	elapsed := func(t time.Time) string {
		if t.IsZero() || s.now.IsZero() || s.now.Before(t) {
			return ""
		}
		return " " + fmtElapsed(s.now.Sub(t))
	}
	if r := s.retry; r != nil {
		of := fmt.Sprintf("attempt %d of %d", r.attempt, r.attempts)
		if wait := r.at.Sub(s.now); wait > 0 {
			return fmt.Sprintf("%s after %s, next in %s", of, r.cause, fmtElapsed(wait+time.Second-1))
		}
		return of + " · " + state + elapsed(r.at)
	}
	return state + elapsed(s.since)
}

// fmtElapsed is "12s", "2m05s".
func fmtElapsed(d time.Duration) string {
	d = d.Truncate(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func (s *statusBar) Render(width int) string {
	th := s.lk.th
	state := s.stateText()
	switch {
	case s.loading != "" && !s.busy:
		state = s.loading + "…"
	case s.loading != "" && s.state == phaseRetrieving:
		// A question sent while the graph loads waits for it: say what it waits on.
		state = s.loading + "… · " + state
	}
	if s.busy {
		state = spinnerFrames[s.frame%len(spinnerFrames)] + " " + state
	}
	left := th.statusKey.Render(state)
	stats := fmt.Sprintf(" · ↑%s ↓%s", kTokens(s.usage.PromptTokens), kTokens(s.usage.CompletionTokens))
	if s.priced { // an endpoint with no known price shows no cost, not $0.0000
		stats += " · " + fmtCost(s.usage.CostUSD)
	}
	if s.window > 0 && s.lastPrompt > 0 {
		stats += fmt.Sprintf(" · ctx %d%%", s.lastPrompt*100/s.window)
	}
	left += th.status.Render(stats)
	var right string
	switch {
	case s.note != "":
		right = th.warn.Render(s.note)
	case s.newBelow && s.mode == hintScrolled:
		right = th.warn.Render("↓ new output below") + th.status.Render(" · ") + th.statusKey.Render("end") + th.status.Render(" follow")
	default:
		if s.hints == "" || s.hintsW != width || s.hintsDark != th.dark || s.hintsMode != s.mode {
			s.hints = fitHints(th, width-ansi.StringWidth(left)-2, hintsFor(s.mode))
			s.hintsW, s.hintsDark, s.hintsMode = width, th.dark, s.mode
		}
		right = s.hints
	}
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+2 > width {
		if s.note != "" || s.newBelow {
			return ansi.Truncate(right, width, "…")
		}
		if lw > width {
			return ansi.Truncate(left, width, "…")
		}
		return left
	}
	return left + strings.Repeat(" ", width-lw-rw) + right
}

func kTokens(n int) string {
	if n >= 10000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

// fitHints joins as many hints as fit in width, dropping the last ones first.
func fitHints(th theme, width int, pairs [][2]string) string {
	for n := len(pairs); n > 0; n-- {
		var parts []string
		for _, p := range pairs[:n] {
			parts = append(parts, th.statusKey.Render(p[0])+" "+th.status.Render(p[1]))
		}
		if s := strings.Join(parts, th.status.Render(" · ")); ansi.StringWidth(s) <= width {
			return s
		}
	}
	return ""
}

// fmtCost shows a cost with the precision it needs: $0.0012, $0.42, $12.30.
func fmtCost(usd float64) string {
	if usd >= 1 {
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}
