package nodiusgraph

import (
	"slices"
	"testing"
)

// TestDropDanglingEdges: an edge whose source or target is not a node of its sheet
// is dropped, as the Nodius server drops it when it loads the graph to edit it;
// every other edge stays, in order.
func TestDropDanglingEdges(t *testing.T) {
	g, ok, err := Parse([]byte(`{"_key":"g","sheetsList":{"0":"main","1":"other"},"_sheets":{
		"0":{"nodes":[{"_key":"a"},{"_key":"b"}],"edges":[
			{"_key":"e1","source":"a","target":"b"},
			{"_key":"gone-target","source":"a","target":"x"},
			{"_key":"e2","source":"b","target":"a"},
			{"_key":"other-sheet","source":"a","target":"c"}]},
		"1":{"nodes":[{"_key":"c"}],"edges":[{"_key":"gone-source","source":"y","target":"c"}]}}}`))
	if err != nil || !ok {
		t.Fatalf("parse: %v %v", ok, err)
	}
	dropped := g.DropDanglingEdges()
	slices.Sort(dropped)
	if want := []string{"gone-source", "gone-target", "other-sheet"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	var kept []string
	for _, e := range g.Sheets["0"].Edges {
		kept = append(kept, e["_key"].(string))
	}
	if !slices.Equal(kept, []string{"e1", "e2"}) || len(g.Sheets["1"].Edges) != 0 {
		t.Errorf("kept %q on sheet 0 and %d on sheet 1", kept, len(g.Sheets["1"].Edges))
	}
}
