// Package changetext writes the whole change a proposed action makes, for people:
// code as a line diff, fields as old → new, the edges a deleted node takes with it.
// The command line and the thread transcript print it the same way.
package changetext

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// Write prints the whole change an action makes, so a person decides on what
// will happen and not on a summary: code as a line diff, fields as old → new, the
// edges a deleted node takes with it. Every text from the model or the graph is
// stripped of terminal control sequences and direction controls.
func Write(w io.Writer, a datasource.Action, indent string) { write(w, a, indent, termtext.Strip) }

// WriteForDecision is Write for a change a person is about to decide on (approve,
// reject, undo): direction controls are shown as ⟨U+202E⟩, not removed, so code
// that would read differently from what is applied gives itself away.
func WriteForDecision(w io.Writer, a datasource.Action, indent string) {
	write(w, a, indent, termtext.Reveal)
}

// printer writes the lines of one change at indent, each text from the model or the
// graph cleaned by clean.
type printer struct {
	w      io.Writer
	indent string
	clean  func(string) string
}

// line prints one line of the change.
func (p printer) line(format string, args ...any) {
	fmt.Fprintln(p.w, p.indent+p.clean(fmt.Sprintf(format, args...)))
}

// code prints each line of text after sign, indented as code.
func (p printer) code(sign, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(p.w, p.indent+"    "+sign+" "+p.clean(l))
	}
}

// numbered prints a line diff with its line numbers.
func (p printer) numbered(diff []DiffLine) {
	for _, l := range NumberedLines(diff) {
		fmt.Fprintln(p.w, p.indent+p.clean(l))
	}
}

// write is Write with clean as the sanitiser of every text from the model or graph.
func write(w io.Writer, a datasource.Action, indent string, clean func(string) string) {
	p := printer{w: w, indent: indent, clean: clean}
	if writeServer(p, a) {
		return
	}
	line, code := p.line, p.code
	switch a.Type {
	case datasource.CreateNodeAction:
		c := a.CreateNode
		if c == nil {
			break
		}
		line("+ %s", datasource.Describe(a))
		if c.Size != nil {
			line("  size: %g×%g (its type's)", c.Size.Width, c.Size.Height)
		}
		if c.Process != "" {
			line("  process:")
			code("+", c.Process)
		}
		if c.Data != nil {
			line("  data: %s", compactJSON(c.Data))
		}
		return
	case datasource.UpdateNodeAction:
		u := a.UpdateNode
		if u == nil {
			break
		}
		line("~ update node %s", u.NodeKey)
		fields := make([]string, 0, len(u.Changes))
		for k := range u.Changes {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		for _, f := range fields {
			old, hasOld := u.Before[f]
			for _, l := range FieldLines(f, old, hasOld, u.Changes[f]) {
				line("  %s", l)
			}
		}
		return
	case datasource.DeleteNodeAction:
		d := a.DeleteNode
		if d == nil {
			break
		}
		line("- delete node %s", d.NodeKey)
		for _, e := range d.RemovedEdges {
			line("  - edge %s: %s:%s → %s:%s", e.Key, e.Source, e.SourceHandle, e.Target, e.TargetHandle)
		}
		if len(d.RemovedEdges) == 0 {
			line("  (no edges)")
		}
		return
	case datasource.DeleteEdgeAction:
		d := a.DeleteEdge
		if d == nil {
			break
		}
		if e := d.Edge; e != nil {
			line("- delete edge %s: %s:%s → %s:%s", d.EdgeKey, e.Source, e.SourceHandle, e.Target, e.TargetHandle)
			return
		}
	case datasource.BatchAction:
		if a.Batch == nil {
			break
		}
		line("%d changes, applied together:", len(a.Batch.Actions))
		for _, sub := range a.Batch.Actions {
			write(w, sub, indent+"  ", clean)
		}
		return
	}
	line("%s", datasource.Describe(a))
}

// compactJSON is v as one line of JSON, with <, > and & as they are (code reads
// as written, not as \u003c).
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
