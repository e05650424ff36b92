package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"charm.land/glamour/v2"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/changetext"
	"github.com/nodius/nodius-ai/internal/clientaction"
	"github.com/nodius/nodius-ai/internal/mdstream"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// printer is the pipe consumer of the agent's events: text (the raw answer as it
// streams), markdown (rendered block by block on a terminal) or json (one NDJSON event
// per line, written as it happens). Tool activity goes to stderr, and only when stderr
// is a terminal, so stdout carries nothing but the answer in text mode.
type printer struct {
	ios    *IOStreams
	format string

	// text/markdown state
	pending strings.Builder // markdown not yet rendered
	strip   *stripStream
	md      *glamour.TermRenderer
	enc     *json.Encoder
	wrote   bool // something of the current answer reached stdout
	lastNL  bool

	// The assistant's tags ({{node:K}}, {{link:url|text}}, …) become readable text
	// in text and markdown (never raw braces); json keeps them as the model wrote
	// them. tags holds back a tag split across tokens; actions collects the
	// canvas actions of the answer for the note printed after it.
	tags    clientaction.Splitter
	names   clientaction.Names
	actions []clientaction.Action
	// graphFlag is what the note's command needs to name the graph ("--graph demo").
	graphFlag string
	// agentFlag is what the decide command needs to reach the server's assistant
	// (" --agent server:URL"; "" for the local agent): its threads are decided there.
	agentFlag string
}

func newPrinter(ios *IOStreams, format string) *printer {
	p := &printer{ios: ios, format: format, lastNL: true}
	if ios.OutTTY {
		p.strip = &stripStream{}
	}
	switch format {
	case "json":
		p.enc = json.NewEncoder(ios.Out)
		p.enc.SetEscapeHTML(false)
	case "markdown":
		if ios.OutTTY {
			style := "dark"
			if !ios.ColorEnabled() {
				style = "notty"
			}
			if r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(100)); err == nil {
				p.md = r
			}
		}
	}
	return p
}

// Emit consumes one event.
func (p *printer) Emit(e convo.Event) {
	if e.Type == convo.EventNote {
		// A warning, in every format: stderr is for people, whatever stdout carries.
		fmt.Fprintln(p.ios.ErrOut, "warning: "+termtext.OneLine(e.Text))
		return
	}
	if p.enc != nil {
		if e.Public() {
			_ = p.enc.Encode(e) // one line, written at once
		}
		return
	}
	switch e.Type {
	case convo.EventToken:
		p.token(e.Text)
	case convo.EventToolStart:
		p.endAnswer()
		p.status("● %s %s", e.ToolCall.Name, oneLineArgs(e.ToolCall.Arguments))
	case convo.EventToolResult:
		if e.ToolErr != "" {
			// Said even when stderr is not a terminal: an answer that reads as if
			// something was made ("Created …") must not hide that the call failed.
			p.say("× %s failed: %s", e.ToolCall.Name, termtext.OneLine(e.ToolErr))
		} else {
			p.status("✓ %s %d ms", e.ToolCall.Name, e.Duration.Milliseconds())
		}
	case convo.EventUsage:
		u := e.Usage
		if u.CostUSD > 0 {
			p.status("· %d tokens in, %d out, $%.4f", u.PromptTokens, u.CompletionTokens, u.CostUSD)
		} else {
			p.status("· %d tokens in, %d out", u.PromptTokens, u.CompletionTokens)
		}
	case convo.EventComplete:
		p.endAnswer()
		if strings.TrimSpace(e.Text) == "" {
			p.say("nodius-ai: the assistant ended without an answer (its last message is empty): ask again, or ask it to answer with what it found")
		}
	case convo.EventProposal, convo.EventError, convo.EventToolLimit:
		p.endAnswer()
	}
}

func (p *printer) token(s string) {
	if p.strip != nil {
		s = p.strip.Write(s)
	}
	p.write(p.tags.Feed(s))
}

// write renders the tags of ready segments and writes them.
func (p *printer) write(segs []clientaction.Segment) {
	var s string
	switch {
	case len(segs) == 0:
		return
	case len(segs) == 1 && segs[0].Action == nil: // most tokens hold no tag
		s = segs[0].Text
	default:
		for _, seg := range segs {
			if seg.Action != nil {
				p.actions = append(p.actions, *seg.Action)
			}
		}
		s = clientaction.Render(segs, clientaction.Options{Names: p.names, Hyperlinks: p.ios.OutTTY && p.md == nil})
	}
	if p.md != nil {
		p.pending.WriteString(s)
		// Render the blocks that are done; keep the unfinished one for later.
		pending := p.pending.String()
		if cut := mdstream.StablePrefix(pending); cut > 0 {
			p.renderMarkdown(pending[:cut])
			p.pending.Reset()
			p.pending.WriteString(pending[cut:])
		}
		return
	}
	io.WriteString(p.ios.Out, s)
	p.wrote = true
	p.lastNL = strings.HasSuffix(s, "\n")
}

