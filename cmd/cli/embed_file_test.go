package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
)

// copyGraph copies a graph file into a temporary directory with the given mode and
// returns its path.
func copyGraph(t *testing.T, from string, mode os.FileMode) string {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// embedFile runs `nodius-ai embed` against a graph file through the real command, as a
// person would, and returns stdout.
func embedFile(t *testing.T, path, baseURL string) string {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "c"),
		"XDG_DATA_HOME": filepath.Join(home, "d"), "XDG_STATE_HOME": filepath.Join(home, "s")}
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	code := Execute(context.Background(), ios, []string{"embed", "--source", "file:" + path, "--graph", "g1",
		"--embedding-model", "fake-embed", "--base-url", baseURL, "--api-key", "test"})
	if code != 0 {
		t.Fatalf("embed: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	return out.String()
}

// TestEmbedFileThroughCommand: on a file: source (testdata/embed_graph.json has
// unknown fields at every level), the embed command writes vectors and hashes into the
// graph file, keeps every unknown field, skips unchanged nodes on the next run, does
// not re-embed a node that only moved, and re-embeds one whose process changed.
func TestEmbedFileThroughCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	path := copyGraph(t, "testdata/embed_graph.json", 0o640)

	steps := []struct {
		name   string
		change func(t *testing.T, src *file.Source)
		want   string
	}{
		{"first run embeds every node", nil, "embedded 2, skipped 0, failed 0 of 2 nodes"},
		{"second run skips everything", nil, "embedded 0, skipped 2, failed 0 of 2 nodes"},
		{"moving a node does not re-embed it", func(t *testing.T, src *file.Source) {
			if err := src.MoveNode(context.Background(), "g1", "b", 900, 40); err != nil {
				t.Fatal(err)
			}
		}, "embedded 0, skipped 2, failed 0 of 2 nodes"},
		{"changed process re-embeds that node", func(t *testing.T, src *file.Source) {
			if _, err := src.UpdateNode(context.Background(), "g1", "a", map[string]any{"process": "fetch('/scores')"}); err != nil {
				t.Fatal(err)
			}
		}, "embedded 1, skipped 1, failed 0 of 2 nodes"},
	}
	for _, st := range steps {
		if st.change != nil {
			src, err := file.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			st.change(t, src)
		}
		if got := embedFile(t, path, srv.OpenAIURL()); !strings.Contains(got, st.want) {
			t.Fatalf("%s: stdout %q, want %q", st.name, got, st.want)
		}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	if m["exportedBy"] != "nodius 2.3" || m["graph"].(map[string]any)["owner"] != "u-1" {
		t.Errorf("unknown top-level or graph fields lost: %s", data)
	}
	if e := m["edges"].([]any)[0].(map[string]any); e["animated"] != true {
		t.Errorf("unknown edge field lost: %v", e)
	}
	nodes := m["nodes"].([]any)
	for _, raw := range nodes {
		n := raw.(map[string]any)
		vec, _ := n["embedding"].([]any)
		hash, _ := n[embedding.HashField].(string)
		if len(vec) != 64 || !strings.HasPrefix(hash, "fake-embed@") {
			t.Errorf("node %v: embedding of %d values, hash %q", n["_key"], len(vec), hash)
		}
	}
	if a := nodes[0].(map[string]any); a["_rev"] != "_abc" {
		t.Errorf("unknown node field lost: %v", a)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after writes = %v, %v; want 0640 kept", st.Mode().Perm(), err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
