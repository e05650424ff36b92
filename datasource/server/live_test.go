package server

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
)

// TestCatchUpAppliesEachEditOnce: a broadcast that arrived between the
// registrations of two sheets is applied for the sheet registered before it only;
// the other sheet's registration answer holds it.
func TestCatchUpAppliesEachEditOnce(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed-graph.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := nodiusgraph.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	l := &live{graph: g, regSeq: map[string]uint64{"0": 5, "1": 10}}
	l.late = []broadcast{
		{json.RawMessage(`{"type":"applyInstructionToGraph","instructions":[
			{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"0","nodeId":"root"},
			{"i":{"o":1,"p":["posX"],"v":2},"sheetId":"1","nodeId":"sort_stats"}]}`), 7},
		{json.RawMessage(`{"type":"batchDeleteElements","sheetId":"0","nodeKeys":[],"edgeKeys":["e1"]}`), 3},
		{json.RawMessage(`{"type":"batchDeleteElements","sheetId":"1","nodeKeys":[],"edgeKeys":["e1"]}`), 11},
	}
	if n := l.catchUp(); n != 1 {
		t.Errorf("catchUp applied %d messages, want 1", n)
	}
	root, _ := g.Sheets["0"].Node("root")
	sort, _ := g.Sheets["1"].Node("sort_stats")
	if root["posX"] != float64(1) || sort["posX"] == float64(2) {
		t.Errorf("root posX %v (want 1), sort_stats posX %v (want unchanged)", root["posX"], sort["posX"])
	}
	if _, ok := g.Sheets["0"].Edge("e1"); !ok {
		t.Error("e1 deleted by a broadcast from before sheet 0's registration")
	}
}
