package datasource_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// A real Nodius graph (the recorded server's seed graph and node types, in the
// file format): its nodes have no code, and each finds its type's.
func TestNodiusDocumentCodeFromType(t *testing.T) {
	data, err := os.ReadFile("testdata/nba-nodius.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc datasource.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != datasource.FormatNodius {
		t.Fatalf("format %v, want nodius", doc.Format)
	}
	if got := doc.Graph.SheetName("1"); got != "data-processing" {
		t.Errorf("sheet 1 is %q, want data-processing (from sheetsList)", got)
	}
	byKey := map[string]datasource.Node{}
	for _, n := range doc.Nodes {
		byKey[n.Key] = n
	}
	var filter datasource.NodeConfig
	for _, c := range doc.NodeConfigs {
		if c.Key == "filter" {
			filter = c
		}
	}
	if filter.Process == "" || byKey["filter_active"].Process != filter.Process {
		t.Errorf("filter_active's code %q, want its type's %q", byKey["filter_active"].Process, filter.Process)
	}
	if p := byKey["root"].Process; p != "" {
		t.Errorf("a starter node got code %q, want none (built-in)", p)
	}
	if len(filter.Handles) == 0 || filter.NodeExtra["size"] == nil {
		t.Errorf("filter's node.handles/size not read: %+v", filter)
	}
	if m := doc.MissingTypes(); len(m) != 0 {
		t.Errorf("missing types %v, want none", m)
	}
	if !byKey["root"].Size.Dynamic {
		t.Error("root's size.dynamic lost")
	}

	// Written back: no process on any node, code under node.process, unknown
	// fields kept; both writers agree.
	out, err := datasource.EncodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := viaEncodingJSON(t, doc); !bytes.Equal(got, out) {
		t.Errorf("EncodeDocument and encoding/json differ:\n%s\n---\n%s", out, got)
	}
	var raw struct {
		Graph       map[string]any   `json:"graph"`
		Nodes       []map[string]any `json:"nodes"`
		NodeConfigs []map[string]any `json:"nodeConfigs"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	for _, n := range raw.Nodes {
		if _, ok := n["process"]; ok {
			t.Errorf("node %v written with process", n["_key"])
		}
		if n["graphKey"] != "testgraph001" {
			t.Errorf("node %v lost its graphKey", n["_key"])
		}
	}
	if _, ok := raw.Graph["sheetsList"]; !ok {
		t.Error("graph written without sheetsList")
	}
	if node, _ := raw.NodeConfigs[0]["node"].(map[string]any); node["process"] == nil || node["type"] == nil {
		t.Errorf("config written without node.process/node.type: %v", raw.NodeConfigs[0])
	}
	var again datasource.Document
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	if out2, err := datasource.EncodeDocument(again); err != nil || !bytes.Equal(out2, out) {
		t.Errorf("written, read and written again, the bytes differ (%v)", err)
	}
	for i := range doc.Nodes {
		if again.Nodes[i].Process != doc.Nodes[i].Process {
			t.Errorf("node %s: code %q after a round trip, want %q", doc.Nodes[i].Key, again.Nodes[i].Process, doc.Nodes[i].Process)
		}
	}
}

func TestMissingTypes(t *testing.T) {
	doc := datasource.Document{
		Nodes:       []datasource.Node{{Key: "a", Type: "starter"}, {Key: "b", Type: "fetch"}, {Key: "c", Type: "sum"}, {Key: "d", Type: "fetch"}, {Key: "e", Type: "known"}},
		NodeConfigs: []datasource.NodeConfig{{Key: "known", Process: "x"}},
	}
	if got, want := doc.MissingTypes(), []string{"fetch", "sum"}; !reflect.DeepEqual(got, want) {
		t.Errorf("MissingTypes = %v, want %v", got, want)
	}
	if n := datasource.MissingTypesNotice(doc.MissingTypes()); !strings.Contains(n, `"fetch", "sum"`) || !strings.Contains(n, "unknown") {
		t.Errorf("notice %q", n)
	}
	doc.Format = datasource.FormatEarlier
	if got := doc.MissingTypes(); got != nil {
		t.Errorf("earlier format: MissingTypes = %v, want none (nodes carry their code)", got)
	}
}

func TestTypeCodeChanges(t *testing.T) {
	base := func() datasource.Document {
		return datasource.Document{
			Nodes:       []datasource.Node{{Key: "a", Type: "t", Process: "old"}, {Key: "b", Type: "t", Process: "old"}, {Key: "s", Type: "starter"}},
			NodeConfigs: []datasource.NodeConfig{{Key: "t", Process: "old"}},
		}
	}
	d := base()
	if ch, err := d.TypeCodeChanges(); err != nil || len(ch) != 0 {
		t.Errorf("unchanged: %v, %v", ch, err)
	}
	d.Nodes[1].Process = "new"
	if ch, err := d.TypeCodeChanges(); err != nil || ch["t"] != "new" {
		t.Errorf("one node changed: %v, %v; want t=new", ch, err)
	}
	d.Nodes[0].Process = "other"
	if _, err := d.TypeCodeChanges(); err == nil {
		t.Error("two nodes of one type given different code: no error")
	}
	d = base()
	d.Nodes[2].Process = "x"
	if _, err := d.TypeCodeChanges(); err == nil || !strings.Contains(err.Error(), "no config") {
		t.Errorf("code on a type without config: %v", err)
	}
}

// A document made in memory is written in Nodius's format only when that loses
// no node's code.
func TestWriteFormatAuto(t *testing.T) {
	d := datasource.Document{
		Nodes:       []datasource.Node{{Key: "a", Type: "t", Process: "x"}, {Key: "s", Type: "starter"}},
		NodeConfigs: []datasource.NodeConfig{{Key: "t", Process: "x"}},
	}
	if f := d.WriteFormat(); f != datasource.FormatNodius {
		t.Errorf("code all on types: %v, want nodius", f)
	}
	d.Nodes[0].Process = "y"
	if f := d.WriteFormat(); f != datasource.FormatEarlier {
		t.Errorf("a node with its own code: %v, want earlier", f)
	}
	out, err := datasource.EncodeDocument(d)
	if err != nil || !strings.Contains(string(out), `"process": "y"`) {
		t.Errorf("the node's own code was not written: %v\n%s", err, out)
	}
}

// Converting an earlier file to Nodius's format loses nothing: read again, every
// node has the same code and fields, and converting back gives the same bytes.
func TestToNodiusRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/nba-earlier.json")
	if err != nil {
		t.Fatal(err)
	}
	var orig datasource.Document
	if err := json.Unmarshal(data, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Format != datasource.FormatEarlier {
		t.Fatalf("format %v, want earlier", orig.Format)
	}
	conv, err := orig.ToNodius()
	if err != nil {
		t.Fatal(err)
	}
	out, err := datasource.EncodeDocument(conv)
	if err != nil {
		t.Fatal(err)
	}
	var back datasource.Document
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Format != datasource.FormatNodius {
		t.Fatalf("converted file read as %v", back.Format)
	}
	if m := back.MissingTypes(); len(m) != 0 {
		t.Errorf("missing types after conversion: %v", m)
	}
	if !strings.Contains(string(out), `"sheetsList"`) || strings.Contains(string(out), `"sheets"`) {
		t.Error("converted graph does not name its sheets sheetsList")
	}
	for i, n := range back.Nodes {
		o := orig.Nodes[i]
		if n.Key != o.Key || n.Type != o.Type || n.Process != o.Process || !reflect.DeepEqual(n.Handles, o.Handles) || n.PosX != o.PosX || n.Size != o.Size {
			t.Errorf("node %s changed: %+v\nwas %+v", o.Key, n, o)
		}
	}
	// And back: the earlier file, byte for byte.
	back.Format = datasource.FormatEarlier
	for i := range back.Nodes {
		delete(back.Nodes[i].Extra, "process")
		if len(back.Nodes[i].Extra) == 0 {
			back.Nodes[i].Extra = nil
		}
	}
	for i := range back.NodeConfigs {
		back.NodeConfigs[i].Process = ""
	}
	again, err := datasource.EncodeDocument(back)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := datasource.EncodeDocument(orig)
	if !bytes.Equal(again, want) {
		t.Errorf("earlier → Nodius → earlier differs:\n%s", again)
	}
}

// Nodes of one type with different code cannot share Nodius's one code per type.
func TestToNodiusConflict(t *testing.T) {
	d := datasource.Document{Format: datasource.FormatEarlier, Nodes: []datasource.Node{
		{Key: "a", Type: "t", Process: "x"}, {Key: "b", Type: "t", Process: "y"}}}
	if _, err := d.ToNodius(); err == nil || !strings.Contains(err.Error(), `"a" and "b"`) {
		t.Errorf("ToNodius: %v, want an error naming a and b", err)
	}
}

// A node of a Nodius document with a process member of its own keeps it through
// its in-memory JSON form (undo records, cached copies), beside the code shown.
func TestNodeOwnProcessSurvivesItsJSON(t *testing.T) {
	var doc datasource.Document
	if err := json.Unmarshal([]byte(`{"graph":{"_key":"g","sheetsList":{}},"nodes":[{"_key":"a","type":"t","process":"own"}],
	  "nodeConfigs":[{"_key":"t","node":{"process":"typed"}}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	n := doc.Nodes[0]
	if n.Process != "typed" || datasource.OwnProcess(n) != "own" {
		t.Fatalf("code %q, own %q; want typed, own", n.Process, datasource.OwnProcess(n))
	}
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var back datasource.Node
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Process != "typed" || datasource.OwnProcess(back) != "own" {
		t.Errorf("after its JSON: code %q, own %q (%s)", back.Process, datasource.OwnProcess(back), b)
	}
}

func TestToNodiusBottomSide(t *testing.T) {
	d := datasource.Document{Format: datasource.FormatEarlier, Nodes: []datasource.Node{{Key: "a", Type: "starter",
		Handles: map[string]datasource.HandleGroup{"B": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}}}}}}
	conv, err := d.ToNodius()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := conv.Nodes[0].Handles["D"]; !ok || len(conv.Nodes[0].Handles) != 1 {
		t.Errorf("handles %v, want the bottom as D", conv.Nodes[0].Handles)
	}
	if _, ok := d.Nodes[0].Handles["B"]; !ok {
		t.Error("the original document was changed")
	}
}
