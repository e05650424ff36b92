package llmtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"unicode"
)

// Vector is the fake embedding of text: a hashed bag of words (identifiers split at
// case changes, dashes and underscores), L2-normalised, so texts sharing words are
// close in cosine similarity and identical texts are identical vectors.
func Vector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = 64
	}
	counts := map[string]float64{}
	for _, w := range Words(text) {
		counts[w]++
	}
	return HashVector(counts, dim)
}

// HashVector is the unit vector of weighted features, each hashed (FNV-64a) to one
// of dim components with a sign; all zero when there is none. Features are added
// in sorted order: float addition depends on its order and a map's changes from
// run to run, so this keeps the same weights giving the same bits by construction
// (the float32 rounding hides most such differences, not all).
func HashVector(weights map[string]float64, dim int) []float32 {
	feats := make([]string, 0, len(weights))
	for f := range weights {
		feats = append(feats, f)
	}
	sort.Strings(feats)
	v := make([]float64, dim)
	for _, f := range feats {
		h := fnv.New64a()
		_, _ = h.Write([]byte(f))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dim)] += sign * weights[f]
	}
	var norm float64
	for _, f := range v {
		norm += f * f
	}
	out := make([]float32, dim)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, f := range v {
		out[i] = float32(f / norm)
	}
	return out
}

// Words splits text into lower-case words, breaking identifiers (fetchApi, fetch-api,
// fetch_api all give "fetch", "api").
func Words(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return words
}

func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
		http.Error(w, `{"error":{"message":"input must be a string or an array of strings","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.take(Request{Path: r.URL.Path, Protocol: "embeddings", Auth: authPresent(r), Header: r.Header.Clone(), Body: body, Model: req.Model, Input: inputs})
	s.mu.Lock()
	dim, embed := s.script.EmbeddingDim, s.embed
	s.mu.Unlock()
	if embed == nil {
		embed = func(text string) []float32 { return Vector(text, dim) }
	}

	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vec := embed(in)
		tokens += len(Words(in))
		var emb any = vec
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// SetEmbed makes /v1/embeddings answer f(text) instead of Vector: a test can stand in
// for a real embedding model with a function of its own (one where paraphrases land
// close, for instance). nil restores Vector.
func (s *Server) SetEmbed(f func(text string) []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embed = f
}
