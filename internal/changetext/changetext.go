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
// stripped of terminal control sequences.
func Write(w io.Writer, a datasource.Action, indent string) {
	line := func(format string, args ...any) {
		fmt.Fprintln(w, indent+termtext.Strip(fmt.Sprintf(format, args...)))
	}
	code := func(sign, text string) {
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			fmt.Fprintln(w, indent+"    "+sign+" "+termtext.Strip(l))
		}
	}
	if writeServer(w, a, indent) {
		return
	}
	switch a.Type {
	case datasource.CreateNodeAction:
		c := a.CreateNode
		if c == nil {
			break
		}
		line("+ %s", datasource.Describe(a))
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
			newS, oldS := valueText(u.Changes[f]), valueText(old)
			if strings.Contains(newS, "\n") || strings.Contains(oldS, "\n") {
				line("  %s:", f)
				for _, d := range lineDiff(oldS, newS) {
					code(d.sign, d.text)
				}
				continue
			}
			if !hasOld {
				oldS = "(unset)"
			}
			line("  %s: %s → %s", f, oldS, newS)
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
			Write(w, sub, indent+"  ")
		}
		return
	}
	line("%s", datasource.Describe(a))
}

func valueText(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

type diffLine struct{ sign, text string }

// lineDiff is a line diff of old and new (longest common subsequence): "-" removed,
// "+" added, " " kept.
func lineDiff(old, new string) []diffLine {
	a, b := splitLines(old), splitLines(new)
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffLine{" ", a[i]})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{"-", a[i]})
			i++
		default:
			out = append(out, diffLine{"+", b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{"-", a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{"+", b[j]})
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}
