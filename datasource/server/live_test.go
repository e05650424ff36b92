package server

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// TestDrainAppliesEachEditOnce: a broadcast that arrived between the
// registrations of two sheets is applied for the sheet registered before it only;
// the other sheet's registration answer holds it.
func TestDrainAppliesEachEditOnce(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed-graph.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := nodiusgraph.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{graph: g}
	lk := &link{regSeq: map[string]uint64{"0": 5, "1": 10}, lastReg: 10}
	lk.queue = []nodiusapi.Frame{
		{Seq: 3, Type: "batchDeleteElements", Raw: json.RawMessage(`{"type":"batchDeleteElements","sheetId":"0","nodeKeys":[],"edgeKeys":["e1"]}`)},
		{Seq: 7, Type: "applyInstructionToGraph", Raw: json.RawMessage(`{"type":"applyInstructionToGraph","instructions":[
			{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"0","nodeId":"root"},
			{"i":{"o":1,"p":["posX"],"v":2},"sheetId":"1","nodeId":"sort_stats"}]}`)},
		// Counted twice (in sheet 0's registration answer too): refused, ignored.
		{Seq: 9, Type: "batchDeleteElements", Raw: json.RawMessage(`{"type":"batchDeleteElements","sheetId":"0","nodeKeys":["nope"],"edgeKeys":[]}`)},
	}
	if err := f.drain(lk); err != nil {
		t.Fatalf("drain: %v", err)
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

// TestDrainRefusalAfterRegistrationIsAnError: a message after the registrations
// that the copy cannot apply means the copy differs from the server's graph.
func TestDrainRefusalAfterRegistrationIsAnError(t *testing.T) {
	seed, err := os.ReadFile("testdata/seed-graph.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := nodiusgraph.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{graph: g}
	lk := &link{regSeq: map[string]uint64{"0": 5}, lastReg: 5}
	lk.queue = []nodiusapi.Frame{{Seq: 6, Type: "batchDeleteElements",
		Raw: json.RawMessage(`{"type":"batchDeleteElements","sheetId":"0","nodeKeys":["nope"],"edgeKeys":[]}`)}}
	if err := f.drain(lk); err == nil {
		t.Error("drain applied a deletion of a node the copy does not have")
	}
}
