package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/mdstream"
)

// look is what every transcript item renders with. Items share one pointer so a
// theme change (the terminal reported its background) reaches all of them.
type look struct {
	th theme
	md *markdown
}

// item is one block of the transcript. Render must be pure for a given state and
// width: the transcript caches its lines until the item is touched or the width changes.
type item interface {
	Render(width int) string
}

// entry caches an item's rendered lines for one width.
type entry struct {
	it    item
	lines []string
	width int // 0: not rendered
}

// transcript is the scrollable conversation. Rendering cost does not grow with its
// length: an item renders once per width, and only the items that reach the visible
// window are ever rendered (a resize re-wraps lazily, from the bottom up).
type transcript struct {
	entries    []*entry
	dirty      []*entry
	scrollBack int  // lines between the bottom of the view and the end; 0 follows the end
	focus      int  // index of the focused badge, -1 for none
	newBelow   bool // output arrived below the view while scrolled up
	// showFocus: the focus just moved, so the next drawing scrolls the focused
	// badge into view (once: the person may scroll away from it after).
	showFocus bool
}

func newTranscript() *transcript { return &transcript{focus: -1} }

func (t *transcript) add(it item) *entry {
	e := &entry{it: it}
	t.entries = append(t.entries, e)
	if t.scrollBack > 0 {
		t.dirty = append(t.dirty, e) // counted by refresh so the view stays put
	}
	return e
}

// touch marks an entry for re-rendering.
func (t *transcript) touch(e *entry) {
	if e == nil {
		return
	}
	for _, d := range t.dirty {
		if d == e {
			return
		}
	}
	t.dirty = append(t.dirty, e)
}

func (t *transcript) reset() {
	t.entries, t.dirty, t.scrollBack, t.focus, t.newBelow = nil, nil, 0, -1, false
}

func (t *transcript) remove(e *entry) {
	for i, x := range t.entries {
		if x == e {
			t.entries = append(t.entries[:i], t.entries[i+1:]...)
			if t.focus >= i {
				t.focus = -1
			}
			return
		}
	}
}

func (e *entry) render(width int) int {
	old := len(e.lines)
	out := e.it.Render(width)
	e.lines = append(strings.Split(out, "\n"), "") // a blank line after every block
	e.width = width
	return len(e.lines) - old
}

// refresh re-renders touched entries; while the user is scrolled up, the lines they
// add are added to scrollBack so the text under their eyes does not move.
func (t *transcript) refresh(width int) {
	for _, e := range t.dirty {
		wasRendered := e.width == width
		delta := e.render(width)
		if t.scrollBack > 0 && (wasRendered || delta > 0) {
			t.scrollBack += delta
			if delta > 0 {
				t.newBelow = true
			}
		}
	}
	t.dirty = t.dirty[:0]
}

// window returns the height lines to show, walking from the end and rendering only
// what it reaches.
func (t *transcript) window(width, height int) []string {
	if height <= 0 {
		return nil
	}
	t.refresh(width)
	need := t.scrollBack + height
	focus := -1
	if t.showFocus {
		focus = t.focus
		t.showFocus = false
	}
	var chunks [][]string
	total := 0
	after, flen := -1, 0 // the lines below the focused entry, and its own
	for i := len(t.entries) - 1; i >= 0 && (total < need || (focus >= 0 && i >= focus)); i-- {
		e := t.entries[i]
		if e.width != width {
			e.render(width)
		}
		if i == focus {
			after, flen = total, len(e.lines)
		}
		chunks = append(chunks, e.lines)
		total += len(e.lines)
	}
	if after >= 0 {
		// The view ends scrollBack lines above the last (the end's separator is
		// dropped below): bring the badge's last line into it, then its first (a
		// badge taller than the view shows its head).
		t.scrollBack = min(t.scrollBack, after)
		t.scrollBack = max(t.scrollBack, after+flen-1-height, 0)
		need = t.scrollBack + height
	}
	if total < need && t.scrollBack > 0 { // reached the top: clamp
		t.scrollBack = max(0, total-height)
		need = t.scrollBack + height
	}
	all := make([]string, 0, min(total, need))
	for i := len(chunks) - 1; i >= 0; i-- {
		all = append(all, chunks[i]...)
	}
	// drop the trailing separator of the last block
	if len(all) > 0 && all[len(all)-1] == "" {
		all = all[:len(all)-1]
		total--
	}
	end := len(all) - t.scrollBack
	if end < 0 {
		end = 0
	}
	start := max(0, end-height)
	out := all[start:end]
	if len(out) < height { // short transcript: pin to the bottom above the input
		pad := make([]string, height-len(out), height)
		out = append(pad, out...)
	}
	return out
}

