package changetext

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// A data change reads field by field: only what changed, old → new, nested keys by
// path, and a hidden character in a value or a key is a marker where a person
// decides (issue 31: two whole JSON objects of 8 fields each, and "safe\u202e
// txt.exe" shown as "safe txt.exe").
func TestWriteDataChangeFieldByField(t *testing.T) {
	t.Parallel()
	before := map[string]any{
		"url": "https://api.example/v1", "method": "GET", "timeout": 30, "retries": 2, "cache": false,
		"headers": map[string]any{"Authorization": "x", "Accept": "application/json"},
		"tags":    []any{"a", "b"},
		"body":    "{\n  \"q\": 1\n}\n",
	}
	after := map[string]any{
		"url": "https://api.example/v1", "method": "GET", "retries": 3, "cache": false,
		"headers":      map[string]any{"Authorization": "y", "Accept": "application/json", "X-Tok\u200ben": "t"},
		"tags":         []any{"a", "c"},
		"body":         "{\n  \"q\": 2\n}\n",
		"Content-Type": "safe\u202e txt.exe",
	}
	a := datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
		NodeKey: "fetch-api", Before: map[string]any{"data": before}, Changes: map[string]any{"data": after}}}
	var shown strings.Builder
	WriteForDecision(&shown, a, "")
	want := `~ update node fetch-api
  data["Content-Type"]: (unset) → "safe⟨U+202E⟩ txt.exe"
  data.body:
      1   {
      2 -   "q": 1
      2 +   "q": 2
      3   }
  data.headers.Authorization: "x" → "y"
  data.headers["X-Tok⟨U+200B⟩en"]: (unset) → "t"
  data.retries: 2 → 3
  data.tags[1]: "b" → "c"
  data.timeout: 30 → (unset)
`
	if shown.String() != want {
		t.Errorf("WriteForDecision:\n%s\nwant:\n%s", shown.String(), want)
	}
	var stored strings.Builder
	Write(&stored, a, "")
	if !strings.Contains(stored.String(), `data.headers.Authorization: "x" → "y"`) || strings.Contains(stored.String(), "\u202e") {
		t.Errorf("Write:\n%s", stored.String())
	}
}

func TestValueChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		old      any
		hadOld   bool
		new      any
		want     []string
		wantCode bool
	}{
		{"unset before", nil, false, "x", []string{`f: (unset) → "x"`}, false},
		{"same", map[string]any{"a": 1.0}, true, map[string]any{"a": 1}, nil, false},
		{"a whole object for a value", "x", true, map[string]any{"a": 1}, []string{`f: "x" → {"a":1}`}, false},
		{"arrays of other lengths whole", []any{1}, true, []any{1, 2}, []string{`f: [1] → [1,2]`}, false},
		{"code as written", "a<b", true, "a<b && c", []string{`f: "a<b" → "a<b && c"`}, false},
		{"a control in a value is escaped", "a", true, "a\x1b[2J", []string{`f: "a" → "a\u001b[2J"`}, false},
		{"typed values", struct{ N int }{1}, true, map[string]any{"N": 2}, []string{`f.N: 1 → 2`}, false},
		{"text of several lines", "a\nb", true, "a\nc", nil, true},
	}
	for _, tc := range tests {
		got := ValueChanges("f", tc.old, tc.hadOld, tc.new)
		var lines []string
		code := false
		for _, c := range got {
			if c.Code != nil {
				code = true
				continue
			}
			lines = append(lines, c.Path+": "+c.Old+" → "+c.New)
		}
		if !reflect.DeepEqual(lines, tc.want) || code != tc.wantCode {
			t.Errorf("%s: %q (code %v), want %q (code %v)", tc.name, lines, code, tc.want, tc.wantCode)
		}
	}
}

// A change refused as stale names what differs between what was shown and what it
// would do now (issue 31: `it showed "update node fetch-api: data", now it would
// "update node fetch-api: data"`, two identical texts).
func TestDifference(t *testing.T) {
	t.Parallel()
	update := func(before map[string]any, process string) datasource.Action {
		return datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: "fetch-api",
			Before:  map[string]any{"data": before, "process": process},
			Changes: map[string]any{"data": map[string]any{"url": "u", "timeout": 60}, "process": "a\nb\nc\n"}}}
	}
	code := "a\nB\nc\n"
	shown := update(map[string]any{"url": "u", "timeout": 30}, code)
	tests := []struct {
		name string
		now  datasource.Action
		want string
	}{
		{"a value edited since", update(map[string]any{"url": "u", "timeout": 45}, code),
			`it showed data.timeout: 30 → 60, now it would be data.timeout: 45 → 60`},
		{"a key added since", update(map[string]any{"url": "u", "timeout": 30, "x\u202e": 1}, code),
			`now it would also: data["x⟨U+202E⟩"]: 1 → (unset)`},
		{"a line of code edited since", update(map[string]any{"url": "u", "timeout": 30}, "a\nQ\nc\n"),
			`it showed process: 2 - B, now it would be process: 2 - Q`},
		{"the same", shown, ""},
	}
	for _, tc := range tests {
		if got := Difference(shown, tc.now); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Two actions that read the same but differ: the path of what differs.
	edge := func(label string) datasource.Action {
		return datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e",
			Edge: &datasource.Edge{Key: "e", Source: "a", Target: "b", Label: label}}}
	}
	if got, want := Difference(edge("x"), edge("y")), "the change differs in payload.edge.label"; !strings.Contains(got, want) {
		t.Errorf("a difference the text does not show: %q, want %q", got, want)
	}
}
