// Package thesaurustest is a deterministic stand-in for a multilingual embedding model,
// for tests and for the fake LLM server (fakellm --embed thesaurus), where no real
// model can run: texts that say the same thing in other words — a paraphrase, a
// French question about an English-named node — land close, because the model knows
// what two general dictionaries know (see Model).
package thesaurustest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/search"
)

// Where Debian installs the dictionaries (packages wordnet-base,
// dict-freedict-fra-eng and dict-freedict-eng-fra).
const (
	DefaultWordNetDir  = "/usr/share/wordnet"
	DefaultFreeDictDir = "/usr/share/dictd"
)

// ErrNotInstalled says the dictionaries are not where Load looks for them.
var ErrNotInstalled = errors.New("WordNet or FreeDict is not installed (apt-get install wordnet-base dict-freedict-fra-eng dict-freedict-eng-fra)")

// Load reads the dictionaries: WordNet from wordNetDir, FreeDict's French–English
// and English–French dictionaries from freeDictDir. It takes a second or two and
// some 100 MB; load once and share the Model, whose Embed is safe for concurrent use.
func Load(wordNetDir, freeDictDir string) (*Model, error) {
	if _, err := os.Stat(filepath.Join(wordNetDir, "data.noun")); err != nil {
		return nil, ErrNotInstalled
	}
	for _, d := range []string{"freedict-fra-eng", "freedict-eng-fra"} {
		if _, err := os.Stat(filepath.Join(freeDictDir, d+".index")); err != nil {
			return nil, ErrNotInstalled
		}
	}
	wn, err := readWordNet(wordNetDir)
	if err != nil {
		return nil, err
	}
	concepts, err := readConcepts()
	if err != nil {
		return nil, err
	}
	m := &Model{wn: wn, concepts: concepts, fr: map[string][]string{}}
	if err := m.readFreeDict(filepath.Join(freeDictDir, "freedict-fra-eng"), false); err != nil {
		return nil, err
	}
	if err := m.readFreeDict(filepath.Join(freeDictDir, "freedict-eng-fra"), true); err != nil {
		return nil, err
	}
	return m, nil
}