func (t *transcript) scroll(delta int) {
	t.scrollBack = max(0, t.scrollBack+delta)
	if t.scrollBack == 0 {
		t.newBelow = false
	}
}
func (t *transcript) toBottom()       { t.scrollBack, t.newBelow = 0, false }
func (t *transcript) following() bool { return t.scrollBack == 0 }

// focusBadge moves the badge focus by dir (+1 newer, -1 older), wrapping to none.
func (t *transcript) focusBadge(dir int) {
	var badges []int
	for i, e := range t.entries {
		if _, ok := e.it.(*badgeItem); ok {
			badges = append(badges, i)
		}
	}
	if old := t.focused(); old != nil {
		old.focused = false
		t.touch(t.entries[t.focus])
	}
	if len(badges) == 0 {
		t.focus = -1
		return
	}
	pos := -1
	for k, i := range badges {
		if i == t.focus {
			pos = k
		}
	}
	switch {
	case pos < 0 && dir < 0:
		pos = len(badges) - 1
	case pos < 0:
		pos = len(badges) - 1
	default:
		pos += dir
	}
	if pos < 0 || pos >= len(badges) {
		t.focus = -1
		return
	}
	t.focus = badges[pos]
	t.showFocus = true
	b := t.entries[t.focus].it.(*badgeItem)
	b.focused = true
	t.touch(t.entries[t.focus])
}

func (t *transcript) unfocus() {
	if b := t.focused(); b != nil {
		b.focused = false
		t.touch(t.entries[t.focus])
	}
	t.focus = -1
}

func (t *transcript) focused() *badgeItem {
	if t.focus < 0 || t.focus >= len(t.entries) {
		return nil
	}
	b, _ := t.entries[t.focus].it.(*badgeItem)
	return b
}

// ---- items ----

// userItem is a question as typed (or as stored: history may hold anything).
type userItem struct {
	lk   *look
	text string // stripped by newUser
}

func newUser(lk *look, text string) *userItem { return &userItem{lk: lk, text: strip(text)} }

func (u *userItem) Render(width int) string {
	body := wrapPlain(u.text, width-2)
	return u.lk.th.userLabel.Render("You") + "\n" + indent(u.lk.th.user.Render(body), 2)
}

// assistantState is the life of an answer.
type assistantState int

const (
	aStreaming assistantState = iota
	aDone
	aStopped     // the user pressed Esc
	aInterrupted // stored as interrupted (a previous process died mid-stream)
)

// assistantItem is one answer. While streaming, text is only shown up to `shown`
// (advanced by the frame tick), the stable prefix is rendered once, chunk by chunk,
// into prefix, and only the tail after it re-renders.
type assistantItem struct {
	lk        *look
	text      strings.Builder
	reasoning strings.Builder
	shown     int
	state     assistantState
	expanded  bool // reasoning expanded

	chunkW   int
	chunkEnd int    // text[:chunkEnd] is rendered in prefix
	prefix   string // the rendered chunks, joined

	// thought is the reasoning line(s) for thoughtLen bytes of reasoning at thoughtW
	// (and thoughtExp): the answer streams after the reasoning is done, and every
	// frame would otherwise count or wrap it again.
	thought    string
	thoughtLen int
	thoughtW   int
	thoughtExp bool
}

func (a *assistantItem) label() string {
	l := a.lk.th.assistantLabel.Render("Nodius")
	switch a.state {
	case aStopped:
		l += a.lk.th.warn.Render(" · stopped")
	case aInterrupted:
		l += a.lk.th.warn.Render(" · interrupted")
	}
	return l
}

func (a *assistantItem) Render(width int) string {
	var b strings.Builder
	b.WriteString(a.label())
	if t := a.thoughtView(width); t != "" {
		b.WriteString("\n" + t)
	}
	text := a.text.String()
	if a.state == aStreaming {
		text = text[:a.shown]
	}
	body := a.body(text, width)
	if body != "" {
		b.WriteString("\n" + body)
	} else if a.state == aStreaming {
		b.WriteString("\n" + a.lk.th.dim.Render("  …"))
	}
	return b.String()
}