// endAnswer flushes the current message: the rest of the markdown, or a final newline.
func (p *printer) endAnswer() {
	p.write(p.tags.Flush())
	if p.md != nil && p.pending.Len() > 0 {
		p.renderMarkdown(p.pending.String())
		p.pending.Reset()
	}
	if p.wrote && !p.lastNL {
		io.WriteString(p.ios.Out, "\n")
	}
	p.wrote, p.lastNL = false, true
	for _, n := range clientaction.Notes(p.actions, p.graphFlag) {
		p.status("%s", n)
	}
	p.actions = nil
}

func (p *printer) renderMarkdown(block string) {
	out, err := p.md.Render(block)
	if err != nil {
		out = block
	}
	io.WriteString(p.ios.Out, out)
	p.wrote = true
	p.lastNL = strings.HasSuffix(out, "\n")
}

// status writes a line about tool activity to stderr when it is a terminal.
func (p *printer) status(format string, args ...any) {
	if !p.ios.ErrTTY {
		return
	}
	line := termtext.Strip(fmt.Sprintf(format, args...))
	fmt.Fprintln(p.ios.ErrOut, line)
}

// say writes one line to stderr whether or not it is a terminal: what the person
// must know about the run, not its activity.
func (p *printer) say(format string, args ...any) {
	fmt.Fprintln(p.ios.ErrOut, termtext.Strip(fmt.Sprintf(format, args...)))
}

// Decided notes an automatic decision (--on-proposal approve|reject) on stderr.
func (p *printer) Decided(pr *convo.Proposal, d convo.Decision) {
	if p.enc != nil {
		return
	}
	verb := "rejected"
	if d.Approved {
		verb = "approved"
	}
	fmt.Fprintf(p.ios.ErrOut, "nodius-ai: %s proposal %s (%s)\n", verb, termtext.Strip(pr.Tool), termtext.Strip(pr.Reason))
}

// ToolLimitChoice notes an automatic choice at the tool-round limit
// (--on-tool-limit) on stderr.
func (p *printer) ToolLimitChoice(choice string) {
	if p.enc != nil {
		return
	}
	what := "asked for an answer now"
	if choice == "continue" {
		what = "let the assistant continue"
	}
	fmt.Fprintf(p.ios.ErrOut, "nodius-ai: tool-round limit reached: %s (--on-tool-limit %s)\n", what, choice)
}

// Pending tells a person what the run stopped at, in full, and how to decide it.
func (p *printer) Pending(pr *convo.Proposal, threadID string) {
	if p.enc != nil {
		return // the proposal event says it all
	}
	w := p.ios.ErrOut
	if p.format == "markdown" {
		w = p.ios.Out
	}
	fmt.Fprintf(w, "\nProposal waiting for your decision (%s): %s\n", termtext.Strip(pr.Tool), termtext.Reveal(describeAction(pr)))
	changetext.WriteForDecision(w, pr.Action, "  ")
	if pr.Reason != "" {
		fmt.Fprintf(w, "Reason: %s\n", termtext.Reveal(pr.Reason))
	}
	fmt.Fprintln(w, "Decide with: "+decideCommand(threadID, pr, p.agentFlag))
}

// decideCommand is the approve command for exactly the proposal shown: its thread,
// its id and the digest of its action, so that an action swapped behind the same id
// (a thread imported again with --replace) is refused rather than applied.
func decideCommand(threadID string, pr *convo.Proposal, agentFlag string) string {
	digest := pr.Digest
	if digest == "" {
		digest = convo.ActionDigest(pr.Action)
	}
	pin := "--proposal " + termtext.Strip(pr.ID)
	if digest != "" {
		pin += " --digest " + digest
	}
	pin += agentFlag
	return fmt.Sprintf("nodius-ai approve %s %s   or   nodius-ai reject %s %s [--feedback TEXT]", threadID, pin, threadID, pin)
}

// Deciding prints, before a decision is taken, the proposal it is taken on.
func (p *printer) Deciding(pr *convo.Proposal, verb string) {
	if p.enc != nil {
		return
	}
	fmt.Fprintf(p.ios.ErrOut, "nodius-ai: %s proposal %s:\n", verb, termtext.Strip(pr.ID))
	changetext.WriteForDecision(p.ios.ErrOut, pr.Action, "  ")
}

// Close ends the output.
func (p *printer) Close() { p.endAnswer() }

// oneLineArgs shows tool arguments as key=value pairs on one line.
func oneLineArgs(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return truncateRunes(args, 80)
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		v, _ := json.Marshal(m[k])
		s := string(v)
		if str, ok := m[k].(string); ok {
			s = str
		}
		parts = append(parts, k+"="+truncateRunes(s, 40))
	}
	return strings.Join(parts, " ")
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// describeAction is a one-line, human summary of a proposed action.
func describeAction(p *convo.Proposal) string {
	return summarizeAction(p.Action)
}

func summarizeAction(a datasource.Action) string { return datasource.Describe(a) }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