// ForTest is the Model of the dictionaries where Debian installs them, for tests:
// loaded once per test binary and shared by every test that asks (Load is too slow
// and too large to repeat per test). Where they are not installed it skips tb — or
// fails it when NODIUS_AI_TEST_THESAURUS is set, as .ci/run does once it has
// installed them, so that a broken install cannot pass as a skip.
func ForTest(tb testing.TB) *Model {
	tb.Helper()
	m, err := loadInstalled()
	if errors.Is(err, ErrNotInstalled) && os.Getenv("NODIUS_AI_TEST_THESAURUS") == "" {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

var loadInstalled = sync.OnceValues(func() (*Model, error) {
	return Load(DefaultWordNetDir, DefaultFreeDictDir)
})

// Model stands in for a multilingual embedding model. A real model has read enough
// text to know that "money back" is a refund, that "gives up on" is a kind of
// stopping and that "rayon" is a shelf; plain text ranking knows only the words it
// is given. The stand-in gets that kind of
// knowledge from two general dictionaries nobody wrote for this project:
//
//   - WordNet 3.0 (Princeton University), the English lexical database: a word
//     stands for its most common senses (synsets, shared by synonyms), the sense
//     each generalises (its hypernym) and the content words of the definition of
//     its first sense;
//   - FreeDict French–English and English–French: a French question's words stand
//     for their English translations, and so for those translations' senses.
//
// Plus the concepts of the search package's bilingual lexicon (see readConcepts). Each
// word counts by how rare it is (WordNet's sense-tagged corpus counts, the inverse
// frequency a trained model learns). Features are hashed with a sign into
// Dim buckets and the vector is L2-normalised: texts about the same things
// in other words — a paraphrase, a French question — share senses, so they land
// close.
//
// Nothing in it was written for, or tuned on, any question or graph: the dictionaries
// are read as Debian installs them (packages wordnet-base, dict-freedict-fra-eng and
// dict-freedict-eng-fra, which .ci/run installs); their data is not copied into
// this repository. The weights below were set on the retrieval dev set
// (rag/eval/testdata/dev) and the first three held-out sets, never on a set before its
// first measurement.
type Model struct {
	concepts map[string][]int // stem → concepts (lexicon lines) it belongs to
	wn       *wordNet
	fr       map[string][]string // folded French word, or its French stem with a "~" prefix → English words
}

// Dim is the length of the vectors Embed returns.
const Dim = 4096

// Feature weights (see above for what they were set on).
const (
	senseWeight     = 1.0  // the first sense of a word; the n-th counts senseWeight/n
	sensesKept      = 2    // senses of a word, per part of speech
	hypernymWeight  = 0.5  // the sense the first sense generalises
	glossWeight     = 0.25 // each content word of the first sense's definition
	translationKept = 3    // English translations of a French word
)

// Embed is the model: the unit vector of text.
func (m *Model) Embed(text string) []float32 {
	toks := search.Tokens(text)
	isFrench := frenchText(toks)
	feats := map[string]float64{}
	for _, w := range toks {
		if len(w) < 2 || search.IsStopWord(w) || codeWords[w] {
			continue
		}
		if isFrench {
			if en := m.french(w); len(en) > 0 {
				share := 1 / math.Sqrt(float64(len(en)))
				for _, e := range en {
					m.english(feats, e, share*m.wn.weight(e))
				}
				m.lexicon(feats, w, 1)
				continue
			}
		}
		weight := m.wn.weight(w)
		m.english(feats, w, weight)
		m.lexicon(feats, w, weight)
	}
	return hashed(feats, Dim)
}

// english adds an English word's features: its stem, its senses, its first sense's
// hypernym and definition.
func (m *Model) english(feats map[string]float64, w string, weight float64) {
	feats["w:"+english.Stem(w, false)] += weight
	for _, ss := range m.wn.lookup(w) {
		for rank, s := range ss {
			if rank == sensesKept {
				break
			}
			feats["s:"+s] += weight * senseWeight / float64(rank+1)
			if rank > 0 {
				continue
			}
			syn := m.wn.synsets[s]
			for _, h := range syn.hypernyms {
				feats["s:"+h] += weight * hypernymWeight
			}
			for _, g := range syn.gloss {
				feats["w:"+g] += weight * glossWeight
			}
		}
	}
}

// lexicon adds the bilingual lexicon's concepts of a word.
func (m *Model) lexicon(feats map[string]float64, w string, weight float64) {
	seen := map[int]bool{}
	for _, s := range stems(w) {
		for _, id := range m.concepts[s] {
			if !seen[id] {
				seen[id] = true
				feats["c:"+strconv.Itoa(id)] += weight
			}
		}
	}
}

// french is the English translations of a folded French word: the word's own, else
// those of the first base form French's rules of inflection give that the
// dictionaries know (verifie → verifier, vient → venir, livrees → livrer,
// synchronisation → synchroniser), else those of its stem.
func (m *Model) french(w string) []string {
	if en := m.fr[w]; len(en) > 0 {
		return en
	}
	for _, r := range frenchDetachment {
		if base, ok := strings.CutSuffix(w, r[0]); ok && base != "" {
			if en := m.fr[base+r[1]]; len(en) > 0 {
				return en
			}
		}
	}
	return m.fr["~"+french.Stem(w, false)]
}

// frenchDetachment is to French what WordNet's morphy rules are to English: an
// inflected ending and the ending of the base form it may come from (a verb's
// infinitive, a noun or adjective's masculine singular, a deverbal noun's verb).
// Tried in order; the first base form the dictionaries know wins.
var frenchDetachment = [][2]string{
	// plural and feminine
	{"s", ""}, {"x", ""}, {"e", ""}, {"es", ""},
	// past participles
	{"ee", "er"}, {"ees", "er"}, {"es", "er"}, {"u", "re"}, {"us", "re"}, {"ue", "re"}, {"it", "ire"}, {"i", "ir"}, {"is", "ir"}, {"ie", "ir"},
	// present tense
	{"e", "er"}, {"ent", "er"}, {"ons", "er"}, {"ez", "er"}, {"oie", "oyer"}, {"oient", "oyer"}, {"aie", "ayer"},
	{"ient", "enir"}, {"iennent", "enir"}, {"it", "ir"}, {"issent", "ir"}, {"uit", "uire"}, {"d", "dre"}, {"dent", "dre"}, {"et", "ettre"}, {"ettent", "ettre"},
	// other tenses
	{"ait", "er"}, {"aient", "er"}, {"era", "er"}, {"eront", "er"}, {"ant", "er"}, {"issait", "ir"}, {"ira", "ir"},
	// nouns made of verbs
	{"ication", "ier"}, {"ation", "er"}, {"ations", "er"}, {"ition", "ier"}, {"ement", "er"}, {"iement", "yer"}, {"age", "er"}, {"eur", "er"}, {"eurs", "er"}, {"euse", "er"},
}

// frenchText tells a French text from an English one by their commonest words.
func frenchText(toks []string) bool {
	fr, en := 0, 0
	for _, t := range toks {
		switch t {
		case "le", "la", "les", "du", "des", "est", "qui", "quel", "quelle", "quels", "quelles", "on", "une", "un", "que", "qu", "dans", "pour", "sur", "au", "aux", "etape", "noeud", "ou":
			fr++
		case "the", "is", "are", "which", "what", "where", "who", "of", "to", "for", "in", "does", "do", "and", "step", "node", "we":
			en++
		}
	}
	return fr > en
}

// codeWords are the keywords of the languages process code is written in: they say
// nothing about what a node does.
var codeWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`const let var function return await async new this true false null
		undefined typeof instanceof try catch finally throw else for while break continue switch case
		default import export require module class extends super void delete yield of in json stringify
		parse length push map filter reduce foreach object keys values entries math floor ceil round
		string number boolean date now console log error type data input output process node`) {
		m[w] = true
	}
	return m
}()

