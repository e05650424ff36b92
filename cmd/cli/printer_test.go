package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/termtext"
)

func TestStripStreamHoldsSplitSequences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"plain", []string{"hello ", "world"}, "hello world"},
		{"OSC title split", []string{"a\x1b]0;ti", "tle\x07b"}, "ab"},
		{"CSI clear split", []string{"x\x1b[", "2", "Jy"}, "xy"},
		{"OSC with ST split", []string{"1\x1b]52;c;aGk=\x1b", "\\2"}, "12"},
		{"C1 CSI", []string{"p\u009b2", "Jq"}, "pq"},
		{"lone ESC then text", []string{"m\x1b", "cn"}, "mn"},
		{"control chars", []string{"a\rb\x07c"}, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s stripStream
			var got strings.Builder
			for _, c := range tt.chunks {
				got.WriteString(s.Write(c))
			}
			got.WriteString(s.Write(""))
			if got.String() != tt.want {
				t.Fatalf("got %q, want %q", got.String(), tt.want)
			}
		})
	}
}

// printEvents runs events through a printer and returns stdout and stderr.
func printEvents(format string, outTTY, errTTY bool, evs ...convo.Event) (string, string) {
	var out, errb bytes.Buffer
	ios := &IOStreams{Out: &out, ErrOut: &errb, OutTTY: outTTY, ErrTTY: errTTY, Getenv: func(string) string { return "" }}
	p := newPrinter(ios, format)
	for _, e := range evs {
		p.Emit(e)
	}
	p.Close()
	return out.String(), errb.String()
}

func answerEvents(parts ...string) []convo.Event {
	evs := []convo.Event{{Type: convo.EventThread, ThreadID: "ai_1_1", Graph: "demo"}}
	for _, p := range parts {
		evs = append(evs, convo.Event{Type: convo.EventToken, Text: p})
	}
	return append(evs, convo.Event{Type: convo.EventComplete, ThreadID: "ai_1_1", Text: strings.Join(parts, "")})
}

func TestPrinterText(t *testing.T) {
	t.Parallel()
	hostile := answerEvents("it \x1b]0;pwned", "\x07works\x1b[2J")
	// Piped: the raw answer, byte for byte, and a final newline.
	if out, _ := printEvents("text", false, false, hostile...); out != "it \x1b]0;pwned\x07works\x1b[2J\n" {
		t.Fatalf("piped text = %q", out)
	}
	// On a terminal: no control sequence reaches it.
	if out, _ := printEvents("text", true, false, hostile...); out != "it works\n" {
		t.Fatalf("terminal text = %q", out)
	}
	// Tool activity goes to stderr only when stderr is a terminal.
	tool := []convo.Event{
		{Type: convo.EventToolStart, ToolCall: convo.ToolCall{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}},
		{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "c1", Name: "read_node_detail"}, Result: "x"},
	}
	out, errOut := printEvents("text", false, true, append(tool, answerEvents("done")...)...)
	if out != "done\n" || !strings.Contains(errOut, "● read_node_detail nodeKey=fetch-api") || !strings.Contains(errOut, "✓ read_node_detail") {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
	if _, errOut := printEvents("text", false, false, append(tool, answerEvents("done")...)...); errOut != "" {
		t.Fatalf("stderr not a terminal, got %q", errOut)
	}
}

