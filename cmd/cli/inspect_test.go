package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs one command line as a pipe (no terminal) with its own empty environment.
func runCLI(t *testing.T, stdin string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	base := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir, "XDG_STATE_HOME": dir}
	for k, v := range env {
		base[k] = v
	}
	ios := &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb, Getenv: func(k string) string { return base[k] }}
	code = Execute(context.Background(), ios, args)
	return out.String(), errb.String(), code
}

// TestInspectToonMatchesFixtures feeds every TOON conformance fixture's input to
// `inspect toon` and expects the reference encoder's output byte for byte (the
// fixtures rag/toon's own tests read).
func TestInspectToonMatchesFixtures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "rag", "toon", "testdata", "encode")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no TOON fixtures at %s", dir)
	}
	total := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				Name     string          `json:"name"`
				Input    json.RawMessage `json:"input"`
				Expected string          `json:"expected"`
				Options  struct {
					Delimiter  string `json:"delimiter"`
					IndentSize int    `json:"indentSize"`
				} `json:"options"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, tc := range doc.Tests {
			total++
			args := []string{"inspect", "toon"}
			switch tc.Options.Delimiter {
			case "\t":
				args = append(args, "--delimiter", "tab")
			case "|":
				args = append(args, "--delimiter", "pipe")
			}
			if tc.Options.IndentSize > 0 {
				args = append(args, "--indent", strings.TrimSpace(string(rune('0'+tc.Options.IndentSize))))
			}
			out, errOut, code := runCLI(t, string(tc.Input), nil, args...)
			want := tc.Expected
			if want != "" {
				want += "\n"
			}
			if code != 0 || out != want {
				t.Errorf("%s / %s: exit %d %s\n got: %q\nwant: %q", filepath.Base(file), tc.Name, code, errOut, out, want)
			}
		}
	}
	if total != 173 {
		t.Errorf("ran %d fixture cases, want 173", total)
	}
}

func TestInspectContextJSONShape(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "", nil, "inspect", "context", "--graph", "demo", "--format", "json", "Que fait le node fetch-api ?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Graph string `json:"graph"`
		Query string `json:"query"`
		Hits  []struct {
			Key   string  `json:"key"`
			Score float64 `json:"score"`
		} `json:"hits"`
		Nodes   []struct{ Key, Type, Sheet string }      `json:"nodes"`
		Edges   []struct{ Source, Target, Label string } `json:"edges"`
		Configs []string                                 `json:"configs"`
		TOON    string                                   `json:"toon"`
		Tokens  struct{ TOON, JSON int }                 `json:"tokens"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Graph != "demo" || got.Query != "Que fait le node fetch-api ?" || len(got.Hits) == 0 || got.Hits[0].Key != "fetch-api" {
		t.Fatalf("graph %q query %q hits %+v", got.Graph, got.Query, got.Hits)
	}
	keys := map[string]bool{}
	for _, n := range got.Nodes {
		keys[n.Key] = true
	}
	for _, k := range []string{"fetch-api", "root", "filter-active", "error-handler"} {
		if !keys[k] {
			t.Errorf("context lacks %s: %v", k, keys)
		}
	}
	if len(got.Edges) == 0 || len(got.Configs) == 0 || !strings.Contains(got.TOON, "fetch-api") {
		t.Fatalf("edges %d configs %v toon %q", len(got.Edges), got.Configs, got.TOON)
	}
	if got.Tokens.TOON <= 0 || got.Tokens.JSON <= got.Tokens.TOON {
		t.Fatalf("tokens %+v: TOON should be smaller than JSON", got.Tokens)
	}
}

func TestInspectOfflineErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"unknown graph", "", []string{"inspect", "context", "--graph", "nope", "x"}, 2, `no graph "nope" in the source demo (embedded; changes are kept in memory only); its graphs: demo`},
		{"bad format", "", []string{"inspect", "context", "--graph", "demo", "--format", "xml", "x"}, 2, "--format"},
		{"bad role", "", []string{"inspect", "tools", "--role", "root"}, 2, "--role"},
		{"bad json", "{", []string{"inspect", "toon"}, 2, "not valid JSON"},
		{"bad delimiter", "{}", []string{"inspect", "toon", "--delimiter", ";"}, 2, "--delimiter"},
		{"bad source", "", []string{"inspect", "context", "--source", "bogus", "--graph", "demo", "x"}, 2, "unknown data source"},
		{"malformed server url", "", []string{"inspect", "context", "--source", "server:http//u:PW@host", "--graph", "demo", "x"}, 2, "u:***@host"},
		{"malformed arango url", "", []string{"inspect", "context", "--source", "arango//root:PW@host", "--graph", "demo", "x"}, 2, "root:***@host"},
		{"arango url with a space", "", []string{"inspect", "context", "--source", "arango://root:PW@ho st:1/x", "--graph", "demo", "x"}, 2, "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := runCLI(t, tt.stdin, nil, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q", code, tt.code, errOut)
			}
			if strings.Contains(errOut, "PW") {
				t.Errorf("the password is printed: %q", errOut)
			}
		})
	}
}

func TestInspectToolsByRole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role  string
		write bool
	}{{"viewer", false}, {"editor", true}, {"admin", true}} {
		out, errOut, code := runCLI(t, "", nil, "inspect", "tools", "--role", tc.role)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tc.role, code, errOut)
		}
		var tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal([]byte(out), &tools); err != nil {
			t.Fatal(err)
		}
		write := 0
		for _, tl := range tools {
			if tl.Type != "function" {
				t.Fatalf("type %q", tl.Type)
			}
			if strings.HasPrefix(tl.Function.Name, "propose_") {
				write++
			}
		}
		if len(tools)-write != 8 || (write == 10) != tc.write {
			t.Fatalf("%s: %d read tools, %d write tools", tc.role, len(tools)-write, write)
		}
	}
}
