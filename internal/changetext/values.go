package changetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// Unset stands for a value that is not there on one side of a change.
const Unset = "(unset)"

// ValueChange is one value a change sets, found by comparing a field before and
// after it: only what differs, so a person reading a data change sees the one key
// that changed instead of two whole objects.
type ValueChange struct {
	// Path names the value: the field, then object keys after dots and array
	// indexes in brackets (data.headers.Authorization, data.items[2]); a key that
	// is not a plain word is quoted (data["Content-Type"]).
	Path string
	// Old and New are the values as JSON ("x" quoted, 12, {"a":1}), or Unset.
	Old, New string
	// Code is set, and Old and New are not, when either side is text of several
	// lines: the line diff of the two texts.
	Code []DiffLine
}

// ValueChanges compares a field before (hadOld false when it was not there) and
// after a change, key by key down nested objects and element by element in arrays
// of the same length. Texts are not sanitised: callers reveal or strip them.
func ValueChanges(field string, old any, hadOld bool, new any) []ValueChange {
	var out []ValueChange
	diffValue(&out, field, plain(old), hadOld, plain(new), true)
	return out
}

// diffValue appends the changes from old to new at path.
func diffValue(out *[]ValueChange, path string, old any, hasOld bool, new any, hasNew bool) {
	if hasOld && hasNew && datasource.SameJSON(old, new) {
		return
	}
	om, oObj := old.(map[string]any)
	nm, nObj := new.(map[string]any)
	if hasOld && hasNew && oObj && nObj {
		keys := make([]string, 0, len(om)+len(nm))
		for k := range om {
			keys = append(keys, k)
		}
		for k := range nm {
			if _, ok := om[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			ov, inOld := om[k]
			nv, inNew := nm[k]
			diffValue(out, path+keyPath(k), ov, inOld, nv, inNew)
		}
		return
	}
	oa, oArr := old.([]any)
	na, nArr := new.([]any)
	if hasOld && hasNew && oArr && nArr && len(oa) == len(na) {
		for i := range oa {
			diffValue(out, fmt.Sprintf("%s[%d]", path, i), oa[i], true, na[i], true)
		}
		return
	}
	os, oStr := old.(string)
	ns, nStr := new.(string)
	if (oStr || !hasOld || old == nil) && (nStr || !hasNew || new == nil) && (strings.Contains(os, "\n") || strings.Contains(ns, "\n")) {
		*out = append(*out, ValueChange{Path: path, Code: LineDiff(os, ns)})
		return
	}
	c := ValueChange{Path: path, Old: Unset, New: Unset}
	if hasOld {
		c.Old = compactJSON(old)
	}
	if hasNew {
		c.New = compactJSON(new)
	}
	*out = append(*out, c)
}

// keyPath is how key k continues a path: ".k" for a plain word, else `["k"]`.
func keyPath(k string) string {
	plainWord := k != ""
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '$') {
			plainWord = false
			break
		}
	}
	if plainWord {
		return "." + k
	}
	return "[" + compactJSON(k) + "]"
}

// plain is v as JSON reads it back (maps, slices, float64 or json.Number,
// strings), so that a typed value compares and walks like a decoded one.
func plain(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, json.Number, map[string]any, []any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if d.Decode(&out) != nil {
		return v
	}
	return out
}

// FieldLines is ValueChanges as lines of text: `path: old → new`, or `path:` and
// the numbered line diff of a text of several lines. Not sanitised.
func FieldLines(field string, old any, hadOld bool, new any) []string {
	var out []string
	for _, c := range ValueChanges(field, old, hadOld, new) {
		if c.Code != nil {
			out = append(out, c.Path+":")
			out = append(out, NumberedLines(c.Code)...)
			continue
		}
		out = append(out, c.Path+": "+c.Old+" → "+c.New)
	}
	return out
}

// NumberedLines writes a line diff as text, each line with its number in the code
// and its sign ("  12 - old", "  12 + new", "  13   same"), "⋮" for lines left
// out, all indented by four spaces. Not sanitised.
func NumberedLines(diff []DiffLine) []string {
	wide := len(fmt.Sprint(lastNumber(diff)))
	out := make([]string, 0, len(diff))
	for _, d := range diff {
		if d.Op == Gap {
			out = append(out, "    "+strings.Repeat(" ", wide)+" ⋮")
			continue
		}
		out = append(out, fmt.Sprintf("    %*d %c %s", wide, d.Number(), d.Op, d.Text))
	}
	return out
}

// maxNamed bounds how many lines Difference names on each side.
const maxNamed = 5

// Difference says in one line how two versions of one change differ as a person
// reads them (shown: the version the person saw; now: the same call on the graph as
// it is now), naming the field or line that moved: `it showed data.timeout: 30 →
// 60, now it would be data.timeout: 45 → 60`. Texts are revealed (a hidden
// character is a marker). "" when the two are the same.
func Difference(shown, now datasource.Action) string {
	a, b := decisionLines(shown), decisionLines(now)
	var gone, came []string
	for _, d := range LineDiff(strings.Join(a, "\n"), strings.Join(b, "\n")) {
		switch d.Op {
		case '-':
			gone = append(gone, named(a, d.Old-1))
		case '+':
			came = append(came, named(b, d.New-1))
		}
	}
	switch {
	case len(gone) > 0 && len(came) > 0:
		return "it showed " + listed(gone) + ", now it would be " + listed(came)
	case len(gone) > 0:
		return "what it showed is no longer so: " + listed(gone)
	case len(came) > 0:
		return "now it would also: " + listed(came)
	}
	// The same text: name what differs in the recorded actions.
	var paths []string
	for _, c := range ValueChanges("", shown, true, now) {
		paths = append(paths, strings.TrimPrefix(c.Path, "."))
	}
	if len(paths) == 0 {
		return ""
	}
	return "the change differs in " + termtext.Reveal(listed(paths))
}

// decisionLines is the change text of a, revealed, as lines.
func decisionLines(a datasource.Action) []string {
	var b strings.Builder
	WriteForDecision(&b, a, "")
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

// named is lines[i] trimmed, after the heading it is under ("data.body:") when it
// is indented under one, so that a line of code says which field it is in.
func named(lines []string, i int) string {
	l := lines[i]
	ind := len(l) - len(strings.TrimLeft(l, " "))
	text := strings.TrimSpace(l)
	for j := i - 1; j >= 0; j-- {
		h := lines[j]
		if hi := len(h) - len(strings.TrimLeft(h, " ")); hi < ind {
			if h = strings.TrimSpace(h); strings.HasSuffix(h, ":") {
				return h + " " + text
			}
			break
		}
	}
	return text
}

func listed(items []string) string {
	if len(items) > maxNamed {
		return strings.Join(items[:maxNamed], "; ") + fmt.Sprintf("; and %d more", len(items)-maxNamed)
	}
	return strings.Join(items, "; ")
}