// A failed tool call is one line on stderr, terminal or not, in text and markdown
// (json has its tool_result event); an empty final answer is said.
func TestPrinterSaysFailuresAndEmptyAnswers(t *testing.T) {
	t.Parallel()
	failed := []convo.Event{
		{Type: convo.EventToolStart, ToolCall: convo.ToolCall{ID: "c1", Name: "propose_create_graph", Arguments: `{}`}},
		{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "c1", Name: "propose_create_graph"}, Result: "{}",
			ToolErr: "propose_create_graph: this source cannot make graphs\nnothing was made"},
	}
	for _, format := range []string{"text", "markdown"} {
		for _, tty := range []bool{false, true} {
			out, errOut := printEvents(format, false, tty, append(failed, answerEvents("Created **Invoices 2026**.")...)...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			var got []string
			for _, l := range lines {
				if strings.Contains(l, "failed") {
					got = append(got, l)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], "propose_create_graph failed: propose_create_graph: this source cannot make graphs nothing was made") {
				t.Errorf("%s, stderr terminal %v: stderr %q, want one line on the failure", format, tty, errOut)
			}
			if strings.Contains(out, "failed") {
				t.Errorf("%s: the failure reached stdout: %q", format, out)
			}
		}
	}
	if out, errOut := printEvents("json", false, false, failed...); strings.Contains(errOut, "failed") || !strings.Contains(out, `"error":"propose_create_graph`) {
		t.Errorf("json: stdout %q stderr %q", out, errOut)
	}
	empty := []convo.Event{{Type: convo.EventThread, ThreadID: "ai_1_1"}, {Type: convo.EventComplete, ThreadID: "ai_1_1", Text: " \n"}}
	if _, errOut := printEvents("text", false, false, empty...); !strings.Contains(errOut, "ended without an answer") {
		t.Errorf("empty answer: stderr %q", errOut)
	}
	if _, errOut := printEvents("text", false, false, answerEvents("done")...); errOut != "" {
		t.Errorf("an answer: stderr %q", errOut)
	}
}

