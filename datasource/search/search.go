// Package search ranks a graph's nodes against a free-text query with BM25F: one
// inverted index per graph snapshot, built once, queried many times.
//
// Why BM25F rather than counting words: node keys are short and decisive, code is
// long and noisy, and a word that appears in every node ("const", "return") says
// nothing. Field weights, per-field length normalisation and IDF handle exactly
// that. Identifiers are split (`fetchApi` → fetch api), accents folded, stop words
// (English, French, and "node"/"nœud" since every item is a node) dropped, words
// lightly stemmed, French words expanded to the English terms identifiers use, and
// long words also match as prefixes. Code-shaped words (sms_replies, SEPA_INSTANT,
// a URL path) are also kept whole, so a question that writes one exactly finds
// where it is written above nodes that only use its parts. A query that names a
// node key outright ranks that node first.
package search

import (
	"encoding/json"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/datasource"
)

// Hit is one ranked node: its index in the slice given to New, and its score.
// KeyMatch is set when the query named the node's key (exactly, or as the
// identifier's words in order), which callers may treat as a near-certain match.
type Hit struct {
	Index    int
	Score    float64
	KeyMatch bool
}

// Fields of a node the index reads, with their weights in fieldWeight.
const (
	fieldKey = iota
	fieldType
	fieldTypeName
	fieldProcess
	fieldData
	fieldDesc
	fieldEdge  // labels of the node's edges
	fieldSheet // name of the node's sheet
	numFields
)

// fieldWeight: the key is what people type; the type and its display name say what
// a node is; code, data and the type's description are long and only support.
func fieldWeight(f int) float64 {
	switch f {
	case fieldKey:
		return 5
	case fieldType, fieldTypeName:
		return 2
	case fieldProcess:
		return 1
	case fieldData:
		return 0.7
	case fieldEdge, fieldSheet:
		return 0.5
	default:
		return 1
	}
}

// fieldB is BM25's length normalisation per field: none for the one-or-two-word
// type fields, full for free text.
func fieldB(f int) float64 {
	switch f {
	case fieldType, fieldTypeName:
		return 0
	case fieldKey:
		return 0.3
	default:
		return 0.75
	}
}

const (
	k1             = 1.2
	synonymWeight  = 0.6  // a French word's English expansion scores below the word itself
	prefixWeight   = 0.35 // "valid" also matches "validat"...
	codeWeight     = 2    // sms_replies written whole scores above its parts met apart
	minPrefixLen   = 4    // ...but only for words long enough to be specific
	maxPrefixTerms = 24   // and through a bounded number of dictionary terms
	maxKeyNgram    = 8    // longest identifier, in words, recognised inside a query
	keyPrefixShare = 0.5  // key-prefix bonus as a share of the exact-key bonus
	maxKeyPrefixes = 32
)

type posting struct {
	doc int32
	w   float32 // saturated BM25F term weight, without IDF
}

// Index is an immutable search index over one snapshot's nodes; safe for
// concurrent queries.
type Index struct {
	n        int
	dict     map[string]int32 // term → id
	terms    []string         // sorted terms, for prefix expansion
	termIDs  []int32          // termIDs[i] is the id of terms[i]
	postings [][]posting      // by term id, docs ascending
	idf      []float32        // by term id

	keys       []string           // lowercase node keys, sorted, for key-prefix matches
	keyDocs    [][]int32          // docs of keys[i]
	keyPhrases map[string][]int32 // folded key words joined by " " → docs

	scratch sync.Pool // *queryScratch, so a query allocates (almost) nothing per node
}

// queryScratch is what one query needs per node: a score for every node and the list
// of nodes touched. Both are large for a big graph and reset cheaply, so they are
// reused across queries instead of allocated by each.
type queryScratch struct {
	scores  []float32 // length n, all zero between queries
	touched []int32
}

type rawPosting struct {
	doc int32
	tf  [numFields]uint8
}

