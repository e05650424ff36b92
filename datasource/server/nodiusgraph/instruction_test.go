package nodiusgraph

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

func TestApply(t *testing.T) {
	node := func() any {
		var v any
		_ = json.Unmarshal([]byte(`{"_key":"n","posX":1,"data":{"tags":["a","b","c"],"title":"héllo 😀!","on":true}}`), &v)
		return v
	}
	cases := []struct {
		name, in string
		path     []string
		want     any
		err      string
	}{
		{"set creates the last key", `{"o":1,"p":["data","url"],"v":"u"}`, []string{"data", "url"}, "u", ""},
		{"set needs the keys before it", `{"o":1,"p":["data","x","y"],"v":1}`, nil, nil, "Key not found: x at path data"},
		{"set of a missing top object", `{"o":1,"p":["nope","y"],"v":1}`, nil, nil, "Key not found: nope at path "},
		{"remove", `{"o":2,"p":["data","on"]}`, []string{"data", "on"}, nil, ""},
		{"remove needs the key", `{"o":2,"p":["data","off"]}`, nil, nil, "Key not found: off at path data"},
		{"array add", `{"o":3,"p":["data","tags"],"v":"d"}`, []string{"data", "tags"}, []any{"a", "b", "c", "d"}, ""},
		{"array insert", `{"o":4,"p":["data","tags"],"i":1,"v":"x"}`, []string{"data", "tags"}, []any{"a", "x", "b", "c"}, ""},
		{"array insert out of range", `{"o":4,"p":["data","tags"],"i":9,"v":"x"}`, nil, nil, "Invalid index 9 for array of length 3"},
		{"array pop", `{"o":7,"p":["data","tags"]}`, []string{"data", "tags"}, []any{"a", "b"}, ""},
		{"array shift", `{"o":8,"p":["data","tags"]}`, []string{"data", "tags"}, []any{"b", "c"}, ""},
		{"array unshift", `{"o":9,"p":["data","tags"],"v":"z"}`, []string{"data", "tags"}, []any{"z", "a", "b", "c"}, ""},
		{"array remove index", `{"o":14,"p":["data","tags"],"i":0}`, []string{"data", "tags"}, []any{"b", "c"}, ""},
		{"array move", `{"o":17,"p":["data","tags"],"f":0,"t":2}`, []string{"data", "tags"}, []any{"b", "c", "a"}, ""},
		{"an element by index", `{"o":1,"p":["data","tags","1"],"v":"B"}`, []string{"data", "tags"}, []any{"a", "B", "c"}, ""},
		{"not an array", `{"o":3,"p":["data","title"],"v":1}`, nil, nil, "Target is not an array for arrayAdd operation"},
		{"string insert counts UTF-16 units", `{"o":16,"p":["data","title"],"i":8,"v":"X"}`, []string{"data", "title"}, "héllo 😀X!", ""},
		{"string insert replacing", `{"o":16,"p":["data","title"],"i":0,"t":5,"v":"bye"}`, []string{"data", "title"}, "bye 😀!", ""},
		{"string append", `{"o":10,"p":["data","title"],"v":"?"}`, []string{"data", "title"}, "héllo 😀!?", ""},
		{"string remove", `{"o":11,"p":["data","title"],"i":5,"l":3}`, []string{"data", "title"}, "héllo!", ""},
		{"string replace at", `{"o":12,"p":["data","title"],"i":0,"l":1,"v":"H"}`, []string{"data", "title"}, "Héllo 😀!", ""},
		{"string replace first", `{"o":5,"p":["data","title"],"s":"l","r":"L"}`, []string{"data", "title"}, "héLlo 😀!", ""},
		{"string replace all", `{"o":6,"p":["data","title"],"s":"l","r":"L"}`, []string{"data", "title"}, "héLLo 😀!", ""},
		{"bool toggle", `{"o":13,"p":["data","on"]}`, []string{"data", "on"}, false, ""},
		{"dict merge", `{"o":15,"p":["data"],"v":{"on":false,"k":1}}`, []string{"data", "k"}, float64(1), ""},
		{"dict merge onto nothing", `{"o":15,"p":["meta"],"v":{"k":1}}`, []string{"meta"}, map[string]any{"k": float64(1)}, ""},
		{"object move", `{"o":18,"p":["data","title"],"d":["name"]}`, []string{"name"}, "héllo 😀!", ""},
		{"object insert", `{"o":19,"p":["posX"],"d":["data","tags"],"i":0}`, []string{"data", "tags"}, []any{float64(1), "a", "b", "c"}, ""},
		{"invalid operation", `{"o":99,"p":["posX"],"v":1}`, nil, nil, "Invalid operation type"},
		{"set without a value", `{"o":1,"p":["posX"]}`, nil, nil, "Missing value for operation"},
		{"set of null", `{"o":1,"p":["data","on"],"v":null}`, []string{"data"}, map[string]any{"on": nil, "tags": []any{"a", "b", "c"}, "title": "héllo 😀!"}, ""},
		{"replace without search", `{"o":5,"p":["data","title"],"r":"x"}`, nil, nil, "Missing search or replacement string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in Instruction
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			before := node()
			got, err := Apply(before, in)
			if !reflect.DeepEqual(before, node()) {
				t.Error("Apply changed its target")
			}
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, ok := lookup(got, tc.path)
			if tc.want == nil {
				if ok {
					t.Fatalf("%v still there: %v", tc.path, v)
				}
				return
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%v = %#v, want %#v", tc.path, v, tc.want)
			}
		})
	}
}

