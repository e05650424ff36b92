package search

import (
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// ServerQuery is a question prepared for a search engine that analyses text with
// its own analyzers (ArangoSearch): the engine lowercases and stems, this package
// does the rest the same way it does for its own index.
type ServerQuery struct {
	// Words are the question's words as Tokens splits them (identifiers split,
	// accents folded), stop words dropped, then each pair of adjacent words joined
	// ("fetch api" → "fetchapi"): an engine cannot split a camelCase identifier
	// such as fetchApi, so the joined form is how the question reaches it. The
	// question's code words follow, whole (CodeWords: retrybackoffms, d.claimno),
	// those without / or -, which a word tokenizer keeps in one piece as the
	// engine read them in the nodes (a path is split there, and its words are
	// already sent).
	Words []string
	// Alt are the words the bilingual lexicon gives for Words (French questions
	// about English-named nodes), to be weighted below Words.
	Alt []string
}

// Empty reports a question with nothing to search.
func (q ServerQuery) Empty() bool { return len(q.Words) == 0 && len(q.Alt) == 0 }

// maxServerWords bounds what one question sends: a pasted page is not a question.
const maxServerWords = 64

// ForServer prepares query for a search engine with its own analyzers.
func ForServer(query string) ServerQuery {
	var q ServerQuery
	seen := map[string]bool{}
	add := func(dst *[]string, w string) {
		if w != "" && !seen[w] && len(q.Words)+len(q.Alt) < maxServerWords {
			seen[w] = true
			*dst = append(*dst, w)
		}
	}
	var kept []string
	for _, t := range Tokens(query) {
		if !IsStopWord(t) {
			kept = append(kept, t)
		}
	}
	for _, t := range kept {
		add(&q.Words, t)
	}
	for i := 0; i+1 < len(kept); i++ {
		add(&q.Words, kept[i]+kept[i+1])
	}
	for _, w := range CodeWords(query) {
		if !strings.ContainsAny(w, "/-") {
			add(&q.Words, w)
		}
	}
	for _, t := range kept {
		for _, s := range theLexicon().expand(t) {
			for _, tok := range Tokens(s) {
				if !IsStopWord(tok) {
					add(&q.Alt, tok)
				}
			}
		}
	}
	return q
}

// Join puts words in one string for an engine's tokenizer.
func Join(words []string) string { return strings.Join(words, " ") }

// maxMatchedTypes bounds the node types a question is taken to name.
const maxMatchedTypes = 16

// MatchingTypes returns the keys of the node types whose display name,
// description or category the question matches, best first: an engine that
// indexes nodes alone cannot see those texts, which live in the type configs.
func MatchingTypes(query string, configs []datasource.NodeConfig) []string {
	if len(configs) == 0 {
		return nil
	}
	nodes := make([]datasource.Node, len(configs))
	for i, c := range configs {
		nodes[i] = datasource.Node{Type: c.Key}
	}
	hits := New(nodes, configs).Search(query, maxMatchedTypes)
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, configs[h.Index].Key)
	}
	return out
}

// maxMatchedSheets bounds the sheets a question is taken to name.
const maxMatchedSheets = 16

// MatchingSheets returns the ids of the sheets whose name the question matches,
// best first, analysed as the index analyses a node's sheet name (the same
// splitting, stemming, lexicon and prefixes): a search engine that indexes nodes
// sees only their sheet id, and the names live in the graph document.
func MatchingSheets(query string, sheets map[string]string) []string {
	if len(sheets) == 0 {
		return nil
	}
	ids := make([]string, 0, len(sheets))
	for id := range sheets {
		ids = append(ids, id)
	}
	sort.Strings(ids) // ties keep an order that does not depend on the map
	nodes := make([]datasource.Node, len(ids))
	for i, id := range ids {
		nodes[i] = datasource.Node{Sheet: id}
	}
	hits := NewGraph(datasource.Snapshot{Graph: datasource.Graph{Sheets: sheets}, Nodes: nodes}).Search(query, maxMatchedSheets)
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, ids[h.Index])
	}
	return out
}