// thoughtView is the reasoning: a word count, or the whole text when expanded.
func (a *assistantItem) thoughtView(width int) string {
	if a.reasoning.Len() == a.thoughtLen && width == a.thoughtW && a.expanded == a.thoughtExp {
		return a.thought
	}
	a.thoughtLen, a.thoughtW, a.thoughtExp = a.reasoning.Len(), width, a.expanded
	r := strip(a.reasoning.String())
	switch {
	case strings.TrimSpace(r) == "":
		a.thought = ""
	case a.expanded:
		a.thought = a.lk.th.reasoning.Render("  ▾ thought · ctrl+x hides\n" + indent(wrapPlain(r, width-4), 4))
	default:
		a.thought = a.lk.th.reasoning.Render("  ▸ thought for " + plural(len(strings.Fields(r)), "word") + " · ctrl+x shows")
	}
	return a.thought
}

// body renders the answer: whole once finished; while streaming, the stable prefix
// chunk by chunk (each chunk once) plus the unfinished tail.
func (a *assistantItem) body(text string, width int) string {
	if a.state != aStreaming {
		a.prefix, a.chunkEnd = "", 0
		return a.lk.md.Render(text, width)
	}
	if a.chunkW != width {
		a.prefix, a.chunkEnd, a.chunkW = "", 0, width
	}
	// text[:chunkEnd] ends outside a code fence, so the scan can start there.
	if p := a.chunkEnd + mdstream.StablePrefix(text[a.chunkEnd:]); p > a.chunkEnd {
		a.prefix = joinBlocks(a.prefix, a.lk.md.Render(text[a.chunkEnd:p], width))
		a.chunkEnd = p
	}
	return joinBlocks(a.prefix, a.lk.md.RenderTail(text[a.chunkEnd:], width))
}

// joinBlocks puts two rendered blocks one blank line apart; an empty one vanishes.
func joinBlocks(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// badgeState is a tool call's life.
type badgeState int

const (
	bRunning badgeState = iota
	bOK
	bErr
)

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// badgeItem is one tool call: `● name args` with a spinner, then `✓ … 12 ms` or
// `× …`; focused, it expands to its arguments and result. Everything it shows is
// stripped and summarized once, when the call or its result arrives: a running
// badge re-renders every frame for its spinner, and that must stay cheap.
type badgeItem struct {
	lk      *look
	name    string // the tool's name
	args    string // the arguments as sent
	summary string // `key=value …`, for the one-line head
	state   badgeState
	frame   int
	dur     time.Duration
	result  string
	errText string
	focused bool
}

func newBadge(lk *look, c convo.ToolCall) *badgeItem {
	args := strip(c.Arguments)
	return &badgeItem{lk: lk, name: strip(c.Name), args: args, summary: argSummary(args)}
}

// finish records the call's outcome; an empty errText means it succeeded. A
// proposal's call succeeded only when its change was applied: a rejected or
// unapplied one is marked as such, never with ✓.
func (b *badgeItem) finish(result, errText string, d time.Duration) {
	if errText == "" && strings.HasPrefix(b.name, "propose_") {
		var r struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(result), &r) == nil {
			switch r.Status {
			case "rejected":
				errText = "rejected"
			case "not_applied", "error":
				errText = "not applied"
			}
		}
	}
	b.result, b.errText, b.dur = strip(result), strip(errText), d
	b.state = bOK
	if errText != "" {
		b.state = bErr
	}
}

// finishDecided ends the badge of a proposal from its stored decision: × when it
// was rejected or not applied, ✓ when applied.
func (b *badgeItem) finishDecided(result string, p convo.Proposal) {
	b.result, b.errText, b.state = strip(result), "", bOK
	switch {
	case p.Decision == convo.Rejected:
		b.errText, b.state = "rejected", bErr
	case p.Outcome == convo.NotApplied:
		b.errText, b.state = "not applied", bErr
	}
}

// expandLines is how many lines of arguments or result an expanded badge shows.
const expandLines = 10

