package arangotest

import (
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// ArangoSearch in the fake: analyzers (/_api/analyzer), Views (/_api/view) and the
// text search query of package arango. The fake does not analyse text the way
// ArangoDB does; it checks that what package arango creates is well formed and
// refers to what exists, and ranks nodes by a plain word match (lowercased words
// split on anything but letters and digits, a final "s" dropped) with the query's
// boosts, which is enough to tell which nodes a search returns and in which order.

// builtinAnalyzers exist in every ArangoDB database.
var builtinAnalyzers = []string{"identity", "text_en", "text_fr", "text_de", "text_es", "text_it", "text_nl", "text_no", "text_pt", "text_ru", "text_sv", "text_fi", "text_zh"}

var nameRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`)

// Analyzers returns the names of the analyzers created in the fake, sorted.
func (s *Server) Analyzers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.analyzers))
	for n := range s.analyzers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// View returns a copy of a View's properties (name, type, links), or nil.
func (s *Server) View(name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[name]
	if !ok {
		return nil
	}
	return clone(v)
}

// DropView removes a View, as another client would.
func (s *Server) DropView(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.views, name)
}

// SetView stores View properties as they are (for a View set up by someone else,
// or wrongly).
func (s *Server) SetView(name string, props map[string]any) {
	p := clone(props)
	p["name"] = name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views[name] = p
}

// SetAnalyzer stores an analyzer definition as it is (one made by someone else).
func (s *Server) SetAnalyzer(name string, def map[string]any) {
	d := clone(def)
	d["name"] = name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.analyzers[name] = d
}

// Calls returns the requests made to the analyzer and View APIs so far, as
// "METHOD /path", in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func (s *Server) logCall(r *http.Request, rest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, r.Method+" /"+rest)
}

func decodeBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
		arangoErr(w, 400, 600, "malformed JSON body")
		return nil, false
	}
	return body, true
}

// serveAnalyzer answers /_api/analyzer[/name].
func (s *Server) serveAnalyzer(w http.ResponseWriter, r *http.Request, rest string) {
	s.logCall(r, rest)
	name := strings.TrimPrefix(strings.TrimPrefix(rest, "_api/analyzer"), "/")
	switch {
	case name == "" && r.Method == http.MethodPost:
		body, ok := decodeBody(w, r)
		if !ok {
			return
		}
		n, _ := body["name"].(string)
		if !nameRe.MatchString(n) {
			arangoErr(w, 400, 10, "invalid characters in analyzer name")
			return
		}
		if msg := checkAnalyzer(body); msg != "" {
			arangoErr(w, 400, 10, msg)
			return
		}
		s.mu.Lock()
		old, exists := s.analyzers[n]
		if !exists {
			s.analyzers[n] = clone(body)
		}
		s.mu.Unlock()
		if exists {
			if !sameJSON(old, body) {
				arangoErr(w, 400, 10, "Name collision detected while registering an ArangoSearch analyzer name '"+n+"'")
				return
			}
			writeJSON(w, 200, withOK(old, 200))
			return
		}
		writeJSON(w, 201, withOK(body, 201))
	case name != "" && r.Method == http.MethodGet:
		s.mu.Lock()
		a, ok := s.analyzers[name]
		s.mu.Unlock()
		if !ok && !slices.Contains(builtinAnalyzers, name) {
			arangoErr(w, 404, 1202, "analyzer not found")
			return
		}
		if !ok {
			a = map[string]any{"name": name, "type": "text"}
		}
		writeJSON(w, 200, withOK(a, 200))
	default:
		arangoErr(w, 405, 405, "method not allowed")
	}
}

// checkAnalyzer checks a definition the way ArangoDB refuses bad ones: a known
// type, a pipeline of known members, known features.
func checkAnalyzer(def map[string]any) string {
	known := []string{"identity", "delimiter", "multi_delimiter", "stem", "norm", "ngram", "text", "aql", "pipeline", "stopwords", "segmentation", "collation"}
	typ, _ := def["type"].(string)
	if !slices.Contains(known, typ) {
		return "unknown analyzer type '" + typ + "'"
	}
	if f, ok := def["features"]; ok {
		fs, _ := f.([]any)
		for _, x := range fs {
			if !slices.Contains([]any{"frequency", "norm", "position", "offset"}, x) {
				return "unknown analyzer feature"
			}
		}
	}
	if typ == "pipeline" {
		props, _ := def["properties"].(map[string]any)
		members, _ := props["pipeline"].([]any)
		if len(members) == 0 {
			return "a pipeline analyzer needs a non-empty 'pipeline' array"
		}
		for _, m := range members {
			mm, _ := m.(map[string]any)
			mt, _ := mm["type"].(string)
			if mt == "pipeline" || !slices.Contains(known, mt) {
				return "pipeline member of unusable type '" + mt + "'"
			}
		}
	}
	return ""
}

func withOK(doc map[string]any, code int) map[string]any {
	out := clone(doc)
	out["error"], out["code"] = false, code
	return out
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a) // map keys are sorted: equal values give equal bytes
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// serveView answers /_api/view[/name[/properties]].
func (s *Server) serveView(w http.ResponseWriter, r *http.Request, rest string) {
	s.logCall(r, rest)
	parts := strings.Split(strings.Trim(strings.TrimPrefix(rest, "_api/view"), "/"), "/")
	if parts[0] == "" {
		parts = nil
	}
	switch {
	case len(parts) == 0 && r.Method == http.MethodPost:
		body, ok := decodeBody(w, r)
		if !ok {
			return
		}
		n, _ := body["name"].(string)
		if !nameRe.MatchString(n) {
			arangoErr(w, 400, 1208, "illegal name")
			return
		}
		if t, _ := body["type"].(string); t != "arangosearch" && t != "search-alias" {
			arangoErr(w, 400, 10, "invalid view type")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, exists := s.views[n]; exists {
			arangoErr(w, 409, 1207, "duplicate name")
			return
		}
		if msg := s.checkLinks(body["links"]); msg != "" {
			arangoErr(w, 400, 10, msg)
			return
		}
		s.views[n] = map[string]any{"name": n, "type": body["type"], "links": orEmpty(body["links"])}
		writeJSON(w, 201, withOK(s.views[n], 201))
	case len(parts) >= 1 && len(parts) <= 2:
		s.mu.Lock()
		defer s.mu.Unlock()
		v, ok := s.views[parts[0]]
		if !ok {
			arangoErr(w, 404, 1203, "collection or view not found")
			return
		}
		switch {
		case r.Method == http.MethodGet && len(parts) == 1:
			writeJSON(w, 200, map[string]any{"error": false, "code": 200, "name": v["name"], "type": v["type"], "id": "1"})
		case r.Method == http.MethodGet && parts[1] == "properties":
			writeJSON(w, 200, withOK(v, 200))
		case (r.Method == http.MethodPatch || r.Method == http.MethodPut) && parts[1] == "properties":
			body, ok := decodeBody(w, r)
			if !ok {
				return
			}
			if msg := s.checkLinks(body["links"]); msg != "" {
				arangoErr(w, 400, 10, msg)
				return
			}
			links := orEmpty(body["links"])
			if r.Method == http.MethodPatch {
				merged := orEmpty(v["links"])
				for c, l := range links {
					merged[c] = l
				}
				links = merged
			}
			v["links"] = links
			writeJSON(w, 200, withOK(v, 200))
		default:
			arangoErr(w, 405, 405, "method not allowed")
		}
	default:
		arangoErr(w, 405, 405, "method not allowed")
	}
}

func orEmpty(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return clone(m)
}

// checkLinks refuses links to unknown collections or with unknown analyzers. The
// caller holds s.mu.
func (s *Server) checkLinks(v any) string {
	links, _ := v.(map[string]any)
	for coll, l := range links {
		if _, ok := s.colls[coll]; !ok {
			return "collection '" + coll + "' not found"
		}
		lm, _ := l.(map[string]any)
		fields, _ := lm["fields"].(map[string]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			ans, _ := fm["analyzers"].([]any)
			for _, a := range ans {
				name, _ := a.(string)
				if _, ok := s.analyzers[name]; !ok && !slices.Contains(builtinAnalyzers, name) {
					return "analyzer '" + name + "' not found"
				}
			}
		}
	}
	return ""
}

// textSearch answers the text search query: nodes of graph gk whose key, type or
// code share a word with @q (weights 5, 2, 1) or @alt (3, 1.2, 0.6), or whose
// type is in @types (2), best first, then by _key. It fails as ArangoDB does when
// the View or its analyzers are missing. The caller holds s.mu.
func (s *Server) textSearch(b map[string]any) ([]any, int, int, string) {
	view, ok := s.views["nodius_nodes_search"]
	if !ok {
		return nil, 404, 1203, "collection or view not found: nodius_nodes_search"
	}
	if _, linked := orEmpty(view["links"])[Nodes]; !linked {
		return []any{}, 0, 0, "" // a View without the link finds nothing
	}
	for _, a := range []string{"nodius_text_en", "nodius_text_fr"} {
		if _, ok := s.analyzers[a]; !ok {
			return nil, 400, 1541, "analyzer '" + a + "' not found"
		}
	}
	gk, _ := b["gk"].(string)
	q, _ := b["q"].(string)
	alt, _ := b["alt"].(string)
	limit := int(b["limit"].(float64))
	var types []string
	for _, t := range b["types"].([]any) {
		types = append(types, t.(string))
	}
	qw, aw := fakeWords(q), fakeWords(alt)
	type hit struct {
		n     map[string]any
		score float64
	}
	var hits []hit
	for _, n := range s.stored(Nodes, func(d map[string]any) bool { return d["graphKey"] == gk }) {
		key, _ := n["_key"].(string)
		typ, _ := n["type"].(string)
		proc, _ := n["process"].(string)
		fields := []struct {
			words  []string
			w, alt float64
		}{{fakeWords(key), 5, 3}, {fakeWords(typ), 2, 1.2}, {fakeWords(proc), 1, 0.6}}
		score := 0.0
		for _, f := range fields {
			for _, w := range f.words {
				if slices.Contains(qw, w) {
					score += f.w
				} else if slices.Contains(aw, w) {
					score += f.alt
				}
			}
		}
		if slices.Contains(types, typ) {
			score += 2
		}
		if score > 0 {
			hits = append(hits, hit{n, math.Round(score*1000) / 1000})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := []any{}
	for _, h := range hits[:min(len(hits), limit)] {
		out = append(out, map[string]any{"node": clone(h.n), "score": h.score})
	}
	return out, 0, 0, ""
}

// fakeWords is the fake's analyzer: lowercase words of letters and digits, a
// final "s" dropped from words longer than three letters.
func fakeWords(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range f {
		if len(w) > 3 && strings.HasSuffix(w, "s") {
			f[i] = strings.TrimSuffix(w, "s")
		}
	}
	return f
}
