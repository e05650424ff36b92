package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// UnknownSetting is a key of the config file that nodius-ai does not know, with the
// known key it most likely meant ("" when none is close).
type UnknownSetting struct {
	Key        string
	Suggestion string
}

func (u UnknownSetting) String() string {
	if u.Suggestion == "" {
		return u.Key
	}
	return u.Key + " (did you mean " + u.Suggestion + "?)"
}

// UnknownText says which settings of the config file are not known, "" when all are.
func (c *Config) UnknownText() string {
	if c == nil || len(c.Unknown) == 0 {
		return ""
	}
	keys := make([]string, len(c.Unknown))
	for i, u := range c.Unknown {
		keys[i] = u.String()
	}
	what := "unknown setting "
	if len(keys) > 1 {
		what = "unknown settings "
	}
	return "config file " + c.File + ": " + what + strings.Join(keys, ", ")
}

// RequireKnown refuses, as a config_error, a config file with a setting nodius-ai
// does not know. The commands that run the assistant (ask, chat, approve, reject,
// undo, mcp) call it: a misspelt limit, policy or round count would silently not
// apply to what the assistant may do or spend. The other commands only warn.
func (c *Config) RequireKnown() error {
	if t := c.UnknownText(); t != "" {
		return configError(nil, "%s — the assistant does not run with a setting it does not know (a misspelt limit or policy would not apply): fix or remove it", t)
	}
	return nil
}

// suggestKey returns the known key closest to an unknown one, spelt as it would be
// written in the file ("max_tool_rounds", "limits.max_cost_usd"), or "".
func suggestKey(k toml.Key) string {
	t := reflect.TypeOf(fileConfig{})
	for i, part := range k {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			if t.Elem().Kind() != reflect.Struct {
				return "" // [policy]: its keys are checked on their own
			}
			t = t.Elem() // part is a name ([providers.NAME])
			continue
		case reflect.Struct:
		default:
			return ""
		}
		f, ok := fieldByTag(t, part)
		if ok {
			t = f.Type
			continue
		}
		prefix := strings.Join(k[:i], ".")
		if prefix != "" {
			prefix += "."
		}
		if best := closest(part, tags(t)); best != "" {
			return prefix + best
		}
		// A known key of a table, written outside it: "max_cost_usd" for limits.
		if i == 0 {
			for _, table := range []string{"limits", "retrieval"} {
				sub, _ := fieldByTag(t, table)
				if _, ok := fieldByTag(sub.Type, part); ok {
					return part + " under [" + table + "]"
				}
			}
		}
		return ""
	}
	return ""
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// closest is the candidate within a few edits of s (a third of its length, at
// least one), or one that begins with s ("max_cost" for max_cost_usd), or "".
func closest(s string, candidates []string) string {
	s = strings.ToLower(s)
	best, bestD := "", max(1, len(s)/3)+1
	for _, c := range candidates {
		d := EditDistance(s, c)
		if len(s) >= 4 && strings.HasPrefix(c, s) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in bytes: what the
// suggestions for a misspelt config key, and the command line's for a misspelt
// flag, are measured by (both ASCII).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
