package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
)

func TestInspectGraph(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "", nil, "inspect", "graph", "--graph", "demo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"sheet main (0)", "sheet data-processing (1)", "│ fetch-api ├", "─success─▶", "─error───▶", "│ sort-stats │"} {
		if !strings.Contains(out, want) {
			t.Errorf("drawing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("piped output has escape sequences:\n%q", out)
	}
}

// Piped, the drawing keeps its box-drawing characters and loses only colour; ASCII
// comes with --ascii, a locale that is not UTF-8, or TERM=dumb.
func TestInspectGraphCharactersWhenPiped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		ascii bool
	}{
		{"piped, no locale", nil, nil, false},
		{"piped, UTF-8 locale", map[string]string{"LANG": "en_US.UTF-8"}, nil, false},
		{"--ascii", map[string]string{"LANG": "en_US.UTF-8"}, []string{"--ascii"}, true},
		{"LANG=C", map[string]string{"LANG": "C"}, nil, true},
		{"LC_ALL wins over LANG", map[string]string{"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"}, nil, true},
		{"TERM=dumb", map[string]string{"TERM": "dumb", "LANG": "en_US.UTF-8"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runCLI(t, "", tt.env, append([]string{"inspect", "graph", "--graph", "demo", "--around", "fetch-api"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("colour when piped:\n%q", out)
			}
			nonASCII := strings.IndexFunc(out, func(r rune) bool { return r > 127 }) >= 0
			if nonASCII == tt.ascii {
				t.Errorf("ascii = %v, but the drawing is:\n%s", tt.ascii, out)
			}
			if !strings.Contains(out, "fetch-api") {
				t.Errorf("drawing lacks fetch-api:\n%s", out)
			}
		})
	}
}

func TestInspectGraphAroundFitsWidth(t *testing.T) {
	t.Parallel()
	for _, width := range []int{100, 60, 40, 20} {
		out, errOut, code := runCLI(t, "", nil, "inspect", "graph", "--around", "fetch-api", "--depth", "1", "--width", strconv.Itoa(width))
		if code != 0 {
			t.Fatalf("width %d: exit %d: %s", width, code, errOut)
		}
		w := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[2:] { // after the title
			w = max(w, len([]rune(line)))
		}
		if w > width {
			t.Errorf("width %d: a line is %d wide:\n%s", width, w, out)
		}
		for _, key := range []string{"root", "fetch", "filter", "error"} {
			if !strings.Contains(out, key) {
				t.Errorf("width %d: %q missing:\n%s", width, key, out)
			}
		}
	}
}

func TestInspectGraphColour(t *testing.T) {
	t.Parallel()
	run := func(env map[string]string, args ...string) string {
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, OutTTY: true,
			Getenv: func(k string) string { return env[k] }}
		if code := Execute(context.Background(), ios, args); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return out.String()
	}
	args := []string{"inspect", "graph", "--around", "root", "--depth", "1", "--width", "100"}
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home, "TERM": "xterm-256color", "LANG": "en_US.UTF-8"}
	if out := run(env, args...); !strings.Contains(out, "\x1b[") || !strings.Contains(out, "┏") {
		t.Errorf("a terminal gets no colour or no box drawing:\n%q", out)
	}
	env["NO_COLOR"] = "1"
	if out := run(env, args...); strings.Contains(out, "\x1b") || !strings.Contains(out, "┃ root") {
		t.Errorf("NO_COLOR still colours, or lost the drawing:\n%q", out)
	}
	env["LANG"] = "C"
	if out := run(env, args...); strings.ContainsAny(out, "┏┃─▶") || !strings.Contains(out, "# root") {
		t.Errorf("a non-UTF-8 locale gets box drawing:\n%s", out)
	}
}

func TestInspectGraphErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--around", "nope"}, `node "nope" not found in graph "demo"`},
		{[]string{"--around", "root", "--depth", "-1"}, "--depth must be between 0 and 6"},
		{[]string{"--around", "root", "--depth", "99"}, "--depth must be between 0 and 6"},
		{[]string{"--width", "5"}, "--width must be at least 20"},
		{[]string{"--width", "-3"}, "--width must be at least 20"},
		{[]string{"--graph", "nope"}, `graph "nope" not found`},
		{[]string{"extra"}, "takes no arguments"},
	}
	for _, tc := range cases {
		_, errOut, code := runCLI(t, "", nil, append([]string{"inspect", "graph"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestInspectGraphStripsControls draws a file graph whose keys and labels carry
// terminal escape sequences: none reaches the output.
func TestInspectGraphStripsControls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := map[string]any{
		"graph": map[string]any{"_key": "g", "name": "evil\x1b]0;title\x07", "workspace": "default", "sheets": map[string]string{"0": "main\x1b[2J"}},
		"nodes": []map[string]any{
			{"_key": "a\x1b[31m", "type": "starter", "sheet": "0", "data": map[string]any{"label": "x\x1b]52;c;AAAA\x07y"}},
			{"_key": "b", "type": "return", "sheet": "0"},
		},
		"edges":       []map[string]any{{"_key": "e1", "sheet": "0", "source": "a\x1b[31m", "target": "b", "label": "go\x1b[8m"}},
		"nodeConfigs": []any{},
	}
	data, _ := json.Marshal(doc)
	path := filepath.Join(dir, "g.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", nil, "--source", "file:"+path, "inspect", "graph", "--graph", "g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control sequences reached the output:\n%q", out)
	}
	if !strings.Contains(out, "starter · xy") || !strings.Contains(out, "go") {
		t.Errorf("text lost:\n%s", out)
	}
}

// TestThreadsShowPictures imports a thread with a pending batch proposal and
// expects the neighbourhood before and after it.
func TestThreadsShowPictures(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	action := `{"type":"batch","payload":{"actions":[
		{"type":"create_node","payload":{"nodeKey":"sort-players","typeKey":"transform","sheet":"0","posX":1000,"posY":0}},
		{"type":"delete_edge","payload":{"edgeKey":"e5"}},
		{"type":"create_edge","payload":{"sourceKey":"filter-active","sourceHandle":"0","targetKey":"sort-players","targetHandle":"0","sheet":"0"}},
		{"type":"create_edge","payload":{"sourceKey":"sort-players","sourceHandle":"0","targetKey":"display-html","targetHandle":"1","sheet":"0"}}]}}`
	now := time.Now().UnixMilli()
	var act any
	if err := json.Unmarshal([]byte(action), &act); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{
		"_key": "ai_1709000000009_1", "graphKey": "demo", "workspace": "default", "userId": "admin",
		"conversationHistory": []map[string]any{
			{"role": "user", "content": "sort the players before display"},
			{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "call1", "type": "function", "function": map[string]any{"name": "propose_batch", "arguments": "{}"}}}},
		},
		"pendingInterrupt": map[string]any{"toolCallId": "call1", "proposedAction": act, "reason": "insert a sort step", "remainingToolCalls": []any{}},
		"createdTime":      now, "lastUpdatedTime": now,
	})
	e.seed(string(doc))
	out, errOut, code := e.run("", "threads", "show", "ai_1709", "--pictures")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pics := out[strings.Index(out, "## Pictures"):]
	for _, want := range []string{"before:", "after:", "+ sort-players", "├╌−╌▶", "─+─▶", "+ created   − removed"} {
		if !strings.Contains(pics, want) {
			t.Errorf("pictures lack %q:\n%s", want, pics)
		}
	}
	if _, errOut, code := e.run("", "threads", "show", "ai_1709", "--pictures", "--format", "json"); code != 2 || !strings.Contains(errOut, "--pictures") {
		t.Errorf("--pictures with json: exit %d, %s", code, errOut)
	}
	// Without --pictures nothing is drawn.
	if out, _, _ := e.run("", "threads", "show", "ai_1709"); strings.Contains(out, "## Pictures") {
		t.Error("pictures drawn without --pictures")
	}
}

// TestInspectGraphTooBig refuses to draw a 200-node sheet whole and points to
// --around, which draws a part of it.
func TestInspectGraphTooBig(t *testing.T) {
	t.Parallel()
	snap := gen.Graph(5, 200, 300)
	data, err := json.Marshal(datasource.DocumentFromSnapshot(snap, nil))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "", nil, "--source", "file:"+path, "inspect", "graph")
	if code != 2 || !strings.Contains(errOut, "too many to draw") || !strings.Contains(errOut, "--around") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	out, errOut, code := runCLI(t, "", nil, "--source", "file:"+path, "inspect", "graph", "--around", snap.Nodes[0].Key, "--depth", "1", "--width", "120")
	if code != 0 || !strings.Contains(out, snap.Nodes[0].Key[:5]) {
		t.Errorf("--around: exit %d, %s\n%s", code, errOut, out)
	}
}
