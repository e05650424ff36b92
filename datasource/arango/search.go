package arango

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb/shared"
	"github.com/arangodb/go-driver/v2/connection"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Text search in ArangoDB.
//
// Without it, every text search reads all the nodes of the graph over the network
// and ranks them in this process. With it, ArangoDB ranks the nodes (BM25) and
// sends only the best few.
//
// Why an `arangosearch` View and not an inverted index behind a `search-alias`
// View: the View is linked to nodius_nodes from outside, so the collection the
// Nodius server owns gets no new index and nothing of its documents changes;
// dropping the View removes every trace. It also runs on every server that has
// pipeline analyzers (3.8+), where inverted indexes need 3.10. The ranking is the
// same (both are ArangoSearch, with BM25).
//
// What is indexed mirrors the in-process index (datasource/search), field by field
// and with its weights:
//
//   - on nodius_nodes: the key (its words, so fetch-api and fetch_api match "fetch
//     api"), the type, the process code (its identifiers and string literals) and
//     every text value of data (includeAllFields under data; numbers and booleans
//     are indexed as they are and never match a word). A search must name the
//     fields it looks in, so the graph's most common data paths are read first
//     (qDataPaths, on the server, kept a few minutes) and bound to the query;
//   - on nodius_edges, in the same View: the label. An edge that matches credits
//     both its ends, as the in-process index counts a node's edge labels as its own;
//   - the sheet id, unanalysed. Sheet names live in the graph document, read for
//     the workspace check anyway: the question is matched against them here
//     (search.MatchingSheets) and the sheets found are sent along, to be boosted;
//   - on nodius_node_config, in the same View: a node type's code (node.process),
//     for on Nodius's schema a node has no code, its type has. A type whose code
//     matches credits the graph's nodes of that type with its score, weighted as
//     a node's own code, so a node is found by its type's code as the in-process
//     index finds it (it reads each node's code from its type). The Nodius server
//     makes no View of its own (its search is a CONTAINS scan): nothing to share.
//
// Type display names, descriptions and categories live in nodius_node_config too,
// and are matched here against the question (search.MatchingTypes, with the
// lexicon and prefixes a View lacks); the types found are sent along. One View
// for the three collections: one setup, one check that it is ready, one thing to
// drop.
//
// Where it differs from the in-process ranking: data is searched in its text
// values at most two levels down and in the graph's maxDataPaths most common
// fields (the in-process index reads the whole of data, keys and numbers
// included); the analyzers stem with Snowball as the in-process index does, but
// tokenize with ICU, and BM25 is ArangoDB's (per field, summed) rather than BM25F.
// A code word the question writes whole (sms_replies, /hooks/claims/first-notice)
// is matched whole in process; here only where ICU keeps it in one piece
// (retryBackoffMs, d.claimNo), since the analyzers split on _, - and /.
//
// The View is created by `nodius-ai arango setup` (SetupSearch), never silently on
// first use: it changes a shared database and needs write rights there. When it is
// absent, TextSearch answers datasource.ErrNoTextIndex and the caller ranks in
// process; SearchReady lets a command say once how to turn it on.
const (
	// SearchView is the View's name.
	SearchView = "nodius_nodes_search"
	// AnalyzerEN and AnalyzerFR split identifiers on "_" (the text analyzer keeps
	// snake_case words whole), then lowercase, fold accents and stem in English or
	// French. Every searched field is analysed both ways.
	AnalyzerEN = "nodius_text_en"
	AnalyzerFR = "nodius_text_fr"
)

// field is what the View indexes of one attribute: its analyzers and, for data,
// every attribute below it; or, for an object of which only some attributes are
// indexed (a node type's node.process), those attributes.
type field struct {
	analyzers []string
	all       bool             // includeAllFields: every sub-attribute, with the same analyzers
	sub       map[string]field // the attributes below it that are indexed
}

