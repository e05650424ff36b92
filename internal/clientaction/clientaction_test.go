package clientaction

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // segments as text|{kind:keys}
	}{
		{"plain", "plain"},
		{"{{node:fetch_api}} is connected to {{node:root}}", "{node:fetch_api}| is connected to |{node:root}"},
		{"in {{sheet:0}}", "in |{sheet:0}"},
		{"{{select: a , b,,c}}", "{select:a,b,c}"},
		{"{{highlight:a}}", "{highlight:a}"},
		{"{{fitArea:0,0,100.5,-3}}", "{fitArea:}"},
		{"{{fitArea:0,0,1}}", "0,0,1"},
		{"{{link:https://x.io|the docs}}", "{link:}"},
		{"{{unknown:thing}} here", "thing here"},
		{"{{node: }}", "node"},
		{"{{node:a} not a tag", "{{node:a} not a tag"},
		{"{ {node:a}}", "{ {node:a}}"},
		{"{{{node:a}}}", "{|{node:a}|}"},
		{"code {{ x }} braces", "code {{ x }} braces"},
		{"quoted `{{node:a}}` and {{node:b}}", "quoted `{{node:a}}` and |{node:b}"},
		{"```\n{{node:a}}\n```\n{{node:b}}", "```\n{{node:a}}\n```\n|{node:b}"},
		{"open fence ```\n{{node:a}}", "open fence ```\n{{node:a}}"},
		{"a lone ` then {{node:a}}", "a lone ` then |{node:a}"},
	}
	for _, tt := range tests {
		var parts []string
		for _, s := range Parse(tt.in) {
			if s.Action == nil {
				parts = append(parts, s.Text)
				continue
			}
			keys := strings.Join(s.Action.Keys, ",")
			parts = append(parts, "{"+string(s.Action.Kind)+":"+keys+"}")
		}
		if got := strings.Join(parts, "|"); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderNeverShowsBraces(t *testing.T) {
	t.Parallel()
	names := Names{
		NodeType: func(k string) string { return map[string]string{"fetch_api": "API Call"}[k] },
		Sheet:    func(k string) string { return map[string]string{"0": "main"}[k] },
	}
	tests := []struct {
		in, want string
	}{
		{"{{node:fetch_api}} calls {{node:root}}", "fetch_api (API Call) calls root"},
		{"see {{sheet:0}} and {{sheet:1}}", "see main (sheet 0) and sheet 1"},
		{"{{graph:g1}}", "g1"},
		{"{{select:a,b}}", "a, b"},
		{"{{fitArea:0,0,10,20}}", "the area (0, 0)–(10, 20)"},
		{"{{link:https://x.io|docs}}", "docs (https://x.io)"},
		{"{{link:https://x.io}}", "https://x.io"},
		{"{{node:\x1b]0;evil\x07k}}", "k"},
	}
	for _, tt := range tests {
		got := RenderString(tt.in, Options{Names: names})
		if got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, "{{") || strings.Contains(got, "}}") {
			t.Errorf("Render(%q) kept braces: %q", tt.in, got)
		}
	}
}

func TestRenderHyperlink(t *testing.T) {
	t.Parallel()
	got := RenderString("{{link:https://x.io/a|docs}}", Options{Hyperlinks: true})
	if want := "\x1b]8;;https://x.io/a\x1b\\docs\x1b]8;;\x1b\\"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A scheme a terminal could act on is not made a hyperlink.
	got = RenderString("{{link:file:///etc/passwd|x}}", Options{Hyperlinks: true})
	if strings.Contains(got, "\x1b") {
		t.Errorf("file: link became a hyperlink: %q", got)
	}
}

func TestActionsJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Actions("a {{highlight:x,y}} b {{fitArea:1,2,3,4}}"))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"kind":"highlight","keys":["x","y"],"raw":"{{highlight:x,y}}"},{"kind":"fitArea","area":{"minX":1,"minY":2,"maxX":3,"maxY":4},"raw":"{{fitArea:1,2,3,4}}"}]`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func TestNotes(t *testing.T) {
	t.Parallel()
	got := Notes(Actions("{{highlight:fetch_api,root}} {{node:x}} {{highlight:fetch_api,root}}"), "--graph demo")
	if len(got) != 1 || !strings.Contains(got[0], "nodius-ai inspect graph --graph demo --around fetch_api") {
		t.Errorf("Notes = %q", got)
	}
}

// TestSplitterKeepsTagsWhole feeds an answer cut at every byte and checks that the
// rendered stream equals the rendered whole, so a tag split across tokens is never
// printed raw.
func TestSplitterKeepsTagsWhole(t *testing.T) {
	t.Parallel()
	answers := []string{
		"{{node:fetch_api}} is connected to {{node:root}} in {{sheet:0}}.",
		"code { x } and {{ y }} and {{{node:a}}} end{",
		"{{link:https://x.io|docs}} {{fitArea:0,0,1,1}}",
		"{{node:unterminated",
		"see `{{node:a}}` and {{node:b}}",
		"a ``code with ` {{node:a}}`` then {{node:b}}",
		"text\n```js\nconst t = '{{node:a}}';\n```\nafter {{node:b}}",
		"open ```\n{{node:a}} never closed",
		"lone ` backtick then {{node:a}}",
		// Found by FuzzSplitter and in use (issue 31): a tag that opens inside an
		// inline code span and closes after it, a stray "{{".
		"To greet someone, write `{{user:` then the name and `}}`: {{node:a}}",
		"`{{0:`0`}}",
		"Templates use {{ and }}; write `x` then the name {{node:a}}",
		"{{0:{{0}}0",
		"a `b {{node:c}} d",
	}
	for _, ans := range answers {
		want := RenderString(ans, Options{})
		for step := 1; step <= 5; step++ {
			var sp Splitter
			var out strings.Builder
			for i := 0; i < len(ans); i += step {
				out.WriteString(Render(sp.Feed(ans[i:min(i+step, len(ans))]), Options{}))
			}
			out.WriteString(Render(sp.Flush(), Options{}))
			if out.String() != want {
				t.Errorf("step %d: streamed %q, whole %q", step, out.String(), want)
			}
		}
	}
}

func TestSplitterReleasesAStrayOpening(t *testing.T) {
	t.Parallel()
	var sp Splitter
	got := sp.Feed("{{node:" + strings.Repeat("x", maxHeld+10))
	if len(got) == 0 {
		t.Fatal("a stray {{ held the stream back past the bound")
	}
}

// FuzzSplitter checks that streaming equals the whole for any text and any cut:
// the text printed while an answer arrives is the text stored, read the same.
// step seeds the token sizes (1 to 2×step bytes, varying as a model's do).
func FuzzSplitter(f *testing.F) {
	f.Add("{{node:a}} b {{sel", 3)
	f.Add("x `{{node:a}}` ```\n{{node:b}}\n``` {{node:c}}", 2)
	f.Add("write `{{user:` then the name `}}` {{node:a}}", 1)
	f.Add("a ` b "+strings.Repeat("x", maxHeld)+" ` {{node:c}}", 7)
	f.Fuzz(func(t *testing.T, s string, step int) {
		if step <= 0 || step > 64 {
			step = 1
		}
		var sp Splitter
		var out strings.Builder
		var segs []Segment
		size := uint(step)
		for i := 0; i < len(s); {
			size = size*1103515245 + 12345
			n := 1 + int(size>>16)%(2*step)
			got := sp.Feed(s[i:min(i+n, len(s))])
			segs = append(segs, got...)
			out.WriteString(Render(got, Options{}))
			i += n
			// A stray "{{" or backtick holds at most maxHeld bytes back; only a
			// run of backticks still growing is held whole.
			if len(sp.held) > maxHeld+2 && strings.Trim(sp.held, "`") != "" {
				t.Fatalf("holds %d bytes back", len(sp.held))
			}
		}
		got := sp.Flush()
		segs = append(segs, got...)
		out.WriteString(Render(got, Options{}))
		if want := RenderString(s, Options{}); out.String() != want {
			t.Fatalf("streamed %q, whole %q", out.String(), want)
		}
		if a, b := Actions(s), actionsOf(segs); len(a) != len(b) {
			t.Fatalf("streamed %d tags, whole %d", len(b), len(a))
		}
	})
}

func actionsOf(segs []Segment) []Action {
	var out []Action
	for _, s := range segs {
		if s.Action != nil {
			out = append(out, *s.Action)
		}
	}
	return out
}

// Complete shows a streaming text without a tag still arriving, and does not wait
// for an inline code span to close (the screen redraws when it does).
func TestComplete(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"see {{node:fe", "see "},
		{"see {{node:a}} and {", "see {{node:a}} and "},
		{"a `lone backtick then text", "a `lone backtick then text"},
		{"a `b` {{no", "a `b` "},
		{"```\n{{node:a", "```\n{{node:a"},
		{"```\ncode``", "```\ncode"},
		{"plain", "plain"},
	}
	for _, tc := range tests {
		if got := Complete(tc.in); got != tc.want {
			t.Errorf("Complete(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
