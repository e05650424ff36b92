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

func FuzzSplitter(f *testing.F) {
	f.Add("{{node:a}} b {{sel", 3)
	f.Add("x `{{node:a}}` ```\n{{node:b}}\n``` {{node:c}}", 2)
	f.Fuzz(func(t *testing.T, s string, step int) {
		if step <= 0 || step > 64 {
			step = 1
		}
		var sp Splitter
		var out strings.Builder
		for i := 0; i < len(s); i += step {
			out.WriteString(Render(sp.Feed(s[i:min(i+step, len(s))]), Options{}))
		}
		out.WriteString(Render(sp.Flush(), Options{}))
		// Within the bound on what is held, streaming reads the tags as the whole
		// text does; past it, it must still lose nothing and never panic.
		if want := RenderString(s, Options{}); len(s) <= maxHeld && out.String() != want {
			t.Fatalf("streamed %q, whole %q", out.String(), want)
		}
	})
}