func TestPrinterJSONOnlyPublicEvents(t *testing.T) {
	t.Parallel()
	evs := append([]convo.Event{{Type: convo.EventStatus, State: convo.StateRetrieving}}, answerEvents("a", "b")...)
	out, _ := printEvents("json", false, false, evs...)
	want := `{"type":"thread","thread_id":"ai_1_1","graph":"demo"}
{"type":"token","text":"a"}
{"type":"token","text":"b"}
{"type":"complete","thread_id":"ai_1_1","text":"ab"}
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestPrinterMarkdown(t *testing.T) {
	t.Parallel()
	answer := []string{"# Title\n", "\n", "some **bold** \x1b[2Jtext\n", "\n", "```go\n", "x := 1\n", "\n", "y := 2\n", "```\n"}
	// Piped: markdown stays raw text.
	if out, _ := printEvents("markdown", false, false, answerEvents(answer...)...); out != strings.Join(answer, "")+"" {
		t.Fatalf("piped markdown = %q", out)
	}
	// On a terminal: rendered (no ** or # markers, no control sequence), code kept whole.
	out, _ := printEvents("markdown", true, false, answerEvents(answer...)...)
	if strings.Contains(out, "\x1b[2J") {
		t.Fatalf("a control sequence from the model reached the terminal: %q", out)
	}
	visible := termtext.Strip(out) // the renderer's own colours removed
	if strings.Contains(visible, "**") || strings.Contains(visible, "# Title") {
		t.Fatalf("terminal markdown not rendered: %q", visible)
	}
	for _, want := range []string{"Title", "some bold text", "x := 1", "y := 2"} {
		if !strings.Contains(visible, want) {
			t.Fatalf("rendered markdown lacks %q: %q", want, visible)
		}
	}
}

// TestPrinterRendersTags: the assistant's tags never reach stdout raw, piped or on a
// terminal, even split across tokens; the tagged key stays; json keeps them as written.
func TestPrinterRendersTags(t *testing.T) {
	t.Parallel()
	evs := answerEvents("see {{node:fet", "ch-api}} and {{highlight:a,b}} or {{link:https://x.io|docs}}")
	for _, tty := range []bool{false, true} {
		out, _ := printEvents("text", tty, false, evs...)
		if strings.Contains(out, "{{") || strings.Contains(out, "}}") || !strings.Contains(out, "fetch-api") || !strings.Contains(out, "a, b") {
			t.Errorf("tty=%v: text = %q", tty, out)
		}
	}
	if out, _ := printEvents("markdown", false, false, evs...); strings.Contains(out, "{{") {
		t.Errorf("markdown = %q", out)
	}
	out, _ := printEvents("json", false, false, evs...)
	if !strings.Contains(out, `{{node:fet`) || !strings.Contains(out, `{{highlight:a,b}}`) {
		t.Errorf("json lost the tags: %q", out)
	}
	_, errOut := printEvents("text", false, true, evs...)
	if !strings.Contains(errOut, "inspect graph") || !strings.Contains(errOut, "--around a") {
		t.Errorf("no note for the highlight: %q", errOut)
	}
}

// TestPrinterLeavesQuotedTags: a tag inside code the model quotes stays as written,
// as the web client leaves it, even when the backtick that opened the code came
// tokens earlier; a tag after the code is rendered.
func TestPrinterLeavesQuotedTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tokens []string
		quoted string
	}{
		{"inline span", []string{"write `", "{{no", "de:a}}", "` and {{node:b}}"}, "`{{node:a}}`"},
		{"fenced block", []string{"```js\n", "const s = '", "{{node:a}}", "';\n``", "`\nthen {{node:b}}"}, "'{{node:a}}'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := printEvents("text", false, false, answerEvents(tt.tokens...)...)
			if !strings.Contains(out, tt.quoted) || strings.Contains(out, "{{node:b}}") || !strings.Contains(out, "b") {
				t.Errorf("text = %q: want %s kept and {{node:b}} rendered", out, tt.quoted)
			}
		})
	}
}

// TestPrinterStripsToolName: a proposal's tool name is the server's when the
// server's assistant proposed it (--agent server:URL): untrusted, so no control
// sequence of it reaches the terminal, when waiting nor when decided.
func TestPrinterStripsToolName(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	ios := &IOStreams{Out: &errb, ErrOut: &errb, Getenv: func(string) string { return "" }}
	p := newPrinter(ios, "text")
	pr := &convo.Proposal{ID: "call_1", Tool: "create_graph\x1b]0;pwned\x07\x1b[2J",
		Action: datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}}
	p.Pending(pr, "ai_1_1")
	p.Decided(pr, convo.Decision{Approved: true})
	if got := errb.String(); strings.Contains(got, "\x1b") || strings.Contains(got, "\x07") || !strings.Contains(got, "create_graph") {
		t.Errorf("output = %q: want the tool named without its control sequences", got)
	}
}

// TestDecideCommandNamesTheServersAssistant: a proposal of the server's assistant
// is decided there, so the printed command carries --agent server:URL (never a
// password of the URL); the local agent's carries none.
func TestDecideCommandNamesTheServersAssistant(t *testing.T) {
	t.Parallel()
	pr := &convo.Proposal{ID: "call_1", Tool: "propose_create_graph",
		Action: datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}}
	for _, tc := range []struct {
		name string
		rt   *Runtime
		want string
		not  string
	}{
		{"server", &Runtime{Config: &config.Config{Agent: "server:https://nodius.example"}, Remote: &remote.Runner{}}, " --agent server:https://nodius.example ", "s3cret"},
		{"server with a password", &Runtime{Config: &config.Config{Agent: "server:https://me:s3cret@nodius.example"}, Remote: &remote.Runner{}}, " --agent 'server:https://me:", "s3cret"},
		{"local", &Runtime{Config: &config.Config{Agent: "local"}}, "", "--agent"},
	} {
		var errb bytes.Buffer
		p := newPrinter(&IOStreams{Out: &errb, ErrOut: &errb, Getenv: func(string) string { return "" }}, "text")
		p.agentFlag = agentFlag(tc.rt)
		p.Pending(pr, "ai_1_1")
		line := errb.String()[strings.Index(errb.String(), "Decide with:"):]
		if !strings.Contains(line, "nodius-ai approve ai_1_1 --proposal call_1 --digest ") || !strings.Contains(line, tc.want) || strings.Contains(line, tc.not) {
			t.Errorf("%s: %q", tc.name, line)
		}
	}
}
