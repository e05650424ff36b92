package search

// The index build as it was before it was made cheaper per token, kept as the
// oracle TestBuildMatchesOracle compares the build with: the faster build must give
// exactly this index (every term, its id, postings, weights and key maps).

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/nodius/nodius-ai/datasource"
)

func oracleBuildShards(nodes []datasource.Node, configs []datasource.NodeConfig, edges []datasource.Edge, sheets map[string]string, n int) *Index {
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
	shared := oracleShared{edgeText: edgeText, sheetTerms: map[string]oracleFieldText{}, cfgs: make(map[string]oracleCfgText, len(configs))}
	for id, name := range sheets {
		shared.sheetTerms[id] = st.oracleFieldTerms(name)
	}
	for _, c := range configs {
		shared.cfgs[c.Key] = oracleCfgText{name: st.oracleFieldTerms(c.DisplayName), desc: st.oracleFieldTerms(c.Description + " " + c.Category)}
	}
	ix := &Index{n: len(nodes)}
	lens := make([][numFields]uint16, len(nodes))

	shards := make([]*oracleShard, n)
	var wg sync.WaitGroup
	for k := range shards {
		lo, hi := k*len(nodes)/n, (k+1)*len(nodes)/n
		shards[k] = newOracleShard(len(nodes) / n)
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

type oracleCfgText struct{ name, desc oracleFieldText }

// oracleFieldText is what a field's text gives the index: its terms (split, stemmed),
// which make the field's length, and the whole code words beside them, which do
// not (so adding them changes no plain term's score).
type oracleFieldText struct{ terms, code []string }

// fieldTerms analyses s as every field is analysed.
func (st stemmer) oracleFieldTerms(s string) oracleFieldText {
	return oracleFieldText{terms: st.terms(s, nil), code: codeMemo(nil).terms(s, nil)}
}

// shared is what every shard reads: edge labels by node, sheet and config terms.
type oracleShared struct {
	edgeText   map[string][]string
	sheetTerms map[string]oracleFieldText
	cfgs       map[string]oracleCfgText
}

// shard indexes a run of nodes: its own term ids (in the order first met), raw
// postings by id, key maps and field lengths.
type oracleShard struct {
	st         stemmer
	codes      codeMemo
	dict       map[string]int32
	terms      []string // by local id
	raw        [][]rawPosting
	keyIndex   map[string][]int32
	keyPhrases map[string][]int32
	sumLen     [numFields]float64
	typeTerms  map[string]oracleFieldText

	// Per-document term counts: slot[id] indexes counts, reset for every node
	// (a map to small arrays, not pointers, to keep allocations per node constant).
	slot   map[int32]int32
	counts [][numFields]uint8
	order  []int32
}

func newOracleShard(nodes int) *oracleShard {
	return &oracleShard{
		st: stemmer{}, codes: codeMemo{}, dict: make(map[string]int32), keyIndex: make(map[string][]int32, nodes),
		keyPhrases: make(map[string][]int32), typeTerms: make(map[string]oracleFieldText), slot: make(map[int32]int32, 64),
	}
}

// add counts terms in field f of doc and sets the field's length; code are the
// field's whole code words, counted beside them but not in the length.
func (sh *oracleShard) add(lens [][numFields]uint16, doc int32, f int, terms, code []string) {
	sh.count(f, terms)
	sh.count(f, code)
	n := len(terms)
	if n > math.MaxUint16 {
		n = math.MaxUint16
	}
	lens[doc][f] = uint16(n)
	sh.sumLen[f] += float64(n)
}

// count adds one to the current document's count of each term in field f.
func (sh *oracleShard) count(f int, terms []string) {
	for _, t := range terms {
		id, ok := sh.dict[t]
		if !ok {
			id = int32(len(sh.raw))
			sh.dict[t] = id
			sh.terms = append(sh.terms, t)
			sh.raw = append(sh.raw, nil)
		}
		j, ok := sh.slot[id]
		if !ok {
			j = int32(len(sh.counts))
			sh.slot[id] = j
			sh.counts = append(sh.counts, [numFields]uint8{})
			sh.order = append(sh.order, id)
		}
		if sh.counts[j][f] < math.MaxUint8 {
			sh.counts[j][f]++
		}
	}
}

// read indexes nodes[lo:hi].
func (sh *oracleShard) read(nodes []datasource.Node, lo, hi int, sh2 *oracleShared, lens [][numFields]uint16) {
	st := sh.st
	buf, code := make([]string, 0, 64), make([]string, 0, 16)
	var doc int32
	// text analyses one field of doc: its terms and its whole code words.
	text := func(f int, s string) {
		buf, code = st.terms(s, buf[:0]), sh.codes.terms(s, code[:0])
		sh.add(lens, doc, f, buf, code)
	}
	for i := lo; i < hi; i++ {
		nd := &nodes[i]
		doc = int32(i)
		clear(sh.slot)
		sh.counts = sh.counts[:0]
		sh.order = sh.order[:0]

		buf, code = st.terms(nd.Key, buf[:0]), keyCodeTerms(nd.Key, code[:0])
		sh.add(lens, doc, fieldKey, buf, code)
		tt, ok := sh.typeTerms[nd.Type]
		if !ok {
			tt = st.oracleFieldTerms(nd.Type)
			sh.typeTerms[nd.Type] = tt
		}
		sh.add(lens, doc, fieldType, tt.terms, tt.code)
		if c, ok := sh2.cfgs[nd.Type]; ok {
			sh.add(lens, doc, fieldTypeName, c.name.terms, c.name.code)
			sh.add(lens, doc, fieldDesc, c.desc.terms, c.desc.code)
		}
		text(fieldProcess, nd.Process)
		if nd.Data != nil {
			if b, err := json.Marshal(nd.Data); err == nil && string(b) != "null" {
				text(fieldData, string(b))
			}
		}
		if labels := sh2.edgeText[nd.Key]; len(labels) > 0 {
			buf, code = buf[:0], code[:0]
			for _, l := range labels {
				buf, code = st.terms(l, buf), sh.codes.terms(l, code)
			}
			sh.add(lens, doc, fieldEdge, buf, code)
		}
		if t := sh2.sheetTerms[nd.Sheet]; len(t.terms) > 0 || len(t.code) > 0 {
			sh.add(lens, doc, fieldSheet, t.terms, t.code)
		}
		for j, id := range sh.order {
			sh.raw[id] = append(sh.raw[id], rawPosting{doc: doc, tf: sh.counts[j]})
		}

		lk := strings.ToLower(nd.Key)
		sh.keyIndex[lk] = append(sh.keyIndex[lk], doc)
		if words := Tokens(nd.Key); len(words) > 0 && len(words) <= maxKeyNgram {
			p := strings.Join(words, " ")
			sh.keyPhrases[p] = append(sh.keyPhrases[p], doc)
		}
	}
}
