// Package embedding computes node embeddings for a graph source (the `embed` command,
// as the Nodius server's ai-embed-nodes script does, so either may embed a graph): it builds the text that stands for a node, keeps
// a hash of it so that nodes whose content did not change are skipped, and embeds the
// rest in batches, with a delay between batches and per-node isolation of failures.
//
// The hash lives on the node next to its vector, under the field "embeddingHash"
// (Node.Extra["embeddingHash"] once read): in ArangoDB it is a field of the node
// document, in a graph file a field of the node object, kept on write like any unknown
// field. Its value is "{model}@{sha256 of the content}", so a change of embedding model
// re-embeds every node too.
//
// The package depends only on the graph model: Embedder is the subset of
// agent/llm.Embedder it needs, so that data sources can implement Source without
// importing the LLM clients.
package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

// HashField is the node field holding the stamp of what was embedded.
const HashField = "embeddingHash"

// MaxTextLen bounds the text of one node (the Nodius server truncates at 8000 characters),
// which keeps every input well inside embedding models' token limits.
const MaxTextLen = 8000

// Embedder turns texts into vectors, one per text, in order. agent/llm.Embedder
// satisfies it.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Update is one node's new vector and the stamp of the content it came from.
type Update struct {
	Vector []float32
	Hash   string
}

// Source is a data source that can store embeddings on its nodes. SetEmbeddings
// writes Vector to the node's embedding and Hash to its HashField, for each local node
// key of the map, and leaves every other field alone. A source may fail the whole
// call; it should then write nothing.
type Source interface {
	datasource.Source
	SetEmbeddings(ctx context.Context, graphKey string, updates map[string]Update) error
}

// NodeText is the text that stands for a node in vector search: key, type and type
// name, process code, data and handles — what the node does, not where it sits (no
// position, no size). cfg may be nil (built-in or unknown type).
func NodeText(n datasource.Node, cfg *datasource.NodeConfig) string {
	var b strings.Builder
	b.WriteString("node: " + n.Key + "\n")
	switch {
	case cfg != nil && cfg.DisplayName != "" && generatedKey(n.Type):
		b.WriteString("type: " + cfg.DisplayName)
	case cfg != nil && cfg.DisplayName != "":
		b.WriteString("type: " + n.Type + " (" + cfg.DisplayName + ")")
	default:
		b.WriteString("type: " + n.Type)
	}
	b.WriteString("\n")
	if cfg != nil && cfg.Description != "" {
		b.WriteString("type description: " + cfg.Description + "\n")
	}
	if hs := handleSummary(n.Handles); hs != "" {
		b.WriteString("handles: " + hs + "\n")
	}
	if n.Data != nil {
		if d, err := json.Marshal(n.Data); err == nil && string(d) != "null" && string(d) != "{}" {
			b.WriteString("data: " + string(d) + "\n")
		}
	}
	if strings.TrimSpace(n.Process) != "" {
		b.WriteString("process:\n" + n.Process + "\n")
	}
	return truncate(b.String(), MaxTextLen)
}