func (b *badgeItem) Render(width int) string {
	th := b.lk.th
	var head string
	switch b.state {
	case bRunning:
		head = th.badgeRun.Render("● "+b.name) + " " + th.badgeArg.Render(b.summary) + " " + th.badgeRun.Render(spinnerFrames[b.frame%len(spinnerFrames)])
	case bOK:
		head = th.badgeOK.Render("✓ "+b.name) + " " + th.badgeArg.Render(b.summary) + " " + th.dim.Render(fmtDur(b.dur))
	case bErr:
		head = th.badgeErr.Render("× "+b.name) + " " + th.badgeArg.Render(b.summary) + " " + th.badgeErr.Render(firstLine(b.errText))
	}
	if b.focused {
		head = th.focus.Render("▶ ") + head
	} else {
		head = "  " + head
	}
	head = ansi.Truncate(head, width, "…")
	if !b.focused {
		return head
	}
	var out strings.Builder
	out.WriteString(head)
	out.WriteString("\n" + th.dim.Render("    arguments:") + "\n")
	out.WriteString(clipLines(prettyJSON(b.args), width-4, expandLines, th))
	res := b.result
	label := "    result:"
	if b.state == bErr {
		res, label = b.errText, "    error:"
	}
	if b.state != bRunning {
		out.WriteString("\n" + th.dim.Render(label) + "\n")
		out.WriteString(clipLines(prettyJSON(res), width-4, expandLines, th))
	}
	return out.String()
}

// clipLines wraps text to width, keeps n lines and says how many more there are.
func clipLines(text string, width, n int, th theme) string {
	lines := strings.Split(wrapPlain(strings.TrimRight(text, "\n"), max(10, width)), "\n")
	more := 0
	if len(lines) > n {
		more = len(lines) - n
		lines = lines[:n]
	}
	s := indent(strings.Join(lines, "\n"), 4)
	if more > 0 {
		s += "\n" + th.dim.Render("    … "+plural(more, "more line")+" · enter shows all")
	}
	return s
}

// argSummary turns {"nodeKey":"fetch-api","depth":2} into `nodeKey=fetch-api depth=2`.
// Keys and values are stripped again after decoding: JSON can spell an escape as
// \u001b, which only becomes a control character once it is decoded.
func argSummary(raw string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return firstLine(strip(raw))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := m[k].(type) {
		case string:
			v = x
		case float64, bool, nil:
			v = fmt.Sprint(x)
		default:
			v = "…"
		}
		parts = append(parts, strip(k)+"="+firstLine(strip(v)))
	}
	return strings.Join(parts, " ")
}

func prettyJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(b)
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "" // unknown (loaded from history)
	case d < time.Millisecond:
		return "<1 ms"
	case d < 10*time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// noticeKind styles a notice.
type noticeKind int

const (
	nInfo noticeKind = iota
	nError
	nWelcome
	nDecision
	nRejected // a rejected proposal: not an error, and no success mark
)

// noticeItem is a line or two from the TUI itself: welcome, errors, decisions.
type noticeItem struct {
	lk   *look
	kind noticeKind
	text string
}

func (n *noticeItem) Render(width int) string {
	th := n.lk.th
	body := wrapPlain(n.text, width-2)
	switch n.kind {
	case nError:
		return indent(th.errText.Render(body), 2)
	case nWelcome:
		return indent(body, 2)
	case nDecision:
		return indent(th.badgeOK.Render(body), 2)
	case nRejected:
		return indent(th.badgeErr.Render(body), 2)
	}
	return indent(th.dim.Render(body), 2)
}

// ---- text helpers ----

// wrapPlain wraps plain text at width: at spaces only (never inside a word like
// --base-url or fetch-api, unless the word alone is wider than the line), each
// continuation line at the indentation of the line it continues.
func wrapPlain(s string, width int) string {
	if width < 4 {
		width = 4
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		pad := strings.Repeat(" ", min(len(line)-len(body), width/2))
		room := width - len(pad)
		cur := ""
		flush := func() {
			out = append(out, pad+cur)
			cur = ""
		}
		for _, word := range strings.Split(body, " ") {
			ww := ansi.StringWidth(word)
			switch {
			case cur == "" && ww <= room:
				cur = word
			case cur != "" && ansi.StringWidth(cur)+1+ww <= room:
				cur += " " + word
			default:
				if cur != "" {
					flush()
				}
				for ansi.StringWidth(word) > room { // a word wider than the line
					out = append(out, pad+ansi.Truncate(word, room, ""))
					word = ansi.TruncateLeft(word, room, "")
				}
				cur = word
			}
		}
		if cur != "" {
			flush()
		}
	}
	return strings.Join(out, "\n")
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func stripANSI(s string) string { return ansi.Strip(s) }

func truncateLine(s string, w int) string { return ansi.Truncate(s, w, "…") }

// plural is "1 word", "2 words".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
