package arangotest

import (
	"encoding/json"
	"fmt"
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
		if msg := s.checkFields(lm); msg != "" {
			return msg
		}
	}
	return ""
}

// checkFields refuses unknown analyzers in a link or a field, and in the fields
// below it. The caller holds s.mu.
func (s *Server) checkFields(level map[string]any) string {
	ans, _ := level["analyzers"].([]any)
	for _, a := range ans {
		name, _ := a.(string)
		if _, ok := s.analyzers[name]; !ok && !slices.Contains(builtinAnalyzers, name) {
			return "analyzer '" + name + "' not found"
		}
	}
	fields, _ := level["fields"].(map[string]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if msg := s.checkFields(fm); msg != "" {
			return msg
		}
	}
	return ""
}

// textSearch answers the text search query of package arango, in its three parts.
//
// Nodes of graph gk score for each word of @q found in their key, type and code
// (weights 1.77, 1.38, 1) and in the data fields bound to @d0…@d15 (0.81); a word
// of @alt scores 0.6 of that; a type in @types scores 1.38 and a sheet in @sheets
// 0.65. Edges of gk score 0.65 per word of their label (0.6 of it for @alt), and
// credit both their ends. Node types of workspace @ws or "root" score 1 per word of their
// code (node.process; 0.6 for @alt), and the best @limit credit the nodes of gk
// of their type (at most @limit nodes, best type first, then by _key). The three are summed per node, best first, then by _key.
// The weights are the query's own (its signature holds them).
//
// Like a View, it finds a field only when the View's link indexes it with the
// analyzer the query names (a View of an older setup finds nothing in data, sheets
// or edge labels), it fails when the View or its analyzers are missing, and it
// refuses bind variables of the wrong type. The caller holds s.mu.
func (s *Server) textSearch(b map[string]any) ([]any, int, int, string) {
	view, ok := s.views["nodius_nodes_search"]
	if !ok {
		return nil, 404, 1203, "collection or view not found: nodius_nodes_search"
	}
	for _, a := range []string{"nodius_text_en", "nodius_text_fr"} {
		if _, ok := s.analyzers[a]; !ok {
			return nil, 400, 1541, "analyzer '" + a + "' not found"
		}
	}
	gk, ok1 := b["gk"].(string)
	q, ok2 := b["q"].(string)
	alt, ok3 := b["alt"].(string)
	lim, ok4 := b["limit"].(float64)
	types, ok5 := strings_(b["types"])
	sheets, ok6 := strings_(b["sheets"])
	ws, ok7 := b["ws"].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 {
		return nil, 400, 1553, "bind parameter of the wrong type"
	}
	limit := int(lim)
	var paths [][]string
	for i := range 16 {
		p, ok := strings_(b[fmt.Sprintf("d%d", i)])
		if !ok || len(p) == 0 {
			return nil, 400, 1553, "attribute name bind parameter d" + fmt.Sprint(i) + " must be a string or an array of strings"
		}
		paths = append(paths, p)
	}
	links := orEmpty(view["links"])
	nodeLink, _ := links[Nodes].(map[string]any)
	edgeLink, _ := links[Edges].(map[string]any)
	configLink, _ := links[Configs].(map[string]any)
	qw, aw := fakeWords(q), fakeWords(alt)

	// words scores the words of the values at path in doc, when the link indexes
	// that path with a text analyzer: w per word of @q, w*0.6 per word of @alt.
	words := func(link, doc map[string]any, path []string, w float64) float64 {
		if !indexedWith(link, path, "nodius_text_en") {
			return 0
		}
		score := 0.0
		for _, v := range valuesAt(doc, path) {
			for _, x := range fakeWords(v) {
				if slices.Contains(qw, x) {
					score += w
				} else if slices.Contains(aw, x) {
					score += w * 0.6
				}
			}
		}
		return score
	}
	// exact scores w when the value at path is one of vals, indexed unanalysed.
	exact := func(link, doc map[string]any, path []string, vals []string, w float64) float64 {
		if !indexedWith(link, path, "identity") {
			return 0
		}
		for _, v := range valuesAt(doc, path) {
			if slices.Contains(vals, v) {
				return w
			}
		}
		return 0
	}
	type hit struct {
		id, key string
		score   float64
	}
	best := func(hits []hit) []hit {
		sort.SliceStable(hits, func(i, j int) bool {
			if hits[i].score != hits[j].score {
				return hits[i].score > hits[j].score
			}
			return hits[i].key < hits[j].key
		})
		return hits[:min(len(hits), limit)]
	}
	var nodeHits []hit
	if nodeLink != nil {
		for _, n := range s.stored(Nodes, func(d map[string]any) bool { return d["graphKey"] == gk }) {
			if !indexedWith(nodeLink, []string{"graphKey"}, "identity") {
				break
			}
			score := words(nodeLink, n, []string{"_key"}, 1.77) + words(nodeLink, n, []string{"type"}, 1.38) + words(nodeLink, n, []string{"process"}, 1)
			for _, p := range paths {
				score += words(nodeLink, n, p, 0.81)
			}
			score += exact(nodeLink, n, []string{"type"}, types, 1.38) + exact(nodeLink, n, []string{"sheet"}, sheets, 0.65)
			if score > 0 {
				nodeHits = append(nodeHits, hit{n["_id"].(string), n["_key"].(string), score})
			}
		}
	}
	var edgeHits []hit
	if edgeLink != nil && indexedWith(edgeLink, []string{"graphKey"}, "identity") {
		for _, e := range s.stored(Edges, func(d map[string]any) bool { return d["graphKey"] == gk }) {
			if score := words(edgeLink, e, []string{"label"}, 0.65); score > 0 {
				edgeHits = append(edgeHits, hit{e["_key"].(string), e["_key"].(string), score})
			}
		}
	}
	// Node types of ws score by the words of their code (node.process); the best
	// limit of them credit the graph's nodes of their type, at most limit nodes
	// in all, best type first, then by _key.
	var typeNodeHits []hit
	if configLink != nil && indexedWith(configLink, []string{"workspace"}, "identity") {
		var typeHits []hit
		for _, c := range s.stored(Configs, func(d map[string]any) bool { return d["workspace"] == ws || d["workspace"] == "root" }) {
			if score := words(configLink, c, []string{"node", "process"}, 1); score > 0 {
				typeHits = append(typeHits, hit{c["_key"].(string), c["_key"].(string), score})
			}
		}
		if nodeLink != nil && indexedWith(nodeLink, []string{"graphKey"}, "identity") && indexedWith(nodeLink, []string{"type"}, "identity") {
			scores := map[string]float64{}
			for _, t := range best(typeHits) {
				scores[t.key] = t.score
			}
			for _, n := range s.stored(Nodes, func(d map[string]any) bool { return d["graphKey"] == gk }) {
				if typ, _ := n["type"].(string); scores[typ] > 0 {
					typeNodeHits = append(typeNodeHits, hit{n["_id"].(string), n["_key"].(string), scores[typ]})
				}
			}
			typeNodeHits = best(typeNodeHits)
		}
	}
	sum := map[string]float64{}
	for _, h := range best(nodeHits) {
		sum[h.id] += h.score
	}
	for _, h := range typeNodeHits {
		sum[h.id] += h.score
	}
	for _, h := range best(edgeHits) {
		e := s.colls[Edges][h.id]
		from, _ := e["_from"].(string)
		to, _ := e["_to"].(string)
		sum[from] += h.score
		if to != from {
			sum[to] += h.score
		}
	}
	var found []hit
	for id, score := range sum {
		key, isNode := strings.CutPrefix(id, Nodes+"/")
		n, ok := s.colls[Nodes][key]
		if isNode && ok && n["graphKey"] == gk { // DOCUMENT(id), same collection, same graph
			found = append(found, hit{id, key, score})
		}
	}
	out := []any{}
	for _, h := range best(found) {
		out = append(out, map[string]any{"node": clone(s.colls[Nodes][h.key]), "score": math.Round(h.score*1000) / 1000})
	}
	return out, 0, 0, ""
}

