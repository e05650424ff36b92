package rag

import (
	"sort"

	"github.com/nodius/nodius-ai/datasource/search"
)

// textWeight is the text ranking's share of a fused score; vector similarity has
// the rest.
const textWeight = 0.5

// fuse merges the text and vector rankings by a convex combination of normalised
// scores: score = textWeight·text/best text + (1−textWeight)·cos/best cos.
// Scores rather than ranks (reciprocal rank fusion): a rank throws away how sure a
// ranking is, so a node text search puts far ahead — because the question names its
// words — would lose to one both rankings only half like. Both are scaled by the
// question's best (BM25 has no fixed range, and a model's similarities sit in a band
// of their own). The best similarity gets the whole vector share even when it is
// weak or barely above the rest: with a flat similarity ranking, that share mostly
// reshuffles (seen on the dev set, where it chose wrong anchors for relational
// questions, which is why those are found by words). A node whose key the question
// names outright stays ahead of everything (+1), since no similarity beats being
// named. Without vectors, the text ranking is returned as it is.
func fuse(text []search.Hit, vec []rankedNode) []rankedNode {
	if len(vec) == 0 {
		out := make([]rankedNode, len(text))
		for i, h := range text {
			out[i] = rankedNode{idx: h.Index, score: h.Score, named: h.KeyMatch}
		}
		return out
	}
	best := 0.0
	for _, h := range text {
		if !h.KeyMatch {
			best = max(best, h.Score)
		}
	}
	score := make(map[int]float64, len(text)+len(vec))
	named := map[int]bool{}
	for _, h := range text {
		switch {
		case h.KeyMatch:
			named[h.Index] = true
			score[h.Index] += 1 + textWeight
		case best > 0:
			score[h.Index] += textWeight * h.Score / best
		}
	}
	bestSim := 0.0
	for _, v := range vec {
		bestSim = max(bestSim, v.score)
	}
	for _, v := range vec {
		if bestSim > 0 && v.score > 0 {
			score[v.idx] += (1 - textWeight) * v.score / bestSim
		}
	}
	out := make([]rankedNode, 0, len(score))
	for i, s := range score {
		out = append(out, rankedNode{idx: i, score: s, named: named[i]})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].idx < out[b].idx
	})
	return out
}