// searchFields are the fields the View indexes, by linked collection.
func searchFields() map[string]map[string]field {
	text := []string{AnalyzerEN, AnalyzerFR}
	return map[string]map[string]field{
		collNodes: {
			"graphKey": {analyzers: []string{"identity"}}, // the graph filter
			"_key":     {analyzers: text},
			"type":     {analyzers: []string{"identity", AnalyzerEN, AnalyzerFR}}, // identity: the types a question names, and the nodes of a type
			"process":  {analyzers: text},                                         // code on the node itself (documents of the earlier format)
			"data":     {analyzers: text, all: true},
			"sheet":    {analyzers: []string{"identity"}}, // the sheets a question names
		},
		collEdges: {
			"graphKey": {analyzers: []string{"identity"}},
			"label":    {analyzers: text},
		},
		// On Nodius's schema a node has no code: it is its type's, node.process of
		// the type's document. The type's names stay matched in process
		// (search.MatchingTypes), with the lexicon and prefixes the View lacks.
		collConfigs: {
			"workspace": {analyzers: []string{"identity"}}, // the workspace filter
			"node":      {sub: map[string]field{"process": {analyzers: text}}},
		},
	}
}

// linkedCollections are the collections the View links, in the order the setup
// reports what it added.
var linkedCollections = []string{collNodes, collEdges, collConfigs}

// analyzerDef is the definition sent to /_api/analyzer: a pipeline that splits on
// "_" and then tokenizes, lowercases, folds accents and stems. Stop words are left
// in the index (the question is sent without them); BM25 needs frequency and norm,
// phrases need position.
func analyzerDef(name, locale string) map[string]any {
	return map[string]any{
		"name": name,
		"type": "pipeline",
		"properties": map[string]any{"pipeline": []any{
			map[string]any{"type": "delimiter", "properties": map[string]any{"delimiter": "_"}},
			map[string]any{"type": "text", "properties": map[string]any{
				"locale": locale, "case": "lower", "accent": false, "stemming": true, "stopwords": []string{}}},
		}},
		"features": []string{"frequency", "norm", "position"},
	}
}

// viewLinks are the View's links, one per indexed collection.
func viewLinks() map[string]any {
	links := map[string]any{}
	for coll, fs := range searchFields() {
		links[coll] = map[string]any{"includeAllFields": false, "storeValues": "none", "fields": fieldDefs(fs)}
	}
	return links
}

// fieldDefs is the "fields" member of a link or of a field.
func fieldDefs(fs map[string]field) map[string]any {
	out := map[string]any{}
	for name, f := range fs {
		def := map[string]any{}
		if len(f.analyzers) > 0 {
			def["analyzers"] = f.analyzers
		}
		if f.all {
			def["includeAllFields"] = true
		}
		if len(f.sub) > 0 {
			def["fields"] = fieldDefs(f.sub)
		}
		out[name] = def
	}
	return out
}

// DescribeDatabase names the database and server, without the user or password:
// what SetupSearch changes (for every workspace in it).
func (s *Source) DescribeDatabase() string {
	host := strings.TrimPrefix(strings.TrimPrefix(s.cfg.Endpoint, "https://"), "http://")
	return fmt.Sprintf("database %s at %s", s.cfg.Database, host)
}

// SetupStep is one thing SetupSearch made sure of.
type SetupStep struct {
	Kind  string // "analyzer" or "view"
	Name  string
	State string // "created", "already there", "updated"
	// Added lists what an update added to a View of an older setup ("data
	// values", "sheets", "edge labels", or a field of nodius_nodes).
	Added []string
}

func (s SetupStep) String() string {
	out := s.Kind + " " + s.Name + ": " + s.State
	if len(s.Added) > 0 {
		out += " (now also indexes " + strings.Join(s.Added, ", ") + ")"
	}
	return out
}

// SetupSearch creates what text search in ArangoDB needs, or finds it already
// there: the two analyzers and the View. Running it again changes nothing; a View
// of an older setup that lacks a link or a field (the first version indexed only
// the key, type and code of nodes) is updated, and the step says what it added.
// It needs the right to create analyzers and Views in the database.
func (s *Source) SetupSearch(ctx context.Context) ([]SetupStep, error) {
	var steps []SetupStep
	for _, a := range []struct{ name, locale string }{{AnalyzerEN, "en"}, {AnalyzerFR, "fr"}} {
		st, err := s.ensureAnalyzer(ctx, a.name, a.locale)
		if err != nil {
			return steps, err
		}
		steps = append(steps, st)
	}
	st, err := s.ensureView(ctx)
	if err != nil {
		return steps, err
	}
	steps = append(steps, st)
	s.setSearchReady(true)
	return steps, nil
}

