package search

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
)

// lexiconText is the bilingual lexicon of programming and workflow vocabulary (see
// the file's header for its format). It is data, not code, so that it can grow
// without touching the ranker, and it is general vocabulary: no graph's names.
//
//go:embed lexicon.txt
var lexiconText string

// LexiconText is the bilingual lexicon as written, for whoever needs the same
// vocabulary (the stand-in embedding model of the tests reads its lines as concepts).
func LexiconText() string { return lexiconText }

// lexicon maps a query word to the English words it may also mean.
type lexicon struct {
	fr map[string][]string // folded French word, and its French stem → English words
	en map[string][]string // English stem → the other words of its groups
}

// theLexicon is parsed from the embedded file on first use (a few milliseconds,
// which commands that never search should not pay at start-up), and only read
// afterwards.
var theLexicon = sync.OnceValue(func() *lexicon { return parseLexicon(lexiconText) })

func parseLexicon(text string) *lexicon {
	lx := &lexicon{fr: map[string][]string{}, en: map[string][]string{}}
	addUnique := func(m map[string][]string, k string, vs []string) {
		for _, v := range vs {
			dup := v == k
			for _, have := range m[k] {
				dup = dup || have == v
			}
			if !dup {
				m[k] = append(m[k], v)
			}
		}
	}
	split := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "~"); ok {
			words := split(rest)
			for _, w := range words {
				toks := Tokens(w)
				if len(toks) != 1 {
					continue // a phrase is a target, never a key
				}
				addUnique(lx.en, stem(toks[0]), words)
			}
			continue
		}
		left, right, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		targets := split(right)
		for _, w := range split(left) {
			toks := Tokens(w)
			if len(toks) != 1 {
				continue
			}
			addUnique(lx.fr, toks[0], targets)
			addUnique(lx.fr, frenchStem(toks[0]), targets)
		}
	}
	return lx
}

// expand returns the English words a folded query word may also mean: its French
// translations, and the English words of the same meaning.
func (lx *lexicon) expand(word string) []string {
	var out []string
	out = append(out, lx.fr[word]...)
	if fs := frenchStem(word); fs != word {
		out = append(out, lx.fr[fs]...)
	}
	out = append(out, lx.en[stem(word)]...)
	return out
}

// stem reduces an English word to its Snowball (Porter2) stem, so that "handles",
// "handled" and "handling" are one term. Index and query go through the same
// function: every field is analysed the same way. Short words and words outside
// ASCII are kept as they are.
func stem(w string) string {
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	return english.Stem(w, false)
}

// frenchStem is the French Snowball stem, used only to look words up in the lexicon
// (graphs are indexed with the English stemmer, the language their code is written in).
func frenchStem(w string) string {
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	return french.Stem(w, false)
}

// stemmer memoises stem during an index build, where the same words come back
// thousands of times.
type stemmer map[string]string

func (s stemmer) stem(w string) string {
	if t, ok := s[w]; ok {
		return t
	}
	t := stem(w)
	if len(s) < 1<<20 {
		s[w] = t
	}
	return t
}
