package threads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/changetext"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// MarkdownOptions tune WriteMarkdown.
type MarkdownOptions struct {
	// Context also shows the system prompt and the retrieval context each question
	// carried (hidden otherwise: they are long and the same for every turn).
	Context bool
	// MaxResult cuts tool results longer than this many bytes (0: 2,000).
	MaxResult int
}

// WriteMarkdown writes a transcript as Markdown: header, then each turn with its tool
// calls and results, proposals and decisions, tokens and cost. Every stored text is
// stripped of terminal control sequences (termtext.Strip), since the output is meant
// to be read in a terminal.
func WriteMarkdown(w io.Writer, tr Transcript, o MarkdownOptions) error {
	if o.MaxResult <= 0 {
		o.MaxResult = 2000
	}
	bw := bufio.NewWriter(w)
	md := &mdWriter{w: bw, o: o}
	md.header(tr)
	results := map[string]convo.Message{}
	for _, m := range tr.Messages {
		if m.Role == convo.Tool {
			if _, dup := results[m.ToolCallID]; !dup {
				results[m.ToolCallID] = m
			}
		}
	}
	runs := map[string]convo.ToolRun{}
	for _, r := range tr.ToolRuns {
		runs[r.ToolCallID] = r
	}
	props := map[string]convo.Proposal{}
	for _, p := range tr.Proposals {
		props[p.ToolCallID] = p
	}
	for _, m := range tr.Messages {
		switch m.Role {
		case convo.System:
			if m.Kind == convo.KindUndo {
				md.undo(m)
			} else if o.Context {
				md.system(m)
			}
		case convo.User:
			md.turn("You", m)
			md.text(m.Content)
		case convo.Assistant:
			md.turn("Assistant", m)
			if m.Reasoning != "" {
				md.quote("Reasoning", m.Reasoning)
			}
			md.text(m.Content)
			for _, c := range m.ToolCalls {
				res, hasRes := results[c.ID]
				if p, ok := props[c.ID]; ok {
					md.proposal(c, p, res, hasRes)
				} else {
					md.call(c, runs[c.ID], res, hasRes)
				}
			}
		}
	}
	return bw.Flush()
}

type mdWriter struct {
	w *bufio.Writer
	o MarkdownOptions
}

func (md *mdWriter) printf(format string, args ...any) { fmt.Fprintf(md.w, format, args...) }

func (md *mdWriter) header(tr Transcript) {
	t := tr.Thread
	title := termtext.OneLine(t.Title)
	if title == "" {
		title = "(untitled)"
	}
	md.printf("# %s\n\n", title)
	md.printf("- Thread: `%s`\n", termtext.OneLine(t.ID))
	graph := termtext.OneLine(t.GraphKey)
	if t.Workspace != "" {
		graph += " (workspace " + termtext.OneLine(t.Workspace) + ")"
	}
	md.printf("- Graph: %s\n", graph)
	if t.Provider != "" || t.Model != "" {
		md.printf("- Model: %s\n", strings.Trim(termtext.OneLine(t.Provider)+" / "+termtext.OneLine(t.Model), " /"))
	}
	if t.UserID != "" {
		md.printf("- User: %s\n", termtext.OneLine(t.UserID))
	}
	md.printf("- Status: %s\n", t.Status)
	md.printf("- Created: %s · updated: %s\n", when(t.CreatedAt), when(t.UpdatedAt))
	md.printf("- Messages: %d · %s\n", t.MessageCount, usage(t.Usage))
	if len(tr.Created) > 0 {
		var nodes, edges []string
		for _, c := range tr.Created {
			if c.Kind == "edge" {
				edges = append(edges, "`"+termtext.OneLine(c.Key)+"`")
			} else {
				nodes = append(nodes, "`"+termtext.OneLine(c.Key)+"`")
			}
		}
		if len(nodes) > 0 {
			md.printf("- Nodes created: %s\n", strings.Join(nodes, ", "))
		}
		if len(edges) > 0 {
			md.printf("- Edges created: %s\n", strings.Join(edges, ", "))
		}
	}
}

func (md *mdWriter) turn(who string, m convo.Message) {
	md.printf("\n## %s · %s", who, when(m.CreatedAt))
	if m.Role == convo.Assistant {
		if m.Model != "" {
			md.printf(" · %s", termtext.OneLine(m.Model))
		}
		if m.Usage.Total() > 0 || m.Usage.CostUSD > 0 {
			md.printf(" · %s", usage(m.Usage))
		}
	}
	switch m.Status {
	case convo.Streaming:
		md.printf(" · *streaming*")
	case convo.Interrupted:
		md.printf(" · *interrupted*")
	}
	md.printf("\n\n")
}

func (md *mdWriter) text(s string) {
	s = strings.TrimSpace(termtext.Strip(s))
	if s == "" {
		return
	}
	md.printf("%s\n", s)
}

func (md *mdWriter) quote(label, s string) {
	s = strings.TrimSpace(termtext.Strip(s))
	md.printf("> *%s:*\n", label)
	for _, line := range strings.Split(s, "\n") {
		md.printf(">%s\n", strings.TrimRight(" "+line, " "))
	}
	md.printf("\n")
}

