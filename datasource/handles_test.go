package datasource_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

func summary(h map[string]datasource.HandleGroup) string {
	var parts []string
	for _, side := range datasource.OrderedSides(h) {
		for _, p := range h[side].Point {
			parts = append(parts, side+":"+p.ID+":"+p.Type)
		}
	}
	return strings.Join(parts, ", ")
}

func TestDefaultHandles(t *testing.T) {
	t.Parallel()
	cfgs := []datasource.NodeConfig{
		{Key: "two-out", Handles: map[string]datasource.HandleGroup{"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}, {ID: "1", Type: "out"}}}}},
		{Key: "declares-none", Handles: map[string]datasource.HandleGroup{}},
	}
	for typ, want := range map[string]string{
		"starter": "R:0:out, 0:1:in", "html": "0:0:out, 0:1:in", "return": "L:0:in", "entryType": "0:0:out",
		"two-out": "R:0:out, R:1:out", "declares-none": "L:0:in, R:0:out", "custom": "L:0:in, R:0:out",
	} {
		if got := summary(datasource.DefaultHandles(typ, cfgs)); got != want {
			t.Errorf("DefaultHandles(%q) = %q, want %q", typ, got, want)
		}
	}
	// The built-in types' handles are Nodius's own (graphType.ts), positions and
	// accepted types included: the middle points are fixed, the entry form's point
	// carries entryType, the HTML node's output event[].
	for typ, want := range map[string]string{
		"starter":   "R(separate):0:out:any, 0(fix):1:in:entryType",
		"return":    "L(separate):0:in:any",
		"html":      "0(fix):0:out:event[], 0(fix):1:in:entryType",
		"entryType": "0(fix):0:out:entryType",
	} {
		h := datasource.DefaultHandles(typ, nil)
		var parts []string
		for _, side := range datasource.OrderedSides(h) {
			for _, p := range h[side].Point {
				parts = append(parts, side+"("+h[side].Position+"):"+p.ID+":"+p.Type+":"+p.Accept)
			}
		}
		if got := strings.Join(parts, ", "); got != want {
			t.Errorf("DefaultHandles(%q) in full = %q, want %q", typ, got, want)
		}
	}
	// A copy: changing it leaves the config as it was.
	h := datasource.DefaultHandles("two-out", cfgs)
	h["R"].Point[0].ID = "x"
	if cfgs[0].Handles["R"].Point[0].ID != "0" {
		t.Error("DefaultHandles returned the config's own points")
	}
}

// TestDefaultHandlesMatchDemo: the demo graph's nodes of built-in types carry exactly
// their type's default handles, Nodius's own (its starter "root" has the entry input
// 0:1 and the output R:0).
func TestDefaultHandlesMatchDemo(t *testing.T) {
	t.Parallel()
	snap, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range snap.Nodes {
		if !datasource.IsBuiltinType(n.Type) {
			continue
		}
		seen[n.Type] = true
		if want := datasource.DefaultHandles(n.Type, snap.Configs); !reflect.DeepEqual(n.Handles, want) {
			t.Errorf("demo node %q (%s) has %+v, defaults are %+v", n.Key, n.Type, n.Handles, want)
		}
	}
	if len(seen) != len(datasource.BuiltinTypes) {
		t.Errorf("demo graph has built-in types %v, want all of %v", seen, datasource.BuiltinTypes)
	}
	// Every edge leaves an output point and arrives at an input point of its nodes
	// (the entry form at the starter's "1", the filter at the HTML node's "1").
	byKey := map[string]datasource.Node{}
	for _, n := range snap.Nodes {
		byKey[n.Key] = n
	}
	for _, e := range snap.Edges {
		for _, end := range []struct{ node, handle, typ string }{{e.Source, e.SourceHandle, "out"}, {e.Target, e.TargetHandle, "in"}} {
			h := datasource.EffectiveHandles(byKey[end.node], snap.Configs)
			if got, err := datasource.ResolveHandle(end.node, h, end.handle, end.typ); err != nil || got != end.handle {
				t.Errorf("demo edge %s: %v", e.Key, err)
			}
		}
	}
}

func TestEffectiveHandles(t *testing.T) {
	t.Parallel()
	own := map[string]datasource.HandleGroup{"T": {Point: []datasource.HandlePoint{{ID: "a", Type: "in"}}}}
	if got := summary(datasource.EffectiveHandles(datasource.Node{Type: "starter", Handles: own}, nil)); got != "T:a:in" {
		t.Errorf("own handles: %q", got)
	}
	if got := summary(datasource.EffectiveHandles(datasource.Node{Type: "starter"}, nil)); got != "R:0:out, 0:1:in" {
		t.Errorf("no handles: %q", got)
	}
}

func TestCheckHandles(t *testing.T) {
	t.Parallel()
	pts := func(side string, p ...datasource.HandlePoint) map[string]datasource.HandleGroup {
		return map[string]datasource.HandleGroup{side: {Point: p}}
	}
	got, err := datasource.CheckHandles(pts("L", datasource.HandlePoint{ID: "0", Type: "in"}))
	if err != nil || got["L"].Position != "separate" || got["L"].Point[0].Accept != "any" {
		t.Errorf("normalised = %+v, %v", got, err)
	}
	twoSides := map[string]datasource.HandleGroup{
		"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}},
		"B": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}},
	}
	for _, tc := range []struct {
		h    map[string]datasource.HandleGroup
		want string
	}{
		{pts("L", datasource.HandlePoint{Type: "in"}), "L.point[0]: id is empty"},
		{pts("L", datasource.HandlePoint{ID: "0", Type: "input"}), `type must be "in" or "out" (got "input")`},
		{pts("", datasource.HandlePoint{ID: "0", Type: "in"}), "empty name"},
		{twoSides, `two out points have the id "0" (sides R and B)`},
	} {
		if _, err := datasource.CheckHandles(tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckHandles(%+v) = %v, want %q", tc.h, err, tc.want)
		}
	}
	// An input and an output may share an id.
	if _, err := datasource.CheckHandles(pts("L", datasource.HandlePoint{ID: "0", Type: "in"}, datasource.HandlePoint{ID: "0", Type: "out"})); err != nil {
		t.Error(err)
	}
}