// generatedKey reports whether a type key is one Nodius generated (a long run of
// hex digits, as its unique tokens are): it means nothing, and in the embedded text
// it would only dilute the words of the type's name.
func generatedKey(k string) bool {
	if len(k) < 16 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// handleSummary writes handles compactly and in a stable order: "L:in(any) R:out(any)".
func handleSummary(h map[string]datasource.HandleGroup) string {
	var parts []string
	for _, side := range sortedKeys(h) {
		for _, p := range h[side].Point {
			accept := p.Accept
			if accept == "" {
				accept = "any"
			}
			parts = append(parts, fmt.Sprintf("%s:%s(%s)", side, p.Type, accept))
		}
	}
	return strings.Join(parts, " ")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// ContentHash is the hex SHA-256 of what a node means: key, type, process, data and
// handles. Moving or resizing a node leaves it unchanged, as the Nodius server judges
// it (hasNodeContentChanged), so neither re-embeds what the other embedded.
func ContentHash(n datasource.Node) string {
	content := map[string]any{
		"key": n.Key, "type": n.Type, "process": n.Process,
		"data": canonical(n.Data), "handles": canonical(n.Handles),
	}
	b, _ := json.Marshal(content) // maps marshal with sorted keys: stable
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical round-trips v through JSON so that custom marshalers and map orders
// cannot change the hash of equal content.
func canonical(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return string(b)
	}
	return out
}

// Stamp is the value stored in HashField: the model and the content hash.
func Stamp(model string, n datasource.Node) string { return model + "@" + ContentHash(n) }

// StoredHash reads HashField from a node's unknown fields ("" when absent).
func StoredHash(n datasource.Node) string { return n.ExtraString(HashField) }

// NeedsEmbedding reports whether n must be (re)embedded with model: no vector yet, or
// a stamp of other content or another model.
func NeedsEmbedding(model string, n datasource.Node) bool {
	return len(n.Embedding) == 0 || StoredHash(n) != Stamp(model, n)
}

// Options tune Run. Zero values take the defaults of the Nodius server's script
// (batches of 100, no delay unless asked).
type Options struct {
	Force    bool          // embed every node, changed or not
	Batch    int           // nodes per embedding request (default 100)
	Delay    time.Duration // pause between batches, for rate limits
	Progress func(done, total int)
}

// Summary counts what Run did. Errors holds the first failures (at most 10), one per
// failed node or batch, for the user to read.
type Summary struct {
	Total    int // nodes in the graph
	Embedded int
	Skipped  int
	Failed   int
	Errors   []error
}

const maxErrors = 10

func (s *Summary) fail(n int, err error) {
	s.Failed += n
	if len(s.Errors) < maxErrors {
		s.Errors = append(s.Errors, err)
	}
}

// Run embeds the nodes of graphKey that need it and stores the vectors through src.
// A batch whose request fails is retried node by node, so that one bad node (a text
// the provider refuses) does not cost the others; nodes that still fail are counted
// and Run goes on. Run returns an error only when it cannot go on: the graph cannot be
// read, or ctx ends.
func Run(ctx context.Context, src Source, graphKey string, emb Embedder, opts Options) (Summary, error) {
	var sum Summary
	if emb == nil {
		return sum, errors.New("no embedding model configured")
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = 100
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return sum, err
	}
	configs := map[string]*datasource.NodeConfig{}
	for i := range snap.Configs {
		configs[snap.Configs[i].Key] = &snap.Configs[i]
	}
	model := emb.Model()
	sum.Total = len(snap.Nodes)
	var todo []datasource.Node
	for _, n := range snap.Nodes {
		if opts.Force || NeedsEmbedding(model, n) {
			todo = append(todo, n)
		} else {
			sum.Skipped++
		}
	}
	progress(0, len(todo))
	for start := 0; start < len(todo); start += batch {
		if start > 0 && opts.Delay > 0 {
			if err := sleep(ctx, opts.Delay); err != nil {
				return sum, err
			}
		}
		chunk := todo[start:min(start+batch, len(todo))]
		updates, err := embedChunk(ctx, emb, model, chunk, configs, &sum)
		if err != nil {
			return sum, err
		}
		if len(updates) > 0 {
			if err := src.SetEmbeddings(ctx, graphKey, updates); err != nil {
				if ctx.Err() != nil {
					return sum, ctx.Err()
				}
				sum.fail(len(updates), fmt.Errorf("store embeddings of %d node(s): %w", len(updates), err))
			} else {
				sum.Embedded += len(updates)
			}
		}
		progress(min(start+batch, len(todo)), len(todo))
	}
	return sum, nil
}

// embedChunk embeds one batch; on failure of the whole request it retries each node
// alone. It returns an error only when ctx has ended.
func embedChunk(ctx context.Context, emb Embedder, model string, chunk []datasource.Node, configs map[string]*datasource.NodeConfig, sum *Summary) (map[string]Update, error) {
	texts := make([]string, len(chunk))
	for i, n := range chunk {
		texts[i] = NodeText(n, configs[n.Type])
	}
	updates := map[string]Update{}
	vecs, err := emb.Embed(ctx, texts)
	if err == nil && len(vecs) == len(chunk) {
		for i, n := range chunk {
			if len(vecs[i]) == 0 {
				sum.fail(1, fmt.Errorf("node %s: the provider returned an empty vector", n.Key))
				continue
			}
			updates[n.Key] = Update{Vector: vecs[i], Hash: Stamp(model, n)}
		}
		return updates, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(chunk) == 1 {
		if err == nil {
			err = fmt.Errorf("the provider returned %d vectors for 1 text", len(vecs))
		}
		sum.fail(1, fmt.Errorf("node %s: %w", chunk[0].Key, err))
		return updates, nil
	}
	for i, n := range chunk {
		one, err := emb.Embed(ctx, texts[i:i+1])
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil && (len(one) != 1 || len(one[0]) == 0) {
			err = fmt.Errorf("the provider returned no vector")
		}
		if err != nil {
			sum.fail(1, fmt.Errorf("node %s: %w", n.Key, err))
			continue
		}
		updates[n.Key] = Update{Vector: one[0], Hash: Stamp(model, n)}
	}
	return updates, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