func (s *Source) ensureAnalyzer(ctx context.Context, name, locale string) (SetupStep, error) {
	step := SetupStep{Kind: "analyzer", Name: name}
	code, _, err := s.call(ctx, http.MethodPost, analyzerDef(name, locale), "_api", "analyzer")
	if err != nil {
		if ae, ok := asDriverError(err); ok && (ae.Code == http.StatusConflict || ae.Code == http.StatusBadRequest && strings.Contains(strings.ToLower(ae.ErrorMessage), "collision")) {
			return step, &fault.Error{Code: fault.InvalidRequest, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("database %q already has an analyzer named %s with another definition — remove it (it is only used by text search) and run nodius-ai arango setup again", s.cfg.Database, name)}
		}
		return step, s.classify(err, "create the analyzer "+name)
	}
	step.State = "already there"
	if code == http.StatusCreated {
		step.State = "created"
	}
	return step, nil
}

func (s *Source) ensureView(ctx context.Context) (SetupStep, error) {
	step := SetupStep{Kind: "view", Name: SearchView}
	props, found, err := s.viewProperties(ctx)
	if err != nil {
		return step, s.classify(err, "read the view "+SearchView)
	}
	if !found {
		body := map[string]any{"name": SearchView, "type": "arangosearch", "links": viewLinks()}
		_, _, err := s.call(ctx, http.MethodPost, body, "_api", "view")
		if err == nil {
			step.State = "created"
			return step, nil
		}
		if ae, ok := asDriverError(err); !ok || ae.Code != http.StatusConflict {
			return step, s.classify(err, "create the view "+SearchView)
		}
		// Another setup created it meanwhile: check what it made.
		if props, found, err = s.viewProperties(ctx); err != nil || !found {
			return step, s.classify(cmpErr(err, "the view disappeared while it was created"), "read the view "+SearchView)
		}
	}
	if props.Type != "" && props.Type != "arangosearch" {
		return step, &fault.Error{Code: fault.InvalidRequest,
			Message: fmt.Sprintf("database %q has a view named %s of type %s — drop it (it is only used by text search) and run nodius-ai arango setup again", s.cfg.Database, SearchView, props.Type)}
	}
	missing := props.missing()
	if len(missing) == 0 {
		step.State = "already there"
		return step, nil
	}
	// PATCH replaces the links it names and keeps the View's other links.
	body := map[string]any{"links": viewLinks()}
	if _, _, err := s.call(ctx, http.MethodPatch, body, "_api", "view", SearchView, "properties"); err != nil {
		return step, s.classify(err, "update the view "+SearchView)
	}
	step.State, step.Added = "updated", missing
	return step, nil
}

func cmpErr(err error, otherwise string) error {
	if err != nil {
		return err
	}
	return errors.New(otherwise)
}

// viewProps is what SearchReady and SetupSearch read of the View.
type viewProps struct {
	Type  string               `json:"type"`
	Links map[string]linkProps `json:"links"`
}

// linkProps is a link, or one field of it (the structure is recursive).
type linkProps struct {
	Analyzers        []string             `json:"analyzers"`
	IncludeAllFields bool                 `json:"includeAllFields"`
	Fields           map[string]linkProps `json:"fields"`
}

