package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/fault"
)

// embStore is an in-memory embedding.Source: a memgraph store that writes vectors and
// hashes into its nodes, as the file source writes them into the file.
type embStore struct {
	*memgraph.Store
	mu sync.Mutex
}

func (s *embStore) SetEmbeddings(ctx context.Context, graphKey string, updates map[string]embedding.Update) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, err := s.Store.Snapshot(ctx, graphKey)
	if err != nil {
		return err
	}
	nodes := make([]datasource.Node, len(snap.Nodes))
	for i, n := range snap.Nodes {
		if u, ok := updates[n.Key]; ok {
			n.Embedding = u.Vector
			h, _ := json.Marshal(u.Hash)
			n.Extra = map[string]json.RawMessage{embedding.HashField: h}
		}
		nodes[i] = n
	}
	snap.Nodes = nodes
	return s.Store.Replace(snap)
}

func newEmbStore(t *testing.T) *embStore {
	t.Helper()
	size := datasource.Size{Width: 200, Height: 100}
	st, err := memgraph.New([]datasource.Snapshot{{
		Graph: datasource.Graph{Key: "g"},
		Nodes: []datasource.Node{
			{Key: "fetch-scores", Type: "starter", Process: "download the basketball scores", Size: size},
			{Key: "render", Type: "html", Process: "<table>", Size: size},
			{Key: "done", Type: "return", Size: size},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &embStore{Store: st}
}

func TestEmbedGraph(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	emb := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "test", Model: "text-embedding-3-small"})
	tests := []struct {
		name    string
		tty     bool
		runs    int
		force   bool
		summary string
		bar     bool
	}{
		{"pipe: no progress bar", false, 1, false, "embedded 3, skipped 0, failed 0 of 3 nodes (graph g, model text-embedding-3-small)", false},
		{"terminal: progress bar", true, 1, false, "embedded 3, skipped 0, failed 0 of 3 nodes", true},
		{"second run skips unchanged", false, 2, false, "embedded 0, skipped 3, failed 0 of 3 nodes", false},
		{"--force embeds unchanged nodes again", false, 2, true, "embedded 3, skipped 0, failed 0 of 3 nodes", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := newEmbStore(t)
			var out, errOut bytes.Buffer
			ios := &IOStreams{Out: &out, ErrOut: &errOut, ErrTTY: tc.tty, Getenv: func(string) string { return "" }}
			for i := 0; i < tc.runs; i++ {
				out.Reset()
				if err := embedGraph(context.Background(), ios, st, emb, "g", embedOptions{Batch: 2, Force: tc.force}); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(out.String(), tc.summary) {
				t.Errorf("stdout = %q, want %q", out.String(), tc.summary)
			}
			if got := strings.Contains(errOut.String(), "3/3 nodes"); got != tc.bar {
				t.Errorf("progress bar shown = %v, want %v (stderr %q)", got, tc.bar, errOut.String())
			}
			n, err := st.Node(context.Background(), "g", "fetch-scores")
			if err != nil || len(n.Embedding) == 0 || embedding.StoredHash(n) == "" {
				t.Errorf("node not embedded: %+v, %v", n, err)
			}
		})
	}
}

type failingEmbedder struct{}

func (failingEmbedder) Model() string { return "m" }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, &fault.Error{Code: fault.RateLimit, Message: "slow down"}
}

func TestEmbedGraphFailuresExit1(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	ios := &IOStreams{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	err := embedGraph(context.Background(), ios, newEmbStore(t), failingEmbedder{}, "g", embedOptions{Batch: 10})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitRuntime || ee.Err != nil {
		t.Fatalf("err = %v, want a silent exit 1", err)
	}
	if !strings.Contains(out.String(), "failed 3 of 3") || !strings.Contains(errOut.String(), "slow down") {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
}

func TestEmbedNeedsModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir, "XDG_STATE_HOME": dir, "HOME": dir}
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	code := Execute(context.Background(), ios, []string{"embed", "--graph", "demo"})
	if code != ExitUsage || !strings.Contains(errOut.String(), "embedding model") {
		t.Errorf("exit %d, stderr %q; want 2 and a sentence about the embedding model", code, errOut.String())
	}
	errOut.Reset()
	code = Execute(context.Background(), ios, []string{"embed", "--graph", "demo", "--batch", "0"})
	if code != ExitUsage || !strings.Contains(errOut.String(), "--batch") {
		t.Errorf("--batch 0: exit %d, stderr %q", code, errOut.String())
	}
}
