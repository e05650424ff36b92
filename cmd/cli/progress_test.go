package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/gen"
)

// The first `inspect context` over a file graph shows the stages of its load on a
// terminal (and erases them); a pipe gets nothing; the cached second run has no
// load to show.
func TestInspectShowsLoadProgressOnATerminal(t *testing.T) {
	t.Parallel()
	s := gen.Graph(4, 300, 600)
	data, err := file.Encode(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "g.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--source", "file:" + path, "inspect", "context", "--graph", "gen-4", "fetch orders"}
	for _, cache := range []string{filepath.Join(dir, "c1"), "off"} {
		_, errOut, code := runCLI(t, "", map[string]string{"NODIUS_AI_INDEX_CACHE": cache}, args...)
		// gen's graphs have code on each node: the earlier format, said once.
		if code != 0 || strings.Count(errOut, "\n") > 1 || (errOut != "" && !strings.Contains(errOut, "earlier format")) {
			t.Fatalf("pipe: exit %d, stderr %q; want nothing but the earlier format's notice", code, errOut)
		}
	}
	errOut, code := runTTYEnv(t, map[string]string{"NODIUS_AI_INDEX_CACHE": filepath.Join(dir, "c2")}, args...)
	for _, stage := range []string{"reading graph gen-4…", "indexing 300 nodes…", "saving the index for the next command…"} {
		if code != 0 || !strings.Contains(errOut, stage) {
			t.Fatalf("terminal: exit %d, stderr %q; want %q", code, errOut, stage)
		}
	}
	if !strings.HasSuffix(errOut, "\r\x1b[K") {
		t.Fatalf("the progress line is not erased at the end: %q", errOut)
	}
	if again, _ := runTTYEnv(t, map[string]string{"NODIUS_AI_INDEX_CACHE": filepath.Join(dir, "c2")}, args...); strings.Contains(again, "reading graph") {
		t.Fatalf("a cached graph showed a load: %q", again)
	}
}

// runTTYEnv runs a command line with stderr as a terminal, stdin and stdout piped.
func runTTYEnv(t *testing.T, env map[string]string, args ...string) (stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	base := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir, "XDG_STATE_HOME": dir}
	for k, v := range env {
		base[k] = v
	}
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, ErrTTY: true, Getenv: func(k string) string { return base[k] }}
	code = Execute(context.Background(), ios, args)
	return errb.String(), code
}
