// Package evaluate measures retrieval on a set of questions whose answers are known:
// for each question, where the first gold node lands in the search ranking (Hit@1,
// Hit@5, reciprocal rank) and whether any gold node reaches the context at all
// (context recall). People tuning retrieval on their own graphs run it through
// `nodius-ai inspect eval`; the held-out tests of package rag run it too.
package evaluate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/rag"
)

// Question is one entry of a questions file: the question, the node keys that
// answer it (any of them counts) and an optional kind, used to group the figures.
type Question struct {
	Q    string   `json:"q"`
	Gold []string `json:"gold"`
	Cat  string   `json:"cat,omitempty"`
}

// Load reads a questions file: a JSON array of Question. Every entry needs a
// question and at least one gold key; the error says which entry is wrong.
func Load(r io.Reader) ([]Question, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var qs []Question
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("questions file is not a JSON array of {\"q\",\"gold\",\"cat\"}: %w", err)
	}
	if len(qs) == 0 {
		return nil, errors.New("questions file holds no question")
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Q) == "" {
			return nil, fmt.Errorf("question %d has no \"q\"", i+1)
		}
		if len(q.Gold) == 0 {
			return nil, fmt.Errorf("question %d (%q) has no \"gold\" key", i+1, q.Q)
		}
	}
	return qs, nil
}

// Metrics are the figures of a group of questions, each a share in [0, 1].
type Metrics struct {
	N             int     `json:"n"`
	Hit1          float64 `json:"hit1"`
	Hit5          float64 `json:"hit5"`
	MRR           float64 `json:"mrr"`
	ContextRecall float64 `json:"context_recall"`
}

// Outcome is what retrieval did with one question.
type Outcome struct {
	Question
	Rank      int      `json:"rank"`       // 1-based rank of the first gold key in the ranking, 0 when absent
	InContext bool     `json:"in_context"` // a gold key is among the context's nodes
	Top       []string `json:"top"`        // the first keys of the ranking
}

// Report holds the figures overall and per kind (sorted by kind; questions
// without a kind are grouped under "").
type Report struct {
	Graph    string             `json:"graph"`
	Overall  Metrics            `json:"overall"`
	ByCat    map[string]Metrics `json:"by_cat"`
	Outcomes []Outcome          `json:"questions"`
}

// Cats returns the kinds of the report in order.
func (r Report) Cats() []string {
	cats := make([]string, 0, len(r.ByCat))
	for c := range r.ByCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	return cats
}

// Retriever is what Run asks: rag.Retriever satisfies it.
type Retriever interface {
	Retrieve(ctx context.Context, graphKey, query string) (*rag.Context, error)
}

// Run asks every question of qs about graphKey and scores the answers.
func Run(ctx context.Context, r Retriever, graphKey string, qs []Question) (Report, error) {
	rep := Report{Graph: graphKey, ByCat: map[string]Metrics{}}
	for _, q := range qs {
		c, err := r.Retrieve(ctx, graphKey, q.Q)
		if err != nil {
			return Report{}, fmt.Errorf("question %q: %w", q.Q, err)
		}
		ranking := make([]string, len(c.Hits))
		for i, h := range c.Hits {
			ranking[i] = h.Key
		}
		nodes := make([]string, len(c.Nodes))
		for i, n := range c.Nodes {
			nodes[i] = n.Key
		}
		rep.Outcomes = append(rep.Outcomes, Score(q, ranking, nodes))
	}
	rep.Overall = Summarize(rep.Outcomes)
	groups := map[string][]Outcome{}
	for _, o := range rep.Outcomes {
		groups[o.Cat] = append(groups[o.Cat], o)
	}
	for cat, os := range groups {
		rep.ByCat[cat] = Summarize(os)
	}
	return rep, nil
}

// Score places one question's gold keys in a ranking and a context.
func Score(q Question, ranking, context []string) Outcome {
	gold := make(map[string]bool, len(q.Gold))
	for _, g := range q.Gold {
		gold[g] = true
	}
	o := Outcome{Question: q}
	for i, k := range ranking {
		if gold[k] {
			o.Rank = i + 1
			break
		}
	}
	for _, k := range context {
		if gold[k] {
			o.InContext = true
			break
		}
	}
	o.Top = append([]string{}, ranking[:min(3, len(ranking))]...)
	return o
}

// Summarize computes the metrics of a group of outcomes.
func Summarize(os []Outcome) Metrics {
	m := Metrics{N: len(os)}
	if m.N == 0 {
		return m
	}
	for _, o := range os {
		if o.Rank == 1 {
			m.Hit1++
		}
		if o.Rank >= 1 && o.Rank <= 5 {
			m.Hit5++
		}
		if o.Rank > 0 {
			m.MRR += 1 / float64(o.Rank)
		}
		if o.InContext {
			m.ContextRecall++
		}
	}
	n := float64(m.N)
	m.Hit1 /= n
	m.Hit5 /= n
	m.MRR /= n
	m.ContextRecall /= n
	return m
}
