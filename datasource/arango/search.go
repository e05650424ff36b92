package arango

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

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
// What is indexed mirrors the in-process index (datasource/search) where a node
// document allows it: the key (its words, so fetch-api and fetch_api match "fetch
// api"), the type, and the process code (its identifiers and string literals). Type
// display names, descriptions and categories live in nodius_node_config: the
// question is matched against them here (search.MatchingTypes) and the types found
// are sent along, to be boosted. Data values, edge labels and sheet names are only
// searched by the in-process ranking, which stays the fallback.
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

// searchFields are the node fields the View indexes, with their analyzers.
func searchFields() map[string][]string {
	text := []string{AnalyzerEN, AnalyzerFR}
	return map[string][]string{
		"graphKey": {"identity"}, // the graph filter
		"_key":     text,
		"type":     {"identity", AnalyzerEN, AnalyzerFR}, // identity: the types a question names
		"process":  text,
	}
}

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

// viewLink is the View's link to nodius_nodes.
func viewLink() map[string]any {
	fields := map[string]any{}
	for f, an := range searchFields() {
		fields[f] = map[string]any{"analyzers": an}
	}
	return map[string]any{"includeAllFields": false, "storeValues": "none", "fields": fields}
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
}

func (s SetupStep) String() string { return s.Kind + " " + s.Name + ": " + s.State }

// SetupSearch creates what text search in ArangoDB needs, or finds it already
// there: the two analyzers and the View. Running it again changes nothing; a View
// of an older setup whose link lacks a field is updated. It needs the right to
// create analyzers and Views in the database.
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
		body := map[string]any{"name": SearchView, "type": "arangosearch", "links": map[string]any{collNodes: viewLink()}}
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
	if props.linked() {
		step.State = "already there"
		return step, nil
	}
	body := map[string]any{"links": map[string]any{collNodes: viewLink()}}
	if _, _, err := s.call(ctx, http.MethodPatch, body, "_api", "view", SearchView, "properties"); err != nil {
		return step, s.classify(err, "update the view "+SearchView)
	}
	step.State = "updated"
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
	Type  string `json:"type"`
	Links map[string]struct {
		Fields map[string]struct {
			Analyzers []string `json:"analyzers"`
		} `json:"fields"`
	} `json:"links"`
}

// linked reports whether the View indexes every field the search query uses, with
// the analyzers it uses.
func (p viewProps) linked() bool {
	link, ok := p.Links[collNodes]
	if !ok {
		return false
	}
	for f, want := range searchFields() {
		got, ok := link.Fields[f]
		if !ok {
			return false
		}
		names := make([]string, len(got.Analyzers))
		for i, a := range got.Analyzers {
			// Analyzers may come back qualified by their database ("db::name").
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
	ready := found && p.linked()
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
	types := search.MatchingTypes(query, configs)
	if q.Empty() && len(types) == 0 {
		return []datasource.ScoredNode{}, nil
	}
	if types == nil {
		types = []string{}
	}
	bind := map[string]any{"gk": graphKey, "q": search.Join(q.Words), "alt": search.Join(q.Alt), "types": types, "limit": limit}
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
	return out, nil
}
