package rag

import (
	"math"
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
	// Question words that take a noun: "which step", "quelle étape".
	determiners = wordSet("which whose quel quelle quels quelles")
	// Words that may stand between the question word and "after" or "before" in a
	// question about neighbours: auxiliaries, verbs that say only that something
	// takes place, and adverbs of nearness ("what can happen right after X",
	// "qu'est-ce qui se passe juste après X", "que se passe-t-il après X"). Any
	// other word there makes "after" part of a description: "what blocks the
	// keypad after too many wrong tries" asks for a node, not for a neighbour.
	lightWords = wordSet("is are was were be been being do does did can could may might will would should must has have had " +
		"come comes coming came run runs running ran happen happens happening happened go goes going went " +
		"occur occurs occurring occurred execute executes executed fire fires fired start starts started take takes took place " +
		"get gets got kick kicks kicked off then right just directly immediately straight exactly " +
		"est sont etait ce c se s il t passe passent passera vient viennent arrive arrivent a lieu " +
		"execute executent lance peut peuvent doit doivent va vont juste directement immediatement tout de suite")
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
	lastAsk := -1 // where the last question word is
	for i, t := range toks {
		switch {
		case flowNouns[t] && i > 0 && askWords[toks[i-1]]:
			// "which trigger listens on /hooks": a noun, right after the question
			// word; "which steps feed X" and "what feeds X" have the verb.
			kept = append(kept, t)
		case askWords[t]:
			asks, lastAsk = true, i
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
		case (afterWords[t] || t == "once") && dir == noRelation && asksAbout(toks, lastAsk, i):
			dir = successors
		case t == "fois" && i > 0 && toks[i-1] == "une" && dir == noRelation && asksAbout(toks, lastAsk, i-1):
			dir = successors // "que se passe-t-il une fois X fait"
		case beforeWords[t] && dir == noRelation && asksAbout(toks, lastAsk, i):
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

// asksAbout tells whether "after" or "before" at toks[at] asks about neighbours:
// the question word before it (at toks[ask]) is followed only by light words
// ("what runs after", "que se passe-t-il après"), or, after "which" or "quelle",
// by the noun it takes ("which step comes before", "quelle étape précède"), or,
// after "what", by a noun and at least one light word ("what step comes after").
func asksAbout(toks []string, ask, at int) bool {
	if ask < 0 {
		return false
	}
	gap := toks[ask+1 : at]
	if len(gap) > 0 && !lightWords[gap[0]] {
		if !determiners[toks[ask]] && len(gap) == 1 {
			return false // "what waits before retrying": a verb, not a noun
		}
		gap = gap[1:] // the noun
	}
	for _, w := range gap {
		if !lightWords[w] {
			return false
		}
	}
	return true
}

// Shares of a text score passed on by graph-aware ranking.
const (
	anchorShare    = 0.6 // an anchor is shown after the answers when it scores this share of the best
	maxAnchors     = 3
	propagateShare = 0.05 // one-hop spreading of a node's text score to its neighbours
	// How many of the nodes the question may start from have their neighbours
	// ranked first, and how steeply a neighbour's weight falls with its anchor's
	// score.
	maxCandidateAnchors = 10
	anchorSharpness     = 4
)

// relationalRank answers a relational question: the nodes the question may name
// (the anchors, from a search without the relational words) are looked through,
// and their neighbours in the asked direction come first. A neighbour counts by
// how likely its anchor is the node the question starts from — the anchor's score
// as a share of the best one's, to the power anchorSharpness — and then by its own
// score in own (an edge label or a word of the question may tell two successors
// apart). The anchors that score near the best follow, so the context shows what
// the question started from, then the rest of the nodes in the order of rest, the
// question's ranking as for any question.
//
// Why every candidate anchor and not only the best: the question names its anchor
// in words that often fit two or three nodes about as well ("the search for
// available vans" fits the van lookup and the end-of-shift query), and when the
// best is the wrong one, the answer is next to the runner-up, not among the nodes
// that match the question's words. Over the dev set and seven held-out sets (207
// relational questions), relational MRR by text alone was 0.700 with the
// neighbours of the near-best anchors only, 0.712 with the runner-ups' neighbours
// ranked after those in their anchors' order, and 0.716 weighed as here; a share
// to the power 1, 2, 3, 6 or 8 gave the same within 0.01.
func (r *Retriever) relationalRank(st *graphState, dir direction, anchors, own, rest []rankedNode) []rankedNode {
	if len(anchors) == 0 {
		return nil
	}
	ownScore := make(map[int]float64, len(own))
	best := 0.0 // the best score of own, to scale the others by
	for _, t := range own {
		ownScore[t.idx] = t.score
		best = max(best, t.score)
	}
	if best == 0 {
		best = 1
	}
	top := anchors[0].score
	if top <= 0 {
		return nil
	}
	if anchors[0].named {
		anchors = anchors[:1] // a node the question names outright is the anchor
	}
	rel := map[int]float64{}
	for _, a := range anchors[:min(len(anchors), maxCandidateAnchors)] {
		w := math.Pow(max(a.score, 0)/top, anchorSharpness)
		for _, nb := range st.adj[a.idx] {
			out, ok := st.outgoing(a.idx, nb)
			if !ok {
				continue // a loop says nothing about direction
			}
			if out == (dir == successors) && w > rel[int(nb.node)] {
				rel[int(nb.node)] = w
			}
		}
	}
	if len(rel) == 0 {
		return nil
	}
	out := make([]rankedNode, 0, len(rel)+len(rest))
	for n, w := range rel {
		out = append(out, rankedNode{idx: n, score: 2 + w + 0.5*ownScore[n]/best})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].idx < out[b].idx
	})
	seen := make(map[int]bool, len(out)+len(rest))
	for _, n := range out {
		seen[n.idx] = true
	}
	for _, a := range anchors[:min(len(anchors), maxAnchors)] {
		if a.score < anchorShare*top {
			break
		}
		if !seen[a.idx] {
			seen[a.idx] = true
			out = append(out, rankedNode{idx: a.idx, score: 1 + a.score/top})
		}
	}
	restBest := 1.0
	if len(rest) > 0 && rest[0].score > 0 {
		restBest = rest[0].score
	}
	for _, t := range rest {
		if !seen[t.idx] {
			seen[t.idx] = true
			out = append(out, rankedNode{idx: t.idx, score: t.score / restBest})
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
