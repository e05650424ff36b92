package arango

import (
	"context"
	"encoding/json"
	"net/http"
)

// The tests live in package arango_test, because the fake server they drive
// (arangotest) imports this package. These names let them check what goes over the
// wire without exporting the query texts from the package itself.
const (
	QGraph        = qGraph
	QNodes        = qNodes
	QNodesSheet   = qNodesSheet
	QEdgesSheet   = qEdgesSheet
	QNode         = qNode
	QTraverseAny  = qTraverseAny
	QTraverseIn   = qTraverseIn
	QTraverseOut  = qTraverseOut
	QInsertNode   = qInsertNode
	QUpdateNode   = qUpdateNode
	QDeleteNode   = qDeleteNode
	QInsertEdge   = qInsertEdge
	QDeleteEdge   = qDeleteEdge
	QVectorExact  = qVectorExact
	QVectorApprox = qVectorApprox
	QConfigs      = qConfigs
	QDataPaths    = qDataPaths
)

// QTextSearch is built once from constants (textSearchQuery).
var QTextSearch = qTextSearch

// QueryEach runs a query through the cursor loop every read uses, for the tests of
// cursor closing.
func (s *Source) QueryEach(ctx context.Context, q string, bind map[string]any, fn func(raw json.RawMessage) error) error {
	return s.query(ctx, q, bind, fn)
}

// SetSearchReadyForTest sets what the Source believes of the View, as if it had
// read it earlier.
func (s *Source) SetSearchReadyForTest(ready bool) { s.setSearchReady(ready) }

// SetupFirstViewForTest makes what the first version of SetupSearch made: the two
// analyzers and a View linked to nodius_nodes only, by key, type and code.
func (s *Source) SetupFirstViewForTest(ctx context.Context) error {
	for _, a := range []struct{ name, locale string }{{AnalyzerEN, "en"}, {AnalyzerFR, "fr"}} {
		if _, err := s.ensureAnalyzer(ctx, a.name, a.locale); err != nil {
			return err
		}
	}
	text := []string{AnalyzerEN, AnalyzerFR}
	link := map[string]any{"includeAllFields": false, "storeValues": "none", "fields": map[string]any{
		"graphKey": map[string]any{"analyzers": []string{"identity"}},
		"_key":     map[string]any{"analyzers": text},
		"type":     map[string]any{"analyzers": []string{"identity", AnalyzerEN, AnalyzerFR}},
		"process":  map[string]any{"analyzers": text},
	}}
	body := map[string]any{"name": SearchView, "type": "arangosearch", "links": map[string]any{collNodes: link}}
	_, _, err := s.call(ctx, http.MethodPost, body, "_api", "view")
	return err
}

// SetupPreviousViewForTest makes what the setup made before node types were
// searched: the analyzers and the View linked to nodius_nodes and nodius_edges as
// now, without nodius_node_config.
func (s *Source) SetupPreviousViewForTest(ctx context.Context) error {
	for _, a := range []struct{ name, locale string }{{AnalyzerEN, "en"}, {AnalyzerFR, "fr"}} {
		if _, err := s.ensureAnalyzer(ctx, a.name, a.locale); err != nil {
			return err
		}
	}
	links := viewLinks()
	delete(links, collConfigs)
	body := map[string]any{"name": SearchView, "type": "arangosearch", "links": links}
	_, _, err := s.call(ctx, http.MethodPost, body, "_api", "view")
	return err
}
