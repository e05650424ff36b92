package tui

import (
	"fmt"
	"strings"

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

func (h *header) Render(width int) string {
	if h.cacheW == width && h.cache != "" {
		return h.cache
	}
	th := h.lk.th
	title := h.title
	if title == "" {
		title = "new thread"
	}
	left := th.header.Render("◆ "+h.graph) + th.headerDim.Render(" · "+h.source+" · "+h.model)
	right := th.headerDim.Render(" │ ") + th.focus.Render(title)
	line := left + right
	if ansi.StringWidth(line) > width {
		// narrow: the title matters more than the source
		line = th.header.Render("◆ "+h.graph) + right
	}
	h.cache = ansi.Truncate(line, width, "…")
	h.cacheW = width
	return h.cache
}

// statusBar is the bottom line: state, tokens, cost, context use, key hints.
type statusBar struct {
	lk         *look
	state      string
	busy       bool
	frame      int
	usage      convo.Usage
	lastPrompt int
	window     int
	note       string // one-off message (quit confirmation, hints)

	// hints is the key hints line for hintsW and hintsDark, built once: the bar is
	// drawn on every token batch and the hints never change.
	hints     string
	hintsW    int
	hintsDark bool
}

func (s *statusBar) Render(width int) string {
	th := s.lk.th
	state := s.state
	if s.busy {
		state = spinnerFrames[s.frame%len(spinnerFrames)] + " " + state
	}
	left := th.statusKey.Render(state)
	stats := fmt.Sprintf(" · ↑%s ↓%s · $%.4f", kTokens(s.usage.PromptTokens), kTokens(s.usage.CompletionTokens), s.usage.CostUSD)
	if s.window > 0 && s.lastPrompt > 0 {
		stats += fmt.Sprintf(" · ctx %d%%", s.lastPrompt*100/s.window)
	}
	left += th.status.Render(stats)
	var right string
	if s.note != "" {
		right = th.warn.Render(s.note)
	} else {
		if s.hints == "" || s.hintsW != width || s.hintsDark != th.dark {
			s.hints = keyHints(th, width, [][2]string{{"enter", "send"}, {"esc", "stop"}, {"ctrl+t", "threads"}, {"?", "help"}})
			s.hintsW, s.hintsDark = width, th.dark
		}
		right = s.hints
	}
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+2 > width {
		if s.note != "" {
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
