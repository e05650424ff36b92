package rag

import (
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource/search"
)

// direction is which way along the edges a relational question looks.
type direction int

const (
	noRelation   direction = iota
	successors             // "what runs after X", "what does X feed", "qu'est-ce qui suit X"
	predecessors           // "what comes before X", "what feeds X", "quelle étape précède X"
)

// Words that make a question relational, folded (lowercase, no accents).
var (
	afterWords = wordSet("after afterwards next following follows follow then downstream subsequent " +
		"apres suivant suivante suivants suit suivre suivent ensuite puis aval")
	beforeWords = wordSet("before previous preceding precedes precede prior upstream " +
		"avant precede precedent precedente precedents amont")
	// Verbs whose direction depends on which side the asked-for node is: "what
	// feeds X" looks back, "what does X feed" looks forward.
	// ("calls" and "sends" are left out: "which node calls the API" asks for the
	// node that makes the call, not for its neighbour.)
	flowVerbs = wordSet("feed feeds feeding trigger triggers triggering alimente alimentent declenche declenchent")
	// Flow verbs that are nouns too ("the trigger", "a feed").
	flowNouns = wordSet("feed trigger")
	// "X passes/sends its data to what" looks forward.
	forwardVerbs = wordSet("pass passes passing hand hands transmet transmettent")
	// Question words that start a relational question. Without one, "wait before
	// retrying" is a plain description, not a question about neighbours.
	askWords = wordSet("what which who whose quel quelle quels quelles qu que qui quoi")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// relation reads a question's relational intent: the direction to look in, and the
// question without its relational words (what names the node to start from).
func relation(query string) (direction, string) {
	toks := search.Tokens(query)
	asks, dir := false, noRelation
	kept := make([]string, 0, len(toks))
	sawDo := false
	for i, t := range toks {
		switch {
		case flowNouns[t] && i > 0 && askWords[toks[i-1]]:
			// "which trigger listens on /hooks": a noun, right after the question
			// word; "which steps feed X" and "what feeds X" have the verb.
			kept = append(kept, t)
		case askWords[t]:
			asks = true
			kept = append(kept, t)
			if t == "que" || t == "qu" {
				sawDo = true // "qu'alimente X": what X feeds
			}
			if t == "qui" {
				sawDo = false // "qu'est-ce qui alimente X": what feeds X
			}
		case t == "does" || t == "do" || t == "did":
			sawDo = true
			kept = append(kept, t)
		case afterWords[t] && dir == noRelation:
			dir = successors
		case beforeWords[t] && dir == noRelation:
			dir = predecessors
		case flowVerbs[t] && dir == noRelation:
			if sawDo {
				dir = successors
			} else {
				dir = predecessors
			}
		case forwardVerbs[t] && dir == noRelation:
			dir = successors
		default:
			kept = append(kept, t)
		}
	}
	if !asks || dir == noRelation {
		return noRelation, query
	}
	return dir, strings.Join(kept, " ")
}

// Shares of a text score passed on by graph-aware ranking.
const (
	anchorShare    = 0.6 // a second anchor counts when it scores this share of the best
	maxAnchors     = 3
	propagateShare = 0.05 // one-hop spreading of a node's text score to its neighbours
)

// relationalRank answers a relational question: the nodes the question names (the
// anchors, from a search without the relational words) are looked through, and
// their neighbours in the asked direction come first, ordered by how strongly their
// anchor matched and then by their own score in ranked (an edge label, a word or
// the meaning of the question may tell two successors apart). The anchors follow,
// then the rest of ranked, in its order.
func (r *Retriever) relationalRank(st *graphState, dir direction, anchors, ranked []rankedNode) []rankedNode {
	if len(anchors) == 0 {
		return nil
	}
	own := make(map[int]float64, len(ranked))
	best := 0.0 // the best score of ranked, to scale the others by
	for _, t := range ranked {
		own[t.idx] = t.score
		best = max(best, t.score)
	}
	if best == 0 {
		best = 1
	}
	top := anchors[0].score
	rel := map[int]float64{}
	isAnchor := map[int]bool{}
	for i, a := range anchors {
		if i == maxAnchors || a.score < anchorShare*top || i > 0 && anchors[0].named {
			break
		}
		isAnchor[a.idx] = true
		for _, nb := range st.adj[a.idx] {
			out, ok := st.outgoing(a.idx, nb)
			if !ok {
				continue // a loop says nothing about direction
			}
			if out != (dir == successors) {
				continue
			}
			if w := a.score / top; w > rel[int(nb.node)] {
				rel[int(nb.node)] = w
			}
		}
	}
	if len(rel) == 0 {
		return nil
	}
	out := make([]rankedNode, 0, len(rel)+len(ranked))
	for n, w := range rel {
		out = append(out, rankedNode{idx: n, score: 2 + w + 0.5*own[n]/best})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].idx < out[b].idx
	})
	// Then the anchors (the context should show what the question started from),
	// then the plain text ranking.
	seen := map[int]bool{}
	for _, n := range out {
		seen[n.idx] = true
	}
	for _, a := range anchors {
		if isAnchor[a.idx] && !seen[a.idx] {
			seen[a.idx] = true
			out = append(out, rankedNode{idx: a.idx, score: 1 + a.score/top})
		}
	}
	for _, t := range ranked {
		if !seen[t.idx] {
			seen[t.idx] = true
			out = append(out, rankedNode{idx: t.idx, score: t.score / best})
		}
	}
	return out
}

// propagate spreads a share of each ranked node's score to its neighbours (one hop of
// a personalized PageRank): a node whose own words say little but whose neighbours
// match the question well rises, and among nodes that match equally, the one in the
// matching part of the graph wins.
func propagate(st *graphState, ranked []rankedNode) []rankedNode {
	if len(ranked) == 0 {
		return ranked
	}
	score := make(map[int]float64, len(ranked)*2)
	for _, h := range ranked {
		score[h.idx] += h.score
	}
	for _, h := range ranked {
		adj := st.adj[h.idx]
		if len(adj) == 0 {
			continue
		}
		share := propagateShare * h.score
		for _, nb := range adj {
			score[int(nb.node)] += share
		}
	}
	out := make([]rankedNode, 0, len(score))
	for i, s := range score {
		out = append(out, rankedNode{idx: i, score: s})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].idx < out[b].idx
	})
	return out
}
