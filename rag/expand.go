package rag

import (
	"context"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource/search"
)

// Expander rewrites a question into extra search terms (retrieval.expand = "llm":
// the chat model lists what the question means in English and in French, so that a
// paraphrase or a French question also finds nodes named in other words). An error
// only costs the expansion: the question is then searched as it was asked.
type Expander interface {
	Expand(ctx context.Context, question string) (Expansion, error)
}

// Expansion is what an Expander found for one question.
type Expansion struct {
	Terms []string
	// Usage is what the call to the model cost; zero when the terms came from a
	// cache (no call was made).
	Usage Usage
}

// Usage is the tokens (and price, when the caller knows it) of the model call a
// retrieval made. Retrieval sits below the agent and speaks none of its types: the
// agent turns this into its own usage, priced and counted against the thread.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	CostUSD          float64
}

// Total is the prompt and completion tokens together.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// expandWeight is how much an expansion term counts against a word of the question
// itself: the person's own words say best what they want, the model's rewording is
// a guess around them.
const expandWeight = 0.5

// expand asks the expander, when there is one, for the question's extra terms and
// records what happened in info. A failure leaves the question unexpanded.
func (r *Retriever) expand(ctx context.Context, query string, info *RetrievalInfo) (string, error) {
	if r.opts.Expander == nil || strings.TrimSpace(query) == "" {
		return "", nil
	}
	x, err := r.opts.Expander.Expand(ctx, query)
	info.ExpandUsage = x.Usage // tokens spent count even when the answer was unusable
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", ctxErr
		}
		info.ExpandError = err.Error()
		return "", nil
	}
	info.Expansion = x.Terms
	return strings.Join(x.Terms, " "), nil
}

// expanded is a question's expansion, asked once per question before it is ranked
// (in process or by the source), with what asking it cost in info.
type expanded struct {
	terms string
	info  RetrievalInfo
}

// expandQuestion asks for the question's expansion (see expand), unless the caller
// asked for none (Request.NoExpand).
func (r *Retriever) expandQuestion(ctx context.Context, query string, skip bool) (*expanded, error) {
	x := &expanded{}
	if skip {
		return x, nil
	}
	terms, err := r.expand(ctx, query, &x.info)
	x.terms = terms
	return x, err
}

// textSearch ranks nodes for the question's words, plus the expansion's terms.
// The expansion holds many more terms than the question has words, so its scores
// are scaled for its best node to score expandWeight of the question's best: it
// reorders and completes the question's ranking without drowning it. When the
// question's words match nothing, the expansion ranks alone. Only the question's
// own words can name a node outright (KeyMatch).
func textSearch(ix *search.Index, query, expansion string, limit int) []search.Hit {
	hits := ix.Search(query, limit)
	if expansion == "" {
		return hits
	}
	return withExpansion(hits, ix.Search(expansion, limit), limit)
}

// withExpansion adds the expansion's hits to the question's, scaled as textSearch
// says.
func withExpansion(hits, extra []search.Hit, limit int) []search.Hit {
	if len(extra) == 0 {
		return hits
	}
	w := 1.0
	if len(hits) > 0 && extra[0].Score > 0 {
		w = expandWeight * hits[0].Score / extra[0].Score
	}
	byIdx := make(map[int]int, len(hits)+len(extra))
	out := make([]search.Hit, 0, len(hits)+len(extra))
	for _, h := range hits {
		byIdx[h.Index] = len(out)
		out = append(out, h)
	}
	for _, h := range extra {
		if i, ok := byIdx[h.Index]; ok {
			out[i].Score += w * h.Score
			continue
		}
		byIdx[h.Index] = len(out)
		out = append(out, search.Hit{Index: h.Index, Score: w * h.Score})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Index < out[b].Index
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
