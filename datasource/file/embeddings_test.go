package file_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/cmd/cli"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
)

// runEmbed runs `nodius-ai embed` against the file through the real command, as a
// person would, and returns stdout.
func runEmbed(t *testing.T, path, baseURL string) string {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "c"),
		"XDG_DATA_HOME": filepath.Join(home, "d"), "XDG_STATE_HOME": filepath.Join(home, "s")}
	var out, errOut bytes.Buffer
	ios := &cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	code := cli.Execute(context.Background(), ios, []string{"embed", "--source", "file:" + path, "--graph", "g1",
		"--embedding-model", "fake-embed", "--base-url", baseURL, "--api-key", "test"})
	if code != 0 {
		t.Fatalf("embed: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	return out.String()
}

// TestEmbedFileThroughCommand: the embed command writes vectors and hashes into the
// graph file, keeps every unknown field, skips unchanged nodes on the next run, does
// not re-embed a node that only moved, and re-embeds one whose process changed.
func TestEmbedFileThroughCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	path := writeFile(t, rich, 0o640)

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
		if got := runEmbed(t, path, srv.OpenAIURL()); !strings.Contains(got, st.want) {
			t.Fatalf("%s: stdout %q, want %q", st.name, got, st.want)
		}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeGeneric(t, data)
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

func TestSetEmbeddings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		graph    string
		updates  map[string]embedding.Update
		wantErr  bool
		wantB    []float32
		wantHash string
	}{
		{"sets vector and hash", "g1", map[string]embedding.Update{"b": {Vector: []float32{1, 0, 0}, Hash: "m@x"}}, false, []float32{1, 0, 0}, "m@x"},
		{"unknown node keys are ignored", "g1", map[string]embedding.Update{"gone": {Vector: []float32{1}, Hash: "m@y"}}, false, []float32{0.5, 0.25}, ""},
		{"nothing to do", "g1", nil, false, []float32{0.5, 0.25}, ""},
		{"unknown graph", "nope", map[string]embedding.Update{"b": {Vector: []float32{1}, Hash: "h"}}, true, []float32{0.5, 0.25}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := writeFile(t, rich, 0o644)
			src, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			err = src.SetEmbeddings(ctx, tc.graph, tc.updates)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			// What a fresh reader of the file sees, and what the open source serves.
			again, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*file.Source{src, again} {
				n, err := s.Node(ctx, "g1", "b")
				if err != nil {
					t.Fatal(err)
				}
				if !equalVec(n.Embedding, tc.wantB) || embedding.StoredHash(n) != tc.wantHash {
					t.Errorf("node b = %v %q, want %v %q", n.Embedding, embedding.StoredHash(n), tc.wantB, tc.wantHash)
				}
			}
			var m map[string]json.RawMessage
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &m); err != nil || m["schemaVersion"] == nil {
				t.Errorf("file after SetEmbeddings: %v, %s", err, data)
			}
		})
	}
}

func TestSetEmbeddingsCancelled(t *testing.T) {
	t.Parallel()
	path := writeFile(t, rich, 0o644)
	before, _ := os.ReadFile(path)
	src, err := file.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.SetEmbeddings(ctx, "g1", map[string]embedding.Update{"a": {Vector: []float32{1}, Hash: "h"}}); err == nil {
		t.Fatal("a cancelled context wrote embeddings")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the file changed although the call failed")
	}
}

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
