package rag_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/rag"
)

// rosterGraph is built so that the two rankings disagree about one question, "where
// is each team roster merged with its players":
//
//   - roster-sync names the question's one rare word, "roster", in its key (the
//     field text ranking weighs most), and nothing else of it;
//   - combine never says "roster", but its code is about players merged into each
//     team. Every node mentions team and players, so text ranking gives those words
//     little weight (low IDF) — while the fake provider's bag-of-words vectors count
//     every shared word, and combine shares the most.
const rosterGraph = `{
  "graph": {"_key": "g", "name": "Teams", "workspace": "default", "sheets": {"0": "main"}},
  "nodes": [
    {"_key": "roster-sync", "type": "api-call", "sheet": "0", "process": "await fetch(url + team.id).then(r => r.json())",
     "posX": 0, "posY": 0, "size": {"width": 200, "height": 100}},
    {"_key": "combine", "type": "transform", "sheet": "0",
     "process": "const players = data.players; players are merged with the team list so each team knows its players",
     "posX": 300, "posY": 0, "size": {"width": 200, "height": 100}},
    {"_key": "render", "type": "html", "sheet": "0", "process": "<table>{team.players.map(row)}</table>",
     "posX": 600, "posY": 0, "size": {"width": 200, "height": 100}},
    {"_key": "filter-games", "type": "transform", "sheet": "0", "process": "games.filter(g => g.home === team.id && g.players)",
     "posX": 900, "posY": 0, "size": {"width": 200, "height": 100}},
    {"_key": "start", "type": "starter", "sheet": "0", "process": "",
     "posX": -300, "posY": 0, "size": {"width": 200, "height": 100}}
  ],
  "edges": [
    {"_key": "e1", "sheet": "0", "source": "start", "sourceHandle": "0", "target": "roster-sync", "targetHandle": "0", "label": ""},
    {"_key": "e2", "sheet": "0", "source": "roster-sync", "sourceHandle": "0", "target": "combine", "targetHandle": "0", "label": ""}
  ],
  "nodeConfigs": [
    {"_key": "api-call", "displayName": "API Call", "description": "calls an HTTP API", "category": "network", "icon": "globe", "handles": {}},
    {"_key": "transform", "displayName": "Transform", "description": "changes data", "category": "data", "icon": "shuffle", "handles": {}}
  ]
}`

// TestVectorRankingFindsMeaning: nodes embedded with embedding.Run through the real
// embeddings client (the fake provider's /v1/embeddings) into a graph file; the
// retriever with the same client puts first the node whose text shares the question's
// meaning, which text ranking alone puts second.
func TestVectorRankingFindsMeaning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.Start(t)
	path := filepath.Join(t.TempDir(), "teams.json")
	if err := os.WriteFile(path, []byte(rosterGraph), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	emb := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "test", Model: "fake-embed"})
	sum, err := embedding.Run(ctx, src, "g", emb, embedding.Options{})
	if err != nil || sum.Embedded != 5 || sum.Failed != 0 {
		t.Fatalf("embedding.Run = %+v, %v", sum, err)
	}

	const question = "where is each team roster merged with its players"
	tests := []struct {
		name    string
		emb     rag.Embedder
		first   string
		vector  bool
		ordered []string // these keys appear in this order among the hits
	}{
		{"text ranking alone: the key naming the rare word", nil, "roster-sync", false, []string{"roster-sync", "combine"}},
		{"fused with vector similarity: the node about the question", emb, "combine", true, []string{"combine", "roster-sync"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := rag.DefaultOptions()
			opts.CacheTTL = 0
			c, err := rag.New(src, opts, tc.emb).Retrieve(ctx, "g", question)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Hits) == 0 || c.Hits[0].Key != tc.first {
				t.Fatalf("hits = %+v, want %s first", c.Hits, tc.first)
			}
			if c.Retrieval.Vector != tc.vector || c.Retrieval.EmbedError != "" {
				t.Errorf("retrieval = %+v, want vector %v and no error", c.Retrieval, tc.vector)
			}
			var keys []string
			for _, h := range c.Hits {
				keys = append(keys, h.Key)
			}
			a, b := slices.Index(keys, tc.ordered[0]), slices.Index(keys, tc.ordered[1])
			if a < 0 || b < 0 || a > b {
				t.Errorf("hits %v: want %s before %s", keys, tc.ordered[0], tc.ordered[1])
			}
		})
	}
}