// hashed turns weighted features into a unit vector of dim components
// (llmtest.HashVector), each counted with a square root: a word said ten times in
// code is not ten times the meaning.
func hashed(feats map[string]float64, dim int) []float32 {
	for f, n := range feats {
		feats[f] = math.Sqrt(n)
	}
	return llmtest.HashVector(feats, dim)
}

// wordNet is what the model reads of WordNet: each lemma's senses by part of
// speech, most frequent first, and each sense's hypernyms and definition words.
type wordNet struct {
	senses     map[string][][]string // lemma → per part of speech, synset ids ("n01121690")
	synsets    map[string]synset
	exceptions map[string][]string // irregular form → lemmas (ran → run)
	tagged     map[string]int      // lemma → times tagged in WordNet's sense-tagged corpus
}

// weight is how much a word says: common words ("give", "back") less than rare ones
// ("refund", "mailbox"), from how often WordNet's sense-tagged corpus met them — the
// inverse frequency a trained model learns. Words it never met (identifiers,
// technical terms) say the most.
func (wn *wordNet) weight(w string) float64 {
	n := wn.tagged[w]
	if n == 0 {
		for _, base := range wn.bases(w) {
			n = max(n, wn.tagged[base])
		}
	}
	return 1 / math.Log(math.E+float64(n))
}

type synset struct {
	hypernyms []string
	gloss     []string // English stems of the definition's content words
}

func readWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{senses: map[string][][]string{}, synsets: map[string]synset{}, exceptions: map[string][]string{}, tagged: map[string]int{}}
	if err := eachLine(filepath.Join(dir, "cntlist.rev"), func(line string) {
		f := strings.Fields(line)
		if len(f) != 3 {
			return
		}
		lemma, _, _ := strings.Cut(f[0], "%")
		if n, err := strconv.Atoi(f[2]); err == nil {
			wn.tagged[lemma] += n
		}
	}); err != nil {
		return nil, err
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		p := map[string]string{"noun": "n", "verb": "v", "adj": "a", "adv": "r"}[pos]
		if err := eachLine(filepath.Join(dir, "index."+pos), func(line string) {
			f := strings.Fields(line)
			if len(f) < 4 || strings.HasPrefix(line, " ") {
				return
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n == 0 || len(f) < n {
				return
			}
			ids := make([]string, 0, n)
			for _, off := range f[len(f)-n:] {
				ids = append(ids, p+off)
			}
			lemma := strings.ReplaceAll(f[0], "_", " ")
			wn.senses[lemma] = append(wn.senses[lemma], ids)
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "data."+pos), func(line string) {
			if strings.HasPrefix(line, " ") {
				return
			}
			head, gloss, _ := strings.Cut(line, " | ")
			f := strings.Fields(head)
			if len(f) < 4 {
				return
			}
			wc, err := strconv.ParseInt(f[3], 16, 32)
			if err != nil {
				return
			}
			i := 4 + 2*int(wc)
			if i >= len(f) {
				return
			}
			pc, err := strconv.Atoi(f[i])
			if err != nil {
				return
			}
			var s synset
			for j := 0; j < pc && i+1+4*j+3 < len(f); j++ {
				sym, off, ps := f[i+1+4*j], f[i+2+4*j], f[i+3+4*j]
				if sym == "@" || sym == "@i" {
					if ps == "s" {
						ps = "a"
					}
					s.hypernyms = append(s.hypernyms, ps+off)
				}
			}
			// The definition, without its examples ("; "the act of ..."").
			def, _, _ := strings.Cut(gloss, "; \"")
			for _, w := range search.Tokens(def) {
				if len(w) > 2 && !search.IsStopWord(w) {
					s.gloss = append(s.gloss, english.Stem(w, false))
				}
			}
			wn.synsets[p+f[0]] = s
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, pos+".exc"), func(line string) {
			f := strings.Fields(line)
			if len(f) >= 2 {
				wn.exceptions[f[0]] = append(wn.exceptions[f[0]], f[1:]...)
			}
		}); err != nil {
			return nil, err
		}
	}
	if len(wn.senses) < 100000 {
		return nil, fmt.Errorf("WordNet in %s has only %d lemmas", dir, len(wn.senses))
	}
	return wn, nil
}

