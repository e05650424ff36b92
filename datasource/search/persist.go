package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// indexFormat numbers the encoding of Encode; Decode refuses any other, so a cache
// written by another version of the program is rebuilt rather than misread. It must
// change whenever the analysis (tokens, stems, lexicon, fields, weights) changes,
// since a decoded index is only as good as the analysis it was built with.
const indexFormat = 3

// Encode writes the index in a compact binary form that Decode reads back, so an
// index built once can be kept on disk and reused by the next process.
func (ix *Index) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf [binary.MaxVarintLen64]byte
	u := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	str := func(s string) { u(uint64(len(s))); bw.WriteString(s) }
	u(indexFormat)
	u(uint64(ix.n))
	u(uint64(len(ix.terms)))
	for i, t := range ix.terms {
		str(t)
		u(uint64(ix.termIDs[i]))
	}
	u(uint64(len(ix.postings)))
	for id, ps := range ix.postings {
		u(uint64(math.Float32bits(ix.idf[id])))
		u(uint64(len(ps)))
		prev := int32(0)
		for _, p := range ps {
			u(uint64(p.doc - prev)) // docs ascend: store the gaps
			prev = p.doc
			u(uint64(math.Float32bits(p.w)))
		}
	}
	u(uint64(len(ix.keys)))
	for i, k := range ix.keys {
		str(k)
		u(uint64(len(ix.keyDocs[i])))
		for _, d := range ix.keyDocs[i] {
			u(uint64(d))
		}
	}
	phrases := make([]string, 0, len(ix.keyPhrases))
	for p := range ix.keyPhrases {
		phrases = append(phrases, p)
	}
	sort.Strings(phrases)
	u(uint64(len(phrases)))
	for _, p := range phrases {
		str(p)
		docs := ix.keyPhrases[p]
		u(uint64(len(docs)))
		for _, d := range docs {
			u(uint64(d))
		}
	}
	return bw.Flush()
}

// ErrFormat says an encoded index was written by another version of the program.
var ErrFormat = errors.New("search index written in another format")

// Decode reads an index written by Encode.
func Decode(data []byte) (*Index, error) {
	var err error
	pos := 0
	u := func() uint64 {
		if err != nil {
			return 0
		}
		v, n := binary.Uvarint(data[pos:])
		if n <= 0 {
			err = io.ErrUnexpectedEOF
			return 0
		}
		pos += n
		return v
	}
	// count reads a length and refuses one no sane index has, so a corrupt file
	// cannot make Decode allocate without bound.
	count := func(limit uint64) int {
		v := u()
		if err == nil && v > limit {
			err = fmt.Errorf("corrupt search index: length %d", v)
		}
		return int(v)
	}
	str := func() string {
		n := count(1 << 24)
		if err != nil {
			return ""
		}
		if n > len(data)-pos {
			err = io.ErrUnexpectedEOF
			return ""
		}
		s := string(data[pos : pos+n])
		pos += n
		return s
	}
	if f := u(); err == nil && f != indexFormat {
		return nil, ErrFormat
	}
	const maxLen = 1 << 31
	ix := &Index{n: count(maxLen)}
	nt := count(maxLen)
	ix.terms = make([]string, 0, nt)
	ix.termIDs = make([]int32, 0, nt)
	for i := 0; i < nt && err == nil; i++ {
		ix.terms = append(ix.terms, str())
		ix.termIDs = append(ix.termIDs, int32(u()))
	}
	np := count(maxLen)
	if err == nil && np != nt {
		err = errors.New("corrupt search index: term count")
	}
	ix.postings = make([][]posting, 0, np)
	ix.idf = make([]float32, 0, np)
	for i := 0; i < np && err == nil; i++ {
		ix.idf = append(ix.idf, math.Float32frombits(uint32(u())))
		m := count(uint64(ix.n))
		ps := make([]posting, 0, m)
		doc := int32(0)
		for j := 0; j < m && err == nil; j++ {
			doc += int32(u())
			ps = append(ps, posting{doc: doc, w: math.Float32frombits(uint32(u()))})
		}
		ix.postings = append(ix.postings, ps)
	}
	nk := count(maxLen)
	ix.keys = make([]string, 0, nk)
	ix.keyDocs = make([][]int32, 0, nk)
	for i := 0; i < nk && err == nil; i++ {
		ix.keys = append(ix.keys, str())
		m := count(uint64(ix.n))
		docs := make([]int32, 0, m)
		for j := 0; j < m && err == nil; j++ {
			docs = append(docs, int32(u()))
		}
		ix.keyDocs = append(ix.keyDocs, docs)
	}
	nph := count(maxLen)
	ix.keyPhrases = make(map[string][]int32, nph)
	for i := 0; i < nph && err == nil; i++ {
		p := str()
		m := count(uint64(ix.n))
		docs := make([]int32, 0, m)
		for j := 0; j < m && err == nil; j++ {
			docs = append(docs, int32(u()))
		}
		ix.keyPhrases[p] = docs
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read search index: %w", err)
	}
	ix.dict = make(map[string]int32, len(ix.terms))
	for i, t := range ix.terms {
		id := ix.termIDs[i]
		if id < 0 || int(id) >= len(ix.postings) {
			return nil, errors.New("corrupt search index: term id")
		}
		ix.dict[t] = id
	}
	for _, ps := range ix.postings {
		for _, p := range ps {
			if p.doc < 0 || int(p.doc) >= ix.n {
				return nil, errors.New("corrupt search index: document")
			}
		}
	}
	for _, docs := range ix.keyDocs {
		for _, d := range docs {
			if d < 0 || int(d) >= ix.n {
				return nil, errors.New("corrupt search index: document")
			}
		}
	}
	for _, docs := range ix.keyPhrases {
		for _, d := range docs {
			if d < 0 || int(d) >= ix.n {
				return nil, errors.New("corrupt search index: document")
			}
		}
	}
	ix.scratch.New = func() any { return &queryScratch{scores: make([]float32, ix.n)} }
	return ix, nil
}