func TestResolveHandle(t *testing.T) {
	t.Parallel()
	api := map[string]datasource.HandleGroup{
		"L": {Point: []datasource.HandlePoint{{ID: "0", Type: "in"}}},
		"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}, {ID: "1", Type: "out"}}},
	}
	ret := datasource.DefaultHandles("return", nil)
	starter := datasource.DefaultHandles("starter", nil)
	for _, tc := range []struct {
		name    string
		h       map[string]datasource.HandleGroup
		handle  string
		typ     string
		want    string
		wantErr string
	}{
		{"id", api, "1", "out", "1", ""},
		{"side and id", api, "R:1", "out", "1", ""},
		{"side dash id", api, "L-0", "in", "0", ""},
		{"only input picked", api, "", "in", "0", ""},
		{"several outputs", api, "", "out", "", `source handle is empty and node "n" has several output points: "0" (side R), "1" (side R); name one`},
		{"unknown", api, "7", "in", "", `node "n" has no input handle "7"; its inputs are: "0" (side L)`},
		{"wrong side", api, "L:1", "out", "", `node "n" has no output handle "L:1"; its outputs are: "0" (side R), "1" (side R)`},
		{"output as target", api, "1", "in", "", `target handle "1" of node "n" is an output point, but the target of an edge must be an input point; its inputs are: "0" (side L)`},
		{"input of a node without outputs", ret, "0", "out", "", `source handle "0" of node "n" is an input point, but the source of an edge must be an output point; node "n" has no output point, so it cannot be the source of an edge`},
		{"no outputs", ret, "", "out", "", `node "n" has no output point, so it cannot be the source of an edge`},
		{"no handles at all", nil, "0", "in", "", `node "n" has no input point, so it cannot be the target of an edge`},
		// The common mistake: an entry form's edge aimed at the starter's "0", its output.
		{"starter's output as target", starter, "0", "in", "", `target handle "0" of node "n" is an output point, but the target of an edge must be an input point; its inputs are: "1" (side 0, accepts entryType)`},
		{"starter's input", starter, "0:1", "in", "1", ""},
		{"starter's only input picked", starter, "", "in", "1", ""},
		{"starter's output", starter, "R:0", "out", "0", ""},
	} {
		got, err := datasource.ResolveHandle("n", tc.h, tc.handle, tc.typ)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: = %q, %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestCheckEdgesKeepHandles(t *testing.T) {
	t.Parallel()
	edges := []datasource.Edge{
		{Key: "e1", Source: "a", SourceHandle: "0", Target: "n", TargetHandle: "1"},
		{Key: "e2", Source: "n", SourceHandle: "1", Target: "b", TargetHandle: "0"},
		{Key: "e3", Source: "a", SourceHandle: "5", Target: "b", TargetHandle: "5"},
	}
	n := datasource.Node{Key: "n", Type: "html"}
	keep := map[string]datasource.HandleGroup{
		"L": {Point: []datasource.HandlePoint{{ID: "1", Type: "in"}}},
		"R": {Point: []datasource.HandlePoint{{ID: "1", Type: "out"}}},
	}
	if err := datasource.CheckEdgesKeepHandles(n, keep, edges); err != nil {
		t.Errorf("kept: %v", err)
	}
	// An html node's own handles keep input "1" (0:1:in) but have no output "1".
	if err := datasource.CheckEdgesKeepHandles(n, datasource.EffectiveHandles(n, nil), edges); err == nil ||
		err.Error() != `the changed node "n" would drop output "1" used by edge "e2" (to b): keep that point or delete the edge first` {
		t.Errorf("dropped output: %v", err)
	}
	outOnly := map[string]datasource.HandleGroup{"R": {Point: []datasource.HandlePoint{{ID: "1", Type: "out"}, {ID: "0", Type: "out"}}}}
	if err := datasource.CheckEdgesKeepHandles(n, outOnly, edges); err == nil || !strings.Contains(err.Error(), `drop input "1" used by edge "e1" (from a)`) {
		t.Errorf("dropped input: %v", err)
	}
	if !reflect.DeepEqual(datasource.OrderedSides(map[string]datasource.HandleGroup{"x": {}, "B": {}, "L": {}, "a": {}}), []string{"L", "B", "a", "x"}) {
		t.Error("OrderedSides: want L, R, T, B first, then the others sorted")
	}
}