// strings_ reads a bind variable that must be an array of strings (or one string,
// as an attribute path may be).
func strings_(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// indexedWith reports whether a View link indexes the attribute at path with the
// analyzer, following ArangoSearch's rules: a field listed under "fields" takes
// its own analyzers or inherits its parent's, and so does includeAllFields (also
// inherited); the link itself defaults to ["identity"].
func indexedWith(link map[string]any, path []string, analyzer string) bool {
	analyzers := []any{"identity"}
	if a, ok := link["analyzers"].([]any); ok {
		analyzers = a
	}
	all, _ := link["includeAllFields"].(bool)
	level := link
	for _, p := range path {
		fields, _ := level["fields"].(map[string]any)
		f, listed := fields[p].(map[string]any)
		switch {
		case listed:
			if a, ok := f["analyzers"].([]any); ok {
				analyzers = a
			}
			if v, ok := f["includeAllFields"].(bool); ok {
				all = v
			}
			level = f
		case all:
			level = map[string]any{}
		default:
			return false
		}
	}
	return slices.Contains(analyzers, any(analyzer))
}

// valuesAt returns the strings an index finds at path in doc: arrays are taken as
// their elements at every level (trackListPositions false), and numbers, booleans
// and objects are not text.
func valuesAt(doc map[string]any, path []string) []string {
	cur := []any{doc}
	for _, p := range path {
		var next []any
		for _, c := range cur {
			for _, o := range flatten(c) {
				if m, ok := o.(map[string]any); ok {
					if v, ok := m[p]; ok {
						next = append(next, v)
					}
				}
			}
		}
		cur = next
	}
	var out []string
	for _, c := range cur {
		for _, v := range flatten(c) {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func flatten(v any) []any {
	a, ok := v.([]any)
	if !ok {
		return []any{v}
	}
	var out []any
	for _, e := range a {
		out = append(out, flatten(e)...)
	}
	return out
}

// dataPaths answers the query for a graph's data paths: for each node of gk whose
// data is an object, each key whose value is a string or an array holding one, and
// each key one level down (in an object, or in the objects of an array) whose
// value is; counted once per node, most common first, then in AQL's order of
// arrays. The caller holds s.mu.
func (s *Server) dataPaths(gk string, max int) []any {
	hasText := func(v any) bool {
		if _, ok := v.(string); ok {
			return true
		}
		a, _ := v.([]any)
		for _, e := range a {
			if _, ok := e.(string); ok {
				return true
			}
		}
		return false
	}
	count := map[string]int{}
	paths := map[string][]string{}
	for _, n := range s.stored(Nodes, func(d map[string]any) bool { return d["graphKey"] == gk }) {
		data, ok := n["data"].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range data {
			var ps [][]string
			if hasText(v) {
				ps = append(ps, []string{k})
			}
			var objs []map[string]any
			switch x := v.(type) {
			case map[string]any:
				objs = append(objs, x)
			case []any:
				for _, e := range x {
					if o, ok := e.(map[string]any); ok {
						objs = append(objs, o)
					}
				}
			}
			for _, o := range objs {
				for k2, w := range o {
					if hasText(w) {
						ps = append(ps, []string{k, k2})
					}
				}
			}
			seen := map[string]bool{} // APPEND(…, true): each path once per key
			for _, p := range ps {
				id := strings.Join(p, "\x00")
				if !seen[id] {
					seen[id] = true
					count[id]++
					paths[id] = p
				}
			}
		}
	}
	ids := make([]string, 0, len(count))
	for id := range count {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if count[ids[i]] != count[ids[j]] {
			return count[ids[i]] > count[ids[j]]
		}
		return slices.Compare(paths[ids[i]], paths[ids[j]]) < 0
	})
	out := []any{}
	for _, id := range ids[:min(len(ids), max)] {
		out = append(out, anys(paths[id]))
	}
	return out
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