func (md *mdWriter) system(m convo.Message) {
	label := "System prompt"
	lang := ""
	if m.Kind == convo.KindContext {
		label, lang = "Retrieval context", "toon"
	}
	md.printf("\n## %s · %s\n\n", label, when(m.CreatedAt))
	md.fence(lang, m.Content, 0)
}

// fence writes s in a code block whose fence is longer than any backtick run in s,
// so stored text can never close it early. max > 0 cuts s.
func (md *mdWriter) fence(lang, s string, max int) {
	s = strings.TrimRight(termtext.Strip(s), "\n")
	cut := 0
	if max > 0 && len(s) > max {
		i := max
		for i > 0 && !isRuneStart(s[i]) {
			i--
		}
		cut = len(s) - i
		s = s[:i]
	}
	f := strings.Repeat("`", max3(longestRun(s, '`')+1))
	md.printf("%s%s\n%s\n%s\n", f, lang, s, f)
	if cut > 0 {
		md.printf("*(%d more bytes; `--format json` shows everything)*\n", cut)
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func max3(n int) int {
	if n < 3 {
		return 3
	}
	return n
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			if cur > best {
				best = cur
			}
		} else {
			cur = 0
		}
	}
	return best
}

func (md *mdWriter) call(c convo.ToolCall, run convo.ToolRun, res convo.Message, hasRes bool) {
	md.printf("\n**Tool** `%s`", termtext.OneLine(c.Name))
	status := string(run.Status)
	switch {
	case hasRes && run.Status == "":
		status = string(convo.RunCompleted)
	case !hasRes && (run.Status == "" || run.Status == convo.RunPending || run.Status == convo.RunRunning):
		status = "no result (interrupted)"
	}
	if status != "" {
		md.printf(" · %s", status)
	}
	if !run.StartedAt.IsZero() && !run.FinishedAt.IsZero() && !run.FinishedAt.Before(run.StartedAt) {
		md.printf(" · %s", run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond))
	}
	md.printf("\n\n")
	md.fence("json", prettyJSON(c.Arguments), 0)
	if run.Error != "" {
		md.printf("\nError: %s\n", termtext.OneLine(run.Error))
	}
	if hasRes {
		md.printf("\nResult:\n\n")
		md.fence("", res.Content, md.o.MaxResult)
	}
}

func (md *mdWriter) proposal(c convo.ToolCall, p convo.Proposal, res convo.Message, hasRes bool) {
	md.printf("\n**Proposal** `%s` `%s` · %s\n\n", termtext.OneLine(p.ID), termtext.OneLine(p.Tool), proposalState(p))
	if r := strings.TrimSpace(termtext.Strip(p.Reason)); r != "" {
		md.quote("Reason", r)
	}
	var change strings.Builder
	changetext.Write(&change, p.Action, "")
	md.fence("diff", change.String(), 0)
	if p.Decision == convo.Pending {
		digest := p.Digest
		if digest == "" {
			digest = convo.ActionDigest(p.Action)
		}
		md.printf("\nAwaiting a decision: `nodius-ai approve %s --proposal %s --digest %s` or `nodius-ai reject %s`.\n",
			termtext.OneLine(p.ThreadID), termtext.OneLine(p.ID), digest, termtext.OneLine(p.ThreadID))
		return
	}
	md.printf("\nDecision: **%s** · %s", proposalState(p), when(p.DecidedAt))
	if f := termtext.OneLine(p.Feedback); f != "" {
		md.printf(" · feedback: %q", f)
	}
	md.printf("\n")
	switch {
	case p.Outcome == convo.NotApplied || (p.Decision == convo.Approved && p.ApplyError != ""):
		md.printf("\nNot applied: %s\n", termtext.OneLine(p.ApplyError))
	case p.Outcome == convo.Claimed:
		md.printf("\nBeing applied (operation %s); if its process died, the next approve or ask on this thread settles it.\n", termtext.OneLine(p.OpID))
	}
	if p.Result != nil {
		if p.Result.Applied {
			md.printf("\nApplied")
			if n := p.Result.Created.Nodes; len(n) > 0 {
				md.printf(" · nodes created: %s", termtext.OneLine(strings.Join(n, ", ")))
			}
			if e := p.Result.Created.Edges; len(e) > 0 {
				md.printf(" · edges created: %s", termtext.OneLine(strings.Join(e, ", ")))
			}
			md.printf("\n")
		}
		if p.Result.Note != "" {
			md.printf("\nNote: %s\n", termtext.OneLine(p.Result.Note))
		}
	}
	if hasRes {
		md.printf("\nSent to the model:\n\n")
		md.fence("", res.Content, md.o.MaxResult)
	}
}

// proposalState is the state a transcript shows: pending, applying, approved and
// applied, approved but not applied, rejected.
func proposalState(p convo.Proposal) string {
	switch st := p.State(); st {
	case "pending":
		return "**pending**"
	case "applied":
		return "approved and applied"
	case "not applied":
		return "approved but not applied"
	case "applying":
		return "approved, being applied"
	default:
		return st
	}
}

// prettyJSON indents JSON arguments, keeping their key order; anything else is
// returned as is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func usage(u convo.Usage) string {
	s := fmt.Sprintf("%d prompt", u.PromptTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	s += fmt.Sprintf(" + %d completion tokens", u.CompletionTokens)
	if u.CostUSD > 0 {
		s += fmt.Sprintf(" · $%.4f", u.CostUSD)
	}
	return s
}
