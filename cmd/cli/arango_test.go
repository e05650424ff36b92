package cli

import (
	"bytes"
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// TestArangoSetup: `arango setup` creates the analyzers and the view once, says so,
// and finds them there the second time; then `inspect context` ranks in ArangoDB and
// never reads the whole graph.
func TestArangoSetup(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	nbaGraph().loadArango(fa)
	url := fa.URL(srcWS)

	// Before: the in-process ranking reads every node.
	before, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", url, "--graph", srcGraph, "--format", "json", srcQuery)
	if code != 0 {
		t.Fatalf("inspect before setup: exit %d, %s", code, errOut)
	}
	if !sent(fa, readsWholeGraph) || sent(fa, isTextSearch) {
		t.Fatal("before setup: want the whole graph read and no search query")
	}

	out, errOut, code := runCLI(t, "", nil, "arango", "setup", "--source", url)
	if code != 0 {
		t.Fatalf("setup: exit %d, %s", code, errOut)
	}
	for _, want := range []string{"analyzer nodius_text_en: created", "analyzer nodius_text_fr: created", "view nodius_nodes_search: created", "Text search now runs in ArangoDB"} {
		if !strings.Contains(out, want) {
			t.Errorf("setup output lacks %q:\n%s", want, out)
		}
	}
	out2, errOut, code := runCLI(t, "", nil, "arango", "setup", "--source", url)
	if code != 0 || strings.Contains(out2, "created") || !strings.Contains(out2, "view nodius_nodes_search: already there") || !strings.Contains(out2, "Nothing to do") {
		t.Errorf("second setup: exit %d, %q, %s", code, out2, errOut)
	}
	if strings.Contains(out+out2, arangotest.Password) {
		t.Errorf("setup printed the password:\n%s%s", out, out2)
	}
	if calls := fa.Calls(); !slices.Contains(calls, "POST /_api/view") || slices.Contains(calls, "PATCH /_api/view/nodius_nodes_search/properties") {
		t.Errorf("view requests = %q, want one creation and no update", calls)
	}

	// After: ArangoDB ranks, only the hits and their neighbours are read.
	n := len(fa.Queries())
	after, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", url, "--graph", srcGraph, "--format", "json", srcQuery)
	if code != 0 {
		t.Fatalf("inspect after setup: exit %d, %s", code, errOut)
	}
	var search int
	for _, q := range fa.Queries()[n:] {
		switch {
		case readsWholeGraph(q.Query):
			t.Errorf("the whole graph was read after setup: %.50s…", q.Query)
		case isTextSearch(q.Query):
			search++
			if q.BindVars["gk"] != srcGraph {
				t.Errorf("search bind variables = %v", q.BindVars)
			}
		}
	}
	if search != 1 {
		t.Errorf("%d search queries, want 1", search)
	}
	b, a := decodeContext(t, before), decodeContext(t, after)
	if len(a.Hits) == 0 || a.Hits[0].Key != "fetch-api" || a.Nodes[0].Key != "fetch-api" {
		t.Errorf("after setup: hits %+v nodes %+v", a.Hits, a.Nodes)
	}
	if len(a.Nodes) < 3 || len(a.Edges) < 2 || !slices.Contains(a.Configs, "api-call") {
		t.Errorf("after setup the context lost its neighbourhood: %d nodes, %d edges, configs %v (before: %d, %d)", len(a.Nodes), len(a.Edges), a.Configs, len(b.Nodes), len(b.Edges))
	}
	if strings.Contains(a.TOON, "rival") || strings.Contains(a.TOON, "secret") {
		t.Errorf("another workspace leaked into the context: %s", a.TOON)
	}
	if u := fa.Unknown(); len(u) > 0 {
		t.Errorf("queries outside arango.Queries(): %q", u)
	}
	checkBindOnly(t, fa, srcGraph, srcWS, "fetch")
}

func sent(fa *arangotest.Server, is func(string) bool) bool {
	for _, s := range fa.Queries() {
		if is(s.Query) {
			return true
		}
	}
	return false
}

// The query texts are package arango's own; these tell the ones that matter here.
// Reading the whole graph means sending its nodes or edges back (the scan for the
// graph's data fields sends only their names).
func readsWholeGraph(q string) bool {
	return strings.HasPrefix(q, "FOR n IN nodius_nodes FILTER n.graphKey == @gk") && strings.HasSuffix(q, "RETURN n") ||
		strings.HasPrefix(q, "FOR e IN nodius_edges FILTER e.graphKey == @gk") && strings.HasSuffix(q, "RETURN e")
}

func isTextSearch(q string) bool {
	return strings.Contains(q, "FOR n IN "+arango.SearchView+" SEARCH")
}

func TestArangoSetupErrors(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close()
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{"no source", nil, nil, 2, "needs an arango:// source"},
		{"file source", []string{"--source", "file:/tmp/g.json"}, nil, 2, "needs an arango:// source"},
		{"source from the environment", nil, map[string]string{"NODIUS_AI_SOURCE": "file:/x.json"}, 2, "the source file:/x.json"},
		{"malformed URL", []string{"--source", "arango://root:hunter2@[::1/x"}, nil, 2, "not a valid URL"},
		{"unknown database", []string{"--source", strings.Replace(fa.URL(srcWS), "/"+arangotest.DB+"?", "/nope?", 1)}, nil, 2, "does not exist"},
		{"wrong password", []string{"--source", strings.Replace(fa.URL(srcWS), ":"+arangotest.Password+"@", ":hunter2@", 1)}, nil, 1, "auth_error"},
		{"server down", []string{"--source", "arango://root:hunter2@" + closed + "/nodius"}, nil, 1, "connection refused"},
		{"arguments", []string{"now"}, nil, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runCLI(t, "", tc.env, append([]string{"arango", "setup"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.stderr)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("stderr is more than one sentence: %q", errOut)
			}
			if strings.Contains(out+errOut, "hunter2") || strings.Contains(out+errOut, arangotest.Password) {
				t.Errorf("a password was printed: %q %q", out, errOut)
			}
		})
	}
}

