// Package demo serves the embedded demo graph (key "demo"): the NBA stats workflow,
// so that nodius-ai works out of the box, with no server or file, and tests
// have a small realistic graph to talk about.
package demo

import (
	_ "embed"
	"fmt"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// GraphKey is the key of the embedded demo graph.
const GraphKey = "demo"

// Description is what the demo source says it is.
const Description = "demo (embedded; changes are kept in memory only)"

//go:embed demo.json
var demoJSON []byte

// JSON returns the demo graph file as embedded (the graph file format, datasource.Document),
// a fresh copy each call.
func JSON() []byte { return append([]byte(nil), demoJSON...) }

// Document decodes the embedded graph file; each call returns fresh values.
func Document() (datasource.Document, error) {
	var d datasource.Document
	if err := d.UnmarshalJSON(demoJSON); err != nil {
		return datasource.Document{}, fmt.Errorf("demo graph: %w", err)
	}
	return d, nil
}

// Snapshot returns the demo graph as a snapshot, fresh each call (tests may change it).
func Snapshot() (datasource.Snapshot, error) {
	d, err := Document()
	if err != nil {
		return datasource.Snapshot{}, err
	}
	return d.Snapshot(), nil
}

// New returns a store holding the demo graph. Changes (approved proposals) apply in
// memory for the life of the process only. opts are passed to memgraph.New after the
// demo's own (description, apply note), so callers may add an OnChange hook.
func New(opts ...memgraph.Option) (*memgraph.Store, error) {
	snap, err := Snapshot()
	if err != nil {
		return nil, err
	}
	all := append([]memgraph.Option{
		memgraph.WithDescription(Description),
		memgraph.WithApplyNote("the demo graph lives in this process's memory: the change is not saved and is gone when nodius-ai exits"),
	}, opts...)
	return memgraph.New([]datasource.Snapshot{snap}, all...)
}
