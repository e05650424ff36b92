package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// remoteRanking is a source's own ranking of one question (datasource.TextSearcher,
// and VectorSearcher when embeddings are configured), mapped to the nodes of the
// state built around it.
type remoteRanking struct {
	text     []search.Hit
	vec      []rankedNode
	embedErr string
}

// retrieveRemote builds a question's context from the source's own ranking: only
// the best hits and their neighbourhoods are read, never the whole graph, so the
// cost of a question does not grow with the graph. The rest of the pipeline
// (graph-aware scoring, relational questions, fusion with vectors, expansion,
// assembly) runs as usual over that part of the graph.
//
// A nil Context means the caller ranks in process: the source cannot rank here
// (no text index), or it found nothing and nothing was mentioned (the in-process
// ranking also knows prefixes, and the graph's first nodes for questions that name
// nothing). The question's expansion, when one was asked, is returned for it.
func (r *Retriever) retrieveRemote(ctx context.Context, ts datasource.TextSearcher, graphKey, query string, mentions []string, noExpand bool) (*Context, *expanded, error) {
	depth := r.candidateDepth()
	hits, err := ts.TextSearch(ctx, graphKey, query, depth)
	if errors.Is(err, datasource.ErrNoTextIndex) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, graphErr(graphKey, err)
	}
	x, err := r.expandQuestion(ctx, query, noExpand)
	if err != nil {
		return nil, nil, err
	}
	var extra []datasource.ScoredNode
	if x.terms != "" {
		if extra, err = ts.TextSearch(ctx, graphKey, x.terms, depth); err != nil {
			return nil, nil, graphErr(graphKey, err)
		}
	}
	rr := &remoteRanking{}
	var vhits []datasource.ScoredNode
	if vs, ok := r.src.(datasource.VectorSearcher); ok && r.emb != nil && strings.TrimSpace(query) != "" {
		qv, err := r.embedQuery(ctx, query)
		if err == nil {
			// A failure here means "no vectors to use" (none stored, another
			// model): text ranking alone, as in process.
			vhits, _ = vs.VectorSearch(ctx, graphKey, qv, depth)
		} else {
			rr.embedErr = err.Error()
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
	if len(hits) == 0 && len(extra) == 0 && len(vhits) == 0 && len(mentions) == 0 {
		return nil, x, nil
	}

	snap, err := r.readAround(ctx, graphKey, mentions, hits, vhits, extra)
	if err != nil {
		return nil, nil, graphErr(graphKey, err)
	}
	st := &graphState{loaded: r.opts.Now()}
	st.fill(snap)
	rr.text = withExpansion(r.serverText(st, query, hits), r.serverText(st, "", extra), depth)
	for _, h := range vhits {
		if i, ok := st.byKey[h.Node.Key]; ok {
			rr.vec = append(rr.vec, rankedNode{idx: i, score: h.Score})
		}
	}
	st.remote = rr
	c, err := r.build(ctx, st, graphKey, query, mentions, x)
	if err != nil {
		return nil, nil, err
	}
	return c, nil, nil
}

// graphErr says a missing graph the one way callers expect, as a load does.
func graphErr(graphKey string, err error) error {
	if errors.Is(err, datasource.ErrNotFound) {
		return &datasource.NotFoundError{Kind: "graph", Key: graphKey}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("search graph %s: %w", graphKey, err)
}

// readAround reads the part of the graph a context can be built from: the graph's
// metadata and types, the hits, the mentioned nodes, and the neighbourhoods (the
// retriever's depth, any direction) of the nodes expansion starts from — the
// mentioned nodes and the best few of each ranking. Hits come first, in rank order.
func (r *Retriever) readAround(ctx context.Context, graphKey string, mentions []string, rankings ...[]datasource.ScoredNode) (datasource.Snapshot, error) {
	g, err := r.src.Graph(ctx, graphKey)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	configs, err := r.src.Configs(ctx, graphKey)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	snap := datasource.Snapshot{Graph: g, Configs: configs}
	nodes := map[string]bool{}
	edges := map[string]bool{}
	addNode := func(n datasource.Node) {
		if !nodes[n.Key] {
			nodes[n.Key] = true
			snap.Nodes = append(snap.Nodes, n)
		}
	}
	for _, ranked := range rankings {
		for _, h := range ranked {
			addNode(h.Node)
		}
	}
	var starts []string
	for _, m := range mentions {
		if !nodes[m] {
			n, err := r.src.Node(ctx, graphKey, m)
			if errors.Is(err, datasource.ErrNotFound) {
				continue // unknown mentions are ignored, as in process
			}
			if err != nil {
				return snap, err
			}
			addNode(n)
		}
		starts = append(starts, m)
	}
	for _, ranked := range rankings {
		for _, h := range ranked[:min(len(ranked), r.opts.Seeds)] {
			starts = append(starts, h.Node.Key)
		}
	}
	walked := map[string]bool{}
	for _, k := range starts {
		if walked[k] {
			continue
		}
		walked[k] = true
		nb, err := r.src.Neighborhood(ctx, graphKey, k, r.opts.MaxDepth, datasource.Any)
		if errors.Is(err, datasource.ErrNotFound) {
			continue // removed since it was ranked
		}
		if err != nil {
			return snap, err
		}
		for _, n := range nb.Nodes {
			addNode(n)
		}
		for _, e := range nb.Edges {
			if !edges[e.Key] {
				edges[e.Key] = true
				snap.Edges = append(snap.Edges, e)
			}
		}
	}
	// Nodes read one by one carry no code on Nodius's schema: it is their type's,
	// as a whole snapshot gives it.
	datasource.CodeFromTypes(snap.Nodes, snap.Configs)
	return snap, nil
}

// serverText is the source's ranking as search hits over st's nodes. The source
// does not know which nodes the question names by key; the in-process index of the
// part read does, and those nodes come first with a score above any other, as the
// in-process ranking puts them (an empty query names none: the expansion's terms
// never name a node outright).
func (r *Retriever) serverText(st *graphState, query string, hits []datasource.ScoredNode) []search.Hit {
	top := 0.0
	for _, h := range hits {
		top = max(top, h.Score)
	}
	out := make([]search.Hit, 0, len(hits))
	seen := map[int]bool{}
	for _, l := range st.index.Search(query, 0) {
		if l.KeyMatch && !seen[l.Index] {
			seen[l.Index] = true
			out = append(out, search.Hit{Index: l.Index, Score: 2*top + 1 + l.Score, KeyMatch: true})
		}
	}
	for _, h := range hits {
		if i, ok := st.byKey[h.Node.Key]; ok && !seen[i] {
			seen[i] = true
			out = append(out, search.Hit{Index: i, Score: h.Score})
		}
	}
	return out
}