// missing names what the View lacks of what the search query uses (fields, their
// analyzers, data's sub-attributes), for the setup's report; none means ready.
func (p viewProps) missing() []string {
	var out []string
	what := func(coll, f string) string {
		switch {
		case coll == collEdges:
			return "edge labels"
		case coll == collConfigs:
			return "node type code"
		case f == "data":
			return "data values"
		case f == "sheet":
			return "sheets"
		}
		return f + " of " + coll
	}
	for _, coll := range linkedCollections {
		link, linked := p.Links[coll]
		for _, f := range lacking(link, linked, searchFields()[coll]) {
			if w := what(coll, f); !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// lacking names, sorted, the fields of want that got (a link or a field, present
// when found) does not index as wanted, by their top-level name.
func lacking(got linkProps, found bool, want map[string]field) []string {
	names := make([]string, 0, len(want))
	for f := range want {
		names = append(names, f)
	}
	slices.Sort(names)
	var out []string
	for _, f := range names {
		w := want[f]
		g, ok := got.Fields[f]
		if !found || !ok || w.all && !g.IncludeAllFields || !hasAnalyzers(g.Analyzers, w.analyzers) || len(lacking(g, true, w.sub)) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// hasAnalyzers reports whether got names every analyzer of want. Analyzers may
// come back qualified by their database ("db::name").
func hasAnalyzers(got, want []string) bool {
	names := make([]string, len(got))
	for i, a := range got {
		if _, short, ok := strings.Cut(a, "::"); ok {
			a = short
		}
		names[i] = a
	}
	for _, a := range want {
		if !slices.Contains(names, a) {
			return false
		}
	}
	return true
}

// viewProperties reads the View; found is false when there is none.
func (s *Source) viewProperties(ctx context.Context) (viewProps, bool, error) {
	var p viewProps
	_, raw, err := s.call(ctx, http.MethodGet, nil, "_api", "view", SearchView, "properties")
	if err != nil {
		if isNotFound(err) {
			return p, false, nil
		}
		return p, false, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, false, fmt.Errorf("decode the properties of view %s: %w", SearchView, err)
	}
	return p, true, nil
}

// isNotFound reports a missing collection or View (errorNum 1203) or any 404.
func isNotFound(err error) bool {
	ae, ok := asDriverError(err)
	return ok && (ae.Code == http.StatusNotFound || ae.ErrorNum == shared.ErrArangoDataSourceNotFound)
}

// call sends one request of the database's HTTP API with a fixed path and a body
// built here (never a query text), and returns the status and the raw answer. An
// answer of 300 or more is an ArangoError, as the driver's own calls return.
func (s *Source) call(ctx context.Context, method string, body any, parts ...string) (int, json.RawMessage, error) {
	u := connection.NewUrl(append([]string{"_db", s.cfg.Database}, parts...)...)
	var raw json.RawMessage
	var mods []connection.RequestModifier
	if body != nil {
		mods = append(mods, connection.WithBody(body))
	}
	resp, err := connection.Call(ctx, s.client.Connection(), method, u, &raw, mods...)
	if err != nil {
		return 0, nil, err
	}
	code := resp.Code()
	if code >= 300 {
		var rs shared.ResponseStruct
		_ = json.Unmarshal(raw, &rs)
		return code, raw, rs.AsArangoErrorWithCode(code)
	}
	return code, raw, nil
}

// SearchReady reports whether text search can run in ArangoDB: the View exists
// and indexes what the query searches. It asks the server once per Source; a
// failure to ask (other than "no such view") is returned, classified.
func (s *Source) SearchReady(ctx context.Context) (bool, error) {
	s.searchMu.Lock()
	defer s.searchMu.Unlock()
	if s.searchReady != nil {
		return *s.searchReady, nil
	}
	p, found, err := s.viewProperties(ctx)
	if err != nil {
		return false, s.classify(err, "look for the search view "+SearchView)
	}
	ready := found && len(p.missing()) == 0
	s.searchReady = &ready
	return ready, nil
}

func (s *Source) setSearchReady(ready bool) {
	s.searchMu.Lock()
	defer s.searchMu.Unlock()
	s.searchReady = &ready
}

// errNoView says why TextSearch did not search, for logs; it wraps
// datasource.ErrNoTextIndex.
var errNoView = fmt.Errorf("ArangoDB has no search view %s (run nodius-ai arango setup): %w", SearchView, datasource.ErrNoTextIndex)

// TextSearch ranks the graph's nodes against query in ArangoDB (BM25 over the
// View) and returns the best limit nodes, read in the same round trip. Without the
// View it returns an error wrapping datasource.ErrNoTextIndex at once, and the
// caller ranks in process.
func (s *Source) TextSearch(ctx context.Context, graphKey, query string, limit int) ([]datasource.ScoredNode, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.textSearch(ctx, graphKey, query, limit)
}

// textSearch is TextSearch after the workspace check.
func (s *Source) textSearch(ctx context.Context, graphKey, query string, limit int) ([]datasource.ScoredNode, error) {
	ready, err := s.SearchReady(ctx)
	if err != nil {
		return nil, err
	}
	if !ready {
		return nil, errNoView
	}
	if limit <= 0 {
		limit = 50
	}
	q := search.ForServer(query)
	configs, err := s.configs(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.graphFresh(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	types := search.MatchingTypes(query, configs)
	sheets := search.MatchingSheets(query, g.Sheets)
	if q.Empty() && len(types) == 0 && len(sheets) == 0 {
		return []datasource.ScoredNode{}, nil
	}
	var paths [][]string
	if !q.Empty() {
		if paths, err = s.dataPathsFresh(ctx, graphKey); err != nil {
			return nil, s.classify(err, "read the data fields of graph "+graphKey)
		}
	}
	bind := map[string]any{"gk": graphKey, "ws": s.cfg.Workspace, "q": search.Join(q.Words), "alt": search.Join(q.Alt),
		"types": orNone(types), "sheets": orNone(sheets), "limit": limit}
	for i := range maxDataPaths {
		p := []string{unindexedField} // a slot without a path looks where nothing is
		if i < len(paths) {
			p = append([]string{"data"}, paths[i]...)
		}
		bind["d"+strconv.Itoa(i)] = p
	}
	out := []datasource.ScoredNode{}
	err = s.query(ctx, qTextSearch, bind, func(raw json.RawMessage) error {
		var row struct {
			Node  json.RawMessage `json:"node"`
			Score float64         `json:"score"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return fmt.Errorf("decode search hit: %w", err)
		}
		n, err := decodeNode(graphKey, row.Node)
		if err != nil {
			return err
		}
		out = append(out, datasource.ScoredNode{Node: n, Score: row.Score})
		return nil
	})
	if err != nil {
		if isNotFound(err) { // the View was dropped since it was seen
			s.setSearchReady(false)
			return nil, errNoView
		}
		return nil, s.classify(err, "search the nodes of graph "+graphKey)
	}
	withTypeCode(out, configs)
	return out, nil
}

// withTypeCode gives each hit's node the code of its type, as a snapshot does
// (datasource.CodeFromTypes): the hits are what a reader sees of the nodes.
func withTypeCode(hits []datasource.ScoredNode, configs []datasource.NodeConfig) {
	nodes := make([]datasource.Node, len(hits))
	for i, h := range hits {
		nodes[i] = h.Node
	}
	datasource.CodeFromTypes(nodes, configs)
	for i := range hits {
		hits[i].Node = nodes[i]
	}
}

// unindexedField is a top-level attribute the View does not index: a data slot of
// the search query bound to it matches nothing.
const unindexedField = "nodiusAiUnindexed"

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// dataPathsTTL is how long a graph's data paths are kept: a field that appears
// in the graph's data is searched at most this late. Reading them scans the
// graph's nodes on the server (only the paths travel), once per question at most.
const dataPathsTTL = 5 * time.Minute

type checkedPaths struct {
	at    time.Time
	paths [][]string
}

// dataPathsFresh returns the graph's most common data paths holding text (at most
// maxDataPaths, relative to data), read again after dataPathsTTL.
func (s *Source) dataPathsFresh(ctx context.Context, graphKey string) ([][]string, error) {
	s.dataPathsMu.Lock()
	c, ok := s.dataPaths[graphKey]
	s.dataPathsMu.Unlock()
	if ok && time.Since(c.at) < dataPathsTTL {
		return c.paths, nil
	}
	paths, err := queryAll[[]string](ctx, s, qDataPaths, map[string]any{"gk": graphKey, "max": maxDataPaths})
	if err != nil {
		return nil, err
	}
	s.dataPathsMu.Lock()
	defer s.dataPathsMu.Unlock()
	if s.dataPaths == nil {
		s.dataPaths = map[string]checkedPaths{}
	}
	s.dataPaths[graphKey] = checkedPaths{at: time.Now(), paths: paths}
	return paths, nil
}