// New indexes nodes (and the configs that name their types: display name,
// description and category are searched as part of every node of that type).
func New(nodes []datasource.Node, configs []datasource.NodeConfig) *Index {
	return build(nodes, configs, nil, nil)
}

// NewGraph indexes a whole snapshot: besides what New reads, each node is also
// searched by the labels of its edges and the name of its sheet.
func NewGraph(snap datasource.Snapshot) *Index {
	return build(snap.Nodes, snap.Configs, snap.Edges, snap.Graph.Sheets)
}

func build(nodes []datasource.Node, configs []datasource.NodeConfig, edges []datasource.Edge, sheets map[string]string) *Index {
	// Reading the nodes' text (splitting, stemming) is most of the work and each
	// node is read alone: large graphs are read in one shard per CPU, merged in
	// order, which gives exactly the index one pass would.
	return buildShards(nodes, configs, edges, sheets, max(1, min(runtime.GOMAXPROCS(0), len(nodes)/minShardNodes)))
}

func buildShards(nodes []datasource.Node, configs []datasource.NodeConfig, edges []datasource.Edge, sheets map[string]string, n int) *Index {
	st := stemmer{}
	edgeText := map[string][]string{}
	for _, e := range edges {
		if strings.TrimSpace(e.Label) == "" {
			continue
		}
		edgeText[e.Source] = append(edgeText[e.Source], e.Label)
		if e.Target != e.Source {
			edgeText[e.Target] = append(edgeText[e.Target], e.Label)
		}
	}
	shared := shared{edgeText: edgeText, sheetTerms: map[string]fieldText{}, cfgs: make(map[string]cfgText, len(configs))}
	for id, name := range sheets {
		shared.sheetTerms[id] = st.fieldTerms(name)
	}
	for _, c := range configs {
		shared.cfgs[c.Key] = cfgText{name: st.fieldTerms(c.DisplayName), desc: st.fieldTerms(c.Description + " " + c.Category)}
	}
	ix := &Index{n: len(nodes)}
	lens := make([][numFields]uint16, len(nodes))

	shards := make([]*shard, n)
	var wg sync.WaitGroup
	for k := range shards {
		lo, hi := k*len(nodes)/n, (k+1)*len(nodes)/n
		size := len(nodes) / n
		if k == 0 { // the others are merged into it
			size = len(nodes)
		}
		shards[k] = newShard(size)
		wg.Go(func() { shards[k].read(nodes, lo, hi, &shared, lens) })
	}
	wg.Wait()
	ix.dict = shards[0].dict
	raw := shards[0].raw
	keyIndex := shards[0].keyIndex
	ix.keyPhrases = shards[0].keyPhrases
	sumLen := shards[0].sumLen
	for _, sh := range shards[1:] {
		for local, t := range sh.terms {
			id, ok := ix.dict[t]
			if !ok {
				id = int32(len(raw))
				ix.dict[t] = id
				raw = append(raw, nil)
			}
			raw[id] = append(raw[id], sh.raw[local]...)
		}
		for k, docs := range sh.keyIndex {
			keyIndex[k] = append(keyIndex[k], docs...)
		}
		for p, docs := range sh.keyPhrases {
			ix.keyPhrases[p] = append(ix.keyPhrases[p], docs...)
		}
		for f := range sumLen {
			sumLen[f] += sh.sumLen[f]
		}
	}

	var avg [numFields]float64
	for f := range avg {
		if len(nodes) > 0 {
			avg[f] = sumLen[f] / float64(len(nodes))
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	ix.postings = make([][]posting, len(raw))
	ix.idf = make([]float32, len(raw))
	N := float64(len(nodes))
	weigh := func(lo, hi int) {
		for id := lo; id < hi; id++ {
			rp := raw[id]
			ps := make([]posting, len(rp))
			for j, p := range rp {
				var tfw float64
				for f := 0; f < numFields; f++ {
					if p.tf[f] == 0 {
						continue
					}
					norm := 1 - fieldB(f) + fieldB(f)*float64(lens[p.doc][f])/avg[f]
					tfw += fieldWeight(f) * float64(p.tf[f]) / norm
				}
				ps[j] = posting{doc: p.doc, w: float32(tfw / (k1 + tfw))}
			}
			ix.postings[id] = ps
			df := float64(len(rp))
			ix.idf[id] = float32(math.Log(1 + (N-df+0.5)/(df+0.5)))
			raw[id] = nil
		}
	}
	for k := range n {
		wg.Go(func() { weigh(k*len(raw)/n, (k+1)*len(raw)/n) })
	}
	wg.Wait()

	ix.terms = make([]string, 0, len(ix.dict))
	for t := range ix.dict {
		ix.terms = append(ix.terms, t)
	}
	sort.Strings(ix.terms)
	ix.termIDs = make([]int32, len(ix.terms))
	for i, t := range ix.terms {
		ix.termIDs[i] = ix.dict[t]
	}

	ix.keys = make([]string, 0, len(keyIndex))
	for k := range keyIndex {
		ix.keys = append(ix.keys, k)
	}
	sort.Strings(ix.keys)
	ix.keyDocs = make([][]int32, len(ix.keys))
	for i, k := range ix.keys {
		ix.keyDocs[i] = keyIndex[k]
	}
	ix.scratch.New = func() any { return &queryScratch{scores: make([]float32, ix.n)} }
	return ix
}

// minShardNodes: below this many nodes per CPU, one pass costs less than
// starting and merging shards.
const minShardNodes = 5000

type cfgText struct{ name, desc fieldText }

// fieldText is what a field's text gives the index: its terms (split, stemmed),
// which make the field's length, and the whole code words beside them, which do
// not (so adding them changes no plain term's score).
type fieldText struct{ terms, code []string }

// fieldTerms analyses s as every field is analysed.
func (st stemmer) fieldTerms(s string) fieldText {
	return fieldText{terms: st.terms(s, nil), code: codeMemo(nil).terms(s, nil)}
}

// shared is what every shard reads: edge labels by node, sheet and config terms.
type shared struct {
	edgeText   map[string][]string
	sheetTerms map[string]fieldText
	cfgs       map[string]cfgText
}

// shard indexes a run of nodes: its own term ids (in the order first met), raw
// postings by id, key maps and field lengths.
//
// Tokens repeat massively across a graph's nodes (the same identifiers, the same
// words of code), so a shard reads each distinct token once: tokens maps a folded
// token straight to its term id (or to noTerm for a stop word), which replaces a
// stop-word lookup, a stem and a term lookup per token by one map lookup, made on
// a reused buffer so a token met before allocates nothing. Ids are still given in
// the order the terms are first counted, so the index is the same as if every
// token were analysed afresh (TestBuildMatchesOracle).
type shard struct {
	dict       map[string]int32 // term → local id
	terms      []string         // by local id
	raw        [][]rawPosting
	keyIndex   map[string][]int32
	keyPhrases map[string][]int32
	sumLen     [numFields]float64

	tokens   map[string]int32   // folded token → term id, noTerm for a stop word
	codes    map[string][]int32 // run of code → ids of its code terms
	typeIDs  map[string]fieldIDs
	cfgIDs   map[string][2]fieldIDs // type → display name, description
	sheetIDs map[string]fieldIDs
	lower    []byte // the token being looked up, lowercased
	data     []byte // the node's data as JSON
	phrase   []byte // the key's tokens joined by " ", for keyPhrases
	words    int    // tokens in phrase

	// The current document and field, and its term counts: slot[id] indexes
	// counts (-1 when the term is not in the document yet), reset for every node.
	doc    int32
	field  int
	slot   []int32
	counts [][numFields]uint8
	order  []int32
}

// fieldIDs is fieldText with its terms resolved to a shard's ids.
type fieldIDs struct{ terms, code []int32 }

// noTerm is the term id of a token that gives no term (a stop word).
const noTerm = -1

// maxTokenMemo bounds the tokens a shard remembers (a graph of random words must
// not grow the memo without end; past it, tokens are analysed every time).
const maxTokenMemo = 1 << 20

func newShard(nodes int) *shard {
	return &shard{
		dict: make(map[string]int32), keyIndex: make(map[string][]int32, nodes), keyPhrases: make(map[string][]int32, nodes),
		tokens: make(map[string]int32), codes: make(map[string][]int32), typeIDs: make(map[string]fieldIDs),
		cfgIDs: make(map[string][2]fieldIDs), sheetIDs: make(map[string]fieldIDs),
	}
}

// termID returns the id of term t, giving it the next id when it is new.
func (sh *shard) termID(t string) int32 {
	id, ok := sh.dict[t]
	if !ok {
		id = int32(len(sh.raw))
		sh.dict[t] = id
		sh.terms = append(sh.terms, t)
		sh.raw = append(sh.raw, nil)
		sh.slot = append(sh.slot, -1)
	}
	return id
}

// resolve gives the ids of a field's analysed text, in order.
func (sh *shard) resolve(t fieldText) fieldIDs {
	var ids fieldIDs
	for _, s := range t.terms {
		ids.terms = append(ids.terms, sh.termID(s))
	}
	for _, s := range t.code {
		ids.code = append(ids.code, sh.termID(s))
	}
	return ids
}

// countID adds one to the current document's count of term id in the current field.
func (sh *shard) countID(id int32) {
	j := sh.slot[id]
	if j < 0 {
		j = int32(len(sh.counts))
		sh.slot[id] = j
		sh.counts = append(sh.counts, [numFields]uint8{})
		sh.order = append(sh.order, id)
	}
	if sh.counts[j][sh.field] < math.MaxUint8 {
		sh.counts[j][sh.field]++
	}
}

// setLen sets the current field's length (its terms, not its code words).
func (sh *shard) setLen(lens [][numFields]uint16, n int) {
	if n > math.MaxUint16 {
		n = math.MaxUint16
	}
	lens[sh.doc][sh.field] = uint16(n)
	sh.sumLen[sh.field] += float64(n)
}

// addIDs counts already resolved terms and code words in field f and sets its length.
func (sh *shard) addIDs(lens [][numFields]uint16, f int, ids fieldIDs) {
	sh.field = f
	for _, id := range ids.terms {
		sh.countID(id)
	}
	for _, id := range ids.code {
		sh.countID(id)
	}
	sh.setLen(lens, len(ids.terms))
}

// countText counts the terms of s (as stemmer.terms gives them) in the current
// field and returns how many there were. It scans the bytes as forEachToken scans
// runes: invalid UTF-8 is one separator byte, as a range loop decodes it.
func (sh *shard) countText(s string) int {
	n, start := 0, -1
	for i := 0; i < len(s); {
		c, size, word := s[i], 1, false
		if c < utf8.RuneSelf {
			word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			word = isWordRune(r)
		}
		if word {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			n += sh.countWord(s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		n += sh.countWord(s[start:])
	}
	return n
}

// countWord counts the tokens of one raw word (splitCamel's parts).
func (sh *shard) countWord(w string) int {
	n := 0
	if !isASCIIWord(w) {
		splitCamel(w, func(t string) {
			sh.lower = append(sh.lower[:0], t...)
			n += sh.countToken()
		})
		return n
	}
	splitCamelASCII(w, func(part string) {
		b := sh.lower[:0]
		for i := 0; i < len(part); i++ {
			c := part[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		sh.lower = b
		n += sh.countToken()
	})
	return n
}

// countToken counts the folded token in sh.lower, and says whether it was a term.
func (sh *shard) countToken() int {
	if sh.field == fieldKey {
		if sh.words > 0 {
			sh.phrase = append(sh.phrase, ' ')
		}
		sh.phrase = append(sh.phrase, sh.lower...)
		sh.words++
	}
	id, ok := sh.tokens[string(sh.lower)]
	if !ok {
		t := string(sh.lower)
		id = noTerm
		if !IsStopWord(t) {
			id = sh.termID(stem(t))
		}
		if len(sh.tokens) < maxTokenMemo {
			sh.tokens[t] = id
		}
	}
	if id == noTerm {
		return 0
	}
	sh.countID(id)
	return 1
}

// countCode counts the code words of s (codeMemo.terms) in the current field.
func (sh *shard) countCode(s string) {
	forEachCodeRun(s, func(run string) {
		ids, ok := sh.codes[run]
		if !ok {
			codeRun(run, func(w string) { ids = append(ids, sh.termID(codeMarker+w)) })
			sh.codes[strings.Clone(run)] = ids
		}
		for _, id := range ids {
			sh.countID(id)
		}
	})
}

// text counts one free-text field of the current document.
func (sh *shard) text(lens [][numFields]uint16, f int, s string) {
	sh.field = f
	n := sh.countText(s)
	sh.countCode(s)
	sh.setLen(lens, n)
}

// read indexes nodes[lo:hi].
func (sh *shard) read(nodes []datasource.Node, lo, hi int, sh2 *shared, lens [][numFields]uint16) {
	var code []string
	for i := lo; i < hi; i++ {
		nd := &nodes[i]
		sh.doc = int32(i)
		for _, id := range sh.order {
			sh.slot[id] = -1
		}
		sh.counts = sh.counts[:0]
		sh.order = sh.order[:0]

		sh.field = fieldKey
		sh.phrase, sh.words = sh.phrase[:0], 0
		n := sh.countText(nd.Key)
		code = keyCodeTerms(nd.Key, code[:0])
		for _, t := range code {
			sh.countID(sh.termID(t))
		}
		sh.setLen(lens, n)

		tt, ok := sh.typeIDs[nd.Type]
		if !ok {
			tt = sh.resolve(fieldText{terms: indexTerms(nd.Type, nil), code: codeMemo(nil).terms(nd.Type, nil)})
			sh.typeIDs[nd.Type] = tt
		}
		sh.addIDs(lens, fieldType, tt)
		if c, ok := sh2.cfgs[nd.Type]; ok {
			ids, ok := sh.cfgIDs[nd.Type]
			if !ok {
				ids = [2]fieldIDs{sh.resolve(c.name), sh.resolve(c.desc)}
				sh.cfgIDs[nd.Type] = ids
			}
			sh.addIDs(lens, fieldTypeName, ids[0])
			sh.addIDs(lens, fieldDesc, ids[1])
		}
		sh.text(lens, fieldProcess, nd.Process)
		if nd.Data != nil {
			b, ok := appendData(sh.data[:0], nd.Data)
			var err error
			if !ok {
				b, err = json.Marshal(nd.Data)
			} else {
				sh.data = b
			}
			if err == nil && string(b) != "null" {
				sh.text(lens, fieldData, string(b))
			}
		}
		if labels := sh2.edgeText[nd.Key]; len(labels) > 0 {
			// All the labels' terms, then all their code words, as one field.
			sh.field = fieldEdge
			n := 0
			for _, l := range labels {
				n += sh.countText(l)
			}
			for _, l := range labels {
				sh.countCode(l)
			}
			sh.setLen(lens, n)
		}
		if t := sh2.sheetTerms[nd.Sheet]; len(t.terms) > 0 || len(t.code) > 0 {
			ids, ok := sh.sheetIDs[nd.Sheet]
			if !ok {
				ids = sh.resolve(t)
				sh.sheetIDs[nd.Sheet] = ids
			}
			sh.addIDs(lens, fieldSheet, ids)
		}
		for j, id := range sh.order {
			sh.raw[id] = append(sh.raw[id], rawPosting{doc: sh.doc, tf: sh.counts[j]})
		}

		lk := strings.ToLower(nd.Key)
		sh.keyIndex[lk] = append(sh.keyIndex[lk], sh.doc)
		if sh.words > 0 && sh.words <= maxKeyNgram {
			p := string(sh.phrase)
			sh.keyPhrases[p] = append(sh.keyPhrases[p], sh.doc)
		}
	}
}

// indexTerms appends the searchable terms of s (tokens minus stop words, stemmed).
func indexTerms(s string, dst []string) []string { return stemmer(nil).terms(s, dst) }

// terms is indexTerms with a memo (a nil stemmer memoises nothing).
func (st stemmer) terms(s string, dst []string) []string {
	forEachToken(s, func(t string) {
		if !IsStopWord(t) {
			if st != nil {
				dst = append(dst, st.stem(t))
			} else {
				dst = append(dst, stem(t))
			}
		}
	})
	return dst
}

// Len is the number of indexed nodes.
func (ix *Index) Len() int { return ix.n }

// Terms returns the terms a query is searched with (after splitting, folding,
// stop words and stemming, before synonyms and prefixes); empty means the query
// has nothing to search and Search returns no hits.
func Terms(query string) []string { return indexTerms(query, nil) }

// Search returns at most limit hits (all when limit <= 0), best first; ties keep
// the nodes' order. Nothing when the query has no searchable word. It never panics.
func (ix *Index) Search(query string, limit int) []Hit {
	if ix == nil || ix.n == 0 {
		return nil
	}
	words := Tokens(query)
	qterms := ix.queryTerms(words, CodeWords(query))

	sc := ix.scratch.Get().(*queryScratch)
	scores, touched := sc.scores, sc.touched[:0]
	defer func() {
		for _, d := range touched { // only these are non-zero
			scores[d] = 0
		}
		sc.touched = touched[:0]
		ix.scratch.Put(sc)
	}()
	upper := 0.0 // the most BM25 any node can score for this query
	for _, qt := range qterms {
		id, q := qt.id, qt.w
		wq := float32(q) * ix.idf[id]
		upper += float64(wq)
		for _, p := range ix.postings[id] {
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += wq * p.w
		}
	}
	// Key bonuses: naming a node's key beats any amount of word overlap, so the
	// bonus is the largest score BM25 could give (plus one).
	var keyMatch map[int32]bool // few entries; made on the first exact key match
	bonus := float32(upper + 1)
	boost := func(doc int32, b float32, exact bool) {
		if scores[doc] == 0 {
			touched = append(touched, doc)
		}
		scores[doc] += b
		if exact {
			if keyMatch == nil {
				keyMatch = make(map[int32]bool)
			}
			keyMatch[doc] = true
		}
	}
	for _, w := range rawWords(query) {
		lw := strings.ToLower(w)
		if IsStopWord(lw) {
			continue
		}
		if i := sort.SearchStrings(ix.keys, lw); i < len(ix.keys) && ix.keys[i] == lw {
			for _, d := range ix.keyDocs[i] {
				if !keyMatch[d] {
					boost(d, bonus, true)
				}
			}
			continue
		}
		if len([]rune(lw)) < 3 || !strings.ContainsAny(lw, "-_.") && !hasUpperInside(w) {
			continue // a plain word is left to BM25; "fetch-a" or "fetchAp" look like a key being typed
		}
		for i, n := sort.SearchStrings(ix.keys, lw), 0; i < len(ix.keys) && strings.HasPrefix(ix.keys[i], lw) && n < maxKeyPrefixes; i, n = i+1, n+1 {
			for _, d := range ix.keyDocs[i] {
				boost(d, bonus*keyPrefixShare, false)
			}
		}
	}
	for n := 1; n <= maxKeyNgram && n <= len(words); n++ {
		for s := 0; s+n <= len(words); s++ {
			if n == 1 && IsStopWord(words[s]) {
				continue
			}
			docs, ok := ix.keyPhrases[strings.Join(words[s:s+n], " ")]
			if !ok {
				continue
			}
			for _, d := range docs {
				if !keyMatch[d] {
					boost(d, bonus, true)
				}
			}
		}
	}

	if limit <= 0 || limit > len(touched) {
		limit = len(touched)
	}
	// A min-heap on better of the best limit hits: its root is the worst one kept.
	h := make([]Hit, 0, limit)
	for _, d := range touched {
		s := float64(scores[d])
		if s <= 0 {
			continue
		}
		hit := Hit{Index: int(d), Score: s, KeyMatch: keyMatch[d]}
		if len(h) < limit {
			h = append(h, hit)
			siftUp(h, len(h)-1)
		} else if better(hit, h[0]) {
			h[0] = hit
			siftDown(h, 0)
		}
	}
	if len(h) == 0 {
		return nil
	}
	// Pop the worst to the end, one by one: h ends sorted best first, in place.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		siftDown(h[:end], 0)
	}
	return h
}

type queryTerm struct {
	id int32
	w  float64
}

// queryTerms maps a query's words to term ids with their query weights: the word
// itself (1), its meanings in the lexicon (synonymWeight) and, for long words,
// dictionary terms it is a prefix of (prefixWeight). A term reached several ways
// keeps its best weight. The query's code words (CodeWords) are looked up whole,
// with codeWeight. Terms come in id order, so that scores are summed in the
// same order every time (float addition is not associative).
func (ix *Index) queryTerms(words, code []string) []queryTerm {
	q := make(map[int32]float64)
	put := func(t string, w float64) {
		if id, ok := ix.dict[t]; ok && q[id] < w {
			q[id] = w
		}
	}
	for _, w := range words {
		if IsStopWord(w) {
			continue
		}
		t := stem(w)
		put(t, 1)
		for _, s := range theLexicon().expand(w) {
			for _, tok := range Tokens(s) {
				if !IsStopWord(tok) {
					put(stem(tok), synonymWeight)
				}
			}
		}
		if len(t) >= minPrefixLen {
			i := sort.SearchStrings(ix.terms, t)
			for n := 0; i < len(ix.terms) && n < maxPrefixTerms && strings.HasPrefix(ix.terms[i], t); i, n = i+1, n+1 {
				if id := ix.termIDs[i]; q[id] < prefixWeight {
					q[id] = prefixWeight
				}
			}
		}
	}
	for _, w := range code {
		put(codeMarker+w, codeWeight)
	}
	out := make([]queryTerm, 0, len(q))
	for id, w := range q {
		out = append(out, queryTerm{id, w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// rawWords splits a query on white space and the punctuation that surrounds words
// in prose, keeping the characters identifiers are made of (- _ . and letters).
func rawWords(q string) []string {
	f := strings.FieldsFunc(q, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\'', '’', '"', '?', '!', ',', ';', ':', '(', ')', '[', ']', '{', '}', '<', '>', '@', '`', '«', '»', '/', '\\', '|', '*', '=', '+':
			return true
		}
		return false
	})
	out := f[:0]
	for _, w := range f {
		if w = strings.Trim(w, ".-_"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func hasUpperInside(w string) bool {
	for i, r := range w {
		if i > 0 && r >= 'A' && r <= 'Z' {
			return true
		}
	}
	return false
}

// better orders hits: higher score first, then the node that comes first.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Index < b.Index
}

// siftUp and siftDown keep h a min-heap on better (the root is the worst hit).
// They are written out rather than taken from container/heap, whose interface
// boxes every pushed and popped Hit: one allocation per hit, per query.
func siftUp(h []Hit, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !better(h[parent], h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func siftDown(h []Hit, i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