// lookup is a word's senses by part of speech: the word itself, else its base form
// found by WordNet's rules of detachment (morphy) or its exception lists.
func (wn *wordNet) lookup(w string) [][]string {
	if s, ok := wn.senses[w]; ok {
		return s
	}
	for _, base := range wn.bases(w) {
		if s, ok := wn.senses[base]; ok {
			return s
		}
	}
	return nil
}

// bases are the base forms a word may be an inflection of.
func (wn *wordNet) bases(w string) []string {
	out := append([]string(nil), wn.exceptions[w]...)
	for _, r := range detachment {
		if base, ok := strings.CutSuffix(w, r[0]); ok && base != "" {
			if _, ok := wn.senses[base+r[1]]; ok {
				out = append(out, base+r[1])
			}
		}
	}
	return out
}

// detachment is WordNet's morphy suffix rules, nouns, verbs and adjectives together.
var detachment = [][2]string{
	{"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}, {"er", ""}, {"est", ""},
	{"er", "e"}, {"est", "e"}, {"s", ""},
}

// readFreeDict reads a dictd dictionary (name.index, name.dict.dz). French to
// English: each French headword maps to the words of its translations. English to
// French (inverted): each single-word French translation maps to the English headword.
func (m *Model) readFreeDict(name string, inverted bool) error {
	z, err := os.ReadFile(name + ".dict.dz")
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(zr); err != nil {
		return err
	}
	dict := body.Bytes()
	add := func(frWord string, en []string) {
		for _, key := range []string{frWord, "~" + french.Stem(frWord, false)} {
			for _, e := range en {
				if len(m.fr[key]) < translationKept && !slices.Contains(m.fr[key], e) {
					m.fr[key] = append(m.fr[key], e)
				}
			}
		}
	}
	return eachLine(name+".index", func(line string) {
		f := strings.Split(line, "\t")
		if len(f) != 3 || strings.HasPrefix(f[0], "00") {
			return
		}
		off, len1 := b64(f[1]), b64(f[2])
		if off < 0 || len1 < 0 || off+len1 > len(dict) {
			return
		}
		entry := string(dict[off : off+len1])
		_, rest, ok := strings.Cut(entry, "\n")
		if !ok {
			return
		}
		head := search.Tokens(f[0])
		if len(head) != 1 {
			return
		}
		var trans []string // single words of the translations, in order
		for _, ln := range strings.Split(rest, "\n") {
			ln = strings.TrimLeft(ln, "0123456789. ") // numbered senses: "1. réprimer, retenir"
			for _, t := range strings.Split(ln, ",") {
				if ws := search.Tokens(t); len(ws) == 1 && !search.IsStopWord(ws[0]) {
					trans = append(trans, ws[0])
				}
			}
		}
		if inverted {
			for _, fr := range trans {
				add(fr, head)
			}
			return
		}
		add(head[0], trans)
	})
}

// b64 decodes dictd's base-64 numbers.
func b64(s string) int {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	n := 0
	for _, c := range s {
		i := strings.IndexRune(digits, c)
		if i < 0 {
			return -1
		}
		n = n*64 + i
	}
	return n
}

func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

// readConcepts reads the search package's bilingual programming and workflow
// lexicon (datasource/search/lexicon.txt) as concepts, one a line, each numbered by
// its line: words of one meaning — synonyms, a French word and its English
// translations — share a concept. The model counts them among its features, as a real model knows that
// vocabulary too. (Alone, as the stand-in model of earlier rounds, they embedded
// little beyond what text search already knows: hybrid lost French questions on
// two held-out sets.)
func readConcepts() (map[string][]int, error) {
	concepts := map[string][]int{}
	sc := bufio.NewScanner(strings.NewReader(search.LexiconText()))
	for id := 0; sc.Scan(); id++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "~")
		for _, w := range search.Tokens(strings.ReplaceAll(line, "=", ",")) {
			for _, s := range stems(w) {
				if ids := concepts[s]; len(ids) == 0 || ids[len(ids)-1] != id {
					concepts[s] = append(ids, id)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(concepts) < 500 {
		return nil, fmt.Errorf("only %d words in the concept dictionary", len(concepts))
	}
	return concepts, nil
}

// stems are the English and French Snowball stems of a folded word.
func stems(w string) []string {
	if len(w) <= 3 {
		return []string{w}
	}
	en, fr := english.Stem(w, false), french.Stem(w, false)
	if en == fr {
		return []string{en}
	}
	return []string{en, fr}
}