// TestReplayKeepsEachMessageOnce: an instruction message filed under two sheets'
// histories applies each sheet's part once.
// TestSetOfNullIsSent: a SET of null keeps its v on the wire (the server refuses a
// SET without one).
func TestSetOfNullIsSent(t *testing.T) {
	b, _ := json.Marshal(Set(nil, "data", "x"))
	if string(b) != `{"o":1,"p":["data","x"],"v":null}` {
		t.Errorf("Set(nil) = %s", b)
	}
	b, _ = json.Marshal(Instruction{O: OpRemove, P: []string{"a"}})
	if string(b) != `{"o":2,"p":["a"]}` {
		t.Errorf("remove = %s", b)
	}
}

func TestReplayKeepsEachMessageOnce(t *testing.T) {
	seed, err := os.ReadFile("../testdata/seed-graph.json")
	if err != nil {
		t.Fatal(err)
	}
	g, ok, err := Parse(seed)
	if err != nil || !ok {
		t.Fatal(err)
	}
	msg := json.RawMessage(`{"type":"applyInstructionToGraph","_id":3,"instructions":[
		{"i":{"o":3,"p":["data","log"],"v":1},"sheetId":"0","nodeId":"root"},
		{"i":{"o":1,"p":["posX"],"v":7},"sheetId":"1","nodeId":"sort_stats"}]}`)
	root, _ := g.Sheets["0"].Node("root")
	root["data"] = map[string]any{"log": []any{}}
	for _, sheet := range []string{"0", "1"} {
		if err := g.Replay(msg, sheet); err != nil {
			t.Fatal(err)
		}
	}
	root, _ = g.Sheets["0"].Node("root")
	if log := root["data"].(map[string]any)["log"].([]any); len(log) != 1 {
		t.Errorf("root's log = %v, want one entry", log)
	}
	if n, _ := g.Sheets["1"].Node("sort_stats"); n["posX"] != float64(7) {
		t.Errorf("sort_stats posX = %v", n["posX"])
	}
}

// TestReplay08MatchesTheSave: the missingMessages the real server gave a late
// client (08, ed6, fromTimestamp 0) replayed on the seed graph give the graph the
// server saved afterwards: every node at its saved place, the same nodes and edges
// (less the created edge the server's save loses, a bug the recording notes).
func TestReplay08MatchesTheSave(t *testing.T) {
	seed, err := os.ReadFile("../testdata/seed-graph.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../testdata/08-editing-ws.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var missing []json.RawMessage
	var saved struct {
		Sheets map[string]struct {
			Nodes map[string][2]float64 `json:"nodes"`
			Edges []string              `json:"edges"`
		} `json:"_sheets"`
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l struct {
			Dir   string `json:"dir"`
			Conn  string `json:"conn"`
			Path  string `json:"path"`
			Frame struct {
				Missing []json.RawMessage `json:"missingMessages"`
			} `json:"frame"`
			Body struct {
				Digest json.RawMessage `json:"_digest_of_body"`
			} `json:"body"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		if l.Conn == "ed6" && len(l.Frame.Missing) > 0 {
			missing = l.Frame.Missing
		}
		if l.Dir == "resp" && l.Path == "/api/graph/get" {
			_ = json.Unmarshal(l.Body.Digest, &saved) // the last one is after the autosave
		}
	}
	if len(missing) != 4 || len(saved.Sheets) != 2 {
		t.Fatalf("%d missing messages and %d saved sheets in the recording, want 4 and 2", len(missing), len(saved.Sheets))
	}
	for i, m := range missing {
		if err := g.Replay(m, "0"); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	for id, want := range saved.Sheets {
		sh := g.Sheets[id]
		if len(sh.Nodes) != len(want.Nodes) {
			t.Errorf("sheet %s: %d nodes, the save has %d", id, len(sh.Nodes), len(want.Nodes))
		}
		for key, pos := range want.Nodes {
			n, ok := sh.Node(key)
			if !ok || n["posX"] != pos[0] || n["posY"] != pos[1] {
				t.Errorf("sheet %s: node %s = %v,%v, saved at %v", id, key, n["posX"], n["posY"], pos)
			}
		}
		var edges []string
		for _, e := range sh.Edges {
			if k := e["_key"].(string); len(k) < 64 { // the created edge: not saved (server bug)
				edges = append(edges, k)
			}
		}
		if !reflect.DeepEqual(edges, want.Edges) && !(len(edges) == 0 && len(want.Edges) == 0) {
			t.Errorf("sheet %s: edges %v, saved %v", id, edges, want.Edges)
		}
	}
}