// runTTY runs a command line with stderr as a terminal (stdin and stdout piped).
func runTTY(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir, "XDG_STATE_HOME": dir}
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, ErrTTY: true, Getenv: func(k string) string { return env[k] }}
	code = Execute(context.Background(), ios, args)
	return errb.String(), code
}

// Without the view the question is still answered, in process, and a terminal is
// told once how to search in ArangoDB; a pipe is not, and nor is anyone after setup.
func TestArangoSearchHint(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	nbaGraph().loadArango(fa)
	url := fa.URL(srcWS)
	inspect := []string{"inspect", "context", "--source", url, "--graph", srcGraph, srcQuery}

	errOut, code := runTTY(t, inspect...)
	if code != 0 || strings.Count(errOut, "arango setup") != 1 || !strings.Contains(errOut, "reads the whole graph") {
		t.Errorf("terminal, no view: exit %d, stderr %q; want the hint once", code, errOut)
	}
	if strings.Contains(errOut, arangotest.Password) {
		t.Errorf("the hint shows the password: %q", errOut)
	}
	if _, errOut, code := runCLI(t, "", nil, inspect...); code != 0 || errOut != "" {
		t.Errorf("pipe, no view: exit %d, stderr %q; want nothing", code, errOut)
	}
	if errOut, code := runTTY(t, "arango", "setup", "--source", url); code != 0 || strings.Contains(errOut, "hint") {
		t.Errorf("setup: exit %d, stderr %q", code, errOut)
	}
	if errOut, code := runTTY(t, inspect...); code != 0 || errOut != "" {
		t.Errorf("terminal after setup: exit %d, stderr %q; want nothing", code, errOut)
	}
}
