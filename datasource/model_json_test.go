package datasource_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestModelRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		into func() any
	}{
		{"graph", `{"_key":"g","name":"n","description":"d","workspace":"w","sheetsList":{"0":"main"},"metadata":{"big":12345678901234567890,"f":1.10},"owner":"u1","zz":[1,2]}`,
			func() any { return new(datasource.Graph) }},
		{"node", `{"_key":"a","type":"api-call","sheet":"0","process":"if (a < b && c > d) {}","handles":{"L":{"position":"separate","point":[{"id":"0","type":"in","accept":"any","color":"red"}],"gap":4}},"data":{"big":98765432109876543210,"list":[1,2.0,{"x":null}],"n":1.50},"posX":1.5,"posY":-2,"size":{"width":200,"height":100},"embedding":[0.25,-1],"_rev":"abc","createdTime":1712345678901}`,
			func() any { return new(datasource.Node) }},
		{"node without embedding", `{"_key":"a","type":"html","sheet":"0","process":"","handles":{},"data":null,"posX":0,"posY":0,"size":{"width":0,"height":0}}`,
			func() any { return new(datasource.Node) }},
		{"edge", `{"_key":"e","sheet":"0","source":"a","sourceHandle":"0","target":"b","targetHandle":"1","label":"ok","_from":"x","style":{"dash":true}}`,
			func() any { return new(datasource.Edge) }},
		{"config", `{"_key":"api-call","displayName":"API","description":"d","category":"c","icon":"i","workspace":"w","node":{"handles":{"R":{"position":"fix","point":[]}},"process":"next();","size":{"width":250,"height":180},"type":"api-call"},"version":3}`,
			func() any { return new(datasource.NodeConfig) }},
		{"node with dynamic size", `{"_key":"r","type":"starter","sheet":"0","process":"","handles":{"0":{"position":"fix","point":[]}},"data":null,"posX":0,"posY":0,"size":{"width":150,"height":150,"dynamic":true},"graphKey":"g","typeVersion":1}`,
			func() any { return new(datasource.Node) }},
		{"document, Nodius's format", `{"graph":{"_key":"g","name":"","description":"","workspace":"","sheetsList":{"0":"main"},"metadata":{},"sheets":{"0":{"nodes":[]}}},"nodes":[{"_key":"a","type":"t","sheet":"0","handles":{},"data":null,"posX":0,"posY":0,"size":{"width":0,"height":0},"graphKey":"g"}],"edges":[],"nodeConfigs":[{"_key":"t","displayName":"","description":"","category":"","icon":"","node":{"handles":{},"process":"x();"}}]}`,
			func() any { return new(datasource.Document) }},
		{"document, earlier format", `{"graph":{"_key":"g","name":"","description":"","workspace":"","sheets":{"0":"main"},"metadata":{}},"nodes":[{"_key":"a","type":"t","sheet":"0","process":"y();","handles":{},"data":null,"posX":0,"posY":0,"size":{"width":0,"height":0}}],"edges":[],"nodeConfigs":[{"_key":"t","displayName":"","description":"","category":"","icon":"","handles":{}}]}`,
			func() any { return new(datasource.Document) }},
		{"document", `{"graph":{"_key":"g","name":"","description":"","workspace":"","sheets":{},"metadata":{}},"nodes":[],"edges":[],"nodeConfigs":[],"exportedAt":"2024-01-01","version":2}`,
			func() any { return new(datasource.Document) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.into()
			if err := json.Unmarshal([]byte(tt.in), v); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(buf.String()), compact(t, tt.in); got != want {
				t.Errorf("round trip\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestModelDefaults(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(datasource.Node{Key: "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_key":"x","type":"","sheet":"","process":"","handles":{},"data":null,"posX":0,"posY":0,"size":{"width":0,"height":0}}`
	if string(b) != want {
		t.Errorf("got %s", b)
	}
	var p datasource.HandlePoint
	if err := json.Unmarshal([]byte(`{"id":0,"type":"out"}`), &p); err != nil || p.ID != "0" {
		t.Errorf("numeric id: %+v %v", p, err)
	}
	var n datasource.Node
	if err := json.Unmarshal([]byte(`{"_key":"a","data":{"n":3}}`), &n); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Data.(map[string]any)["n"].(json.Number); !ok {
		t.Errorf("data numbers should be json.Number, got %T", n.Data.(map[string]any)["n"])
	}
	// Extra never overrides a known field.
	b, _ = json.Marshal(datasource.Edge{Key: "e", Extra: map[string]json.RawMessage{"_key": json.RawMessage(`"bad"`), "z": json.RawMessage(`1`)}})
	if !strings.HasPrefix(string(b), `{"_key":"e",`) || strings.Contains(string(b), "bad") || !strings.HasSuffix(string(b), `"z":1}`) {
		t.Errorf("got %s", b)
	}
}

func TestModelDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		into     any
		path     string
		msg      string
		atPrefix string // the input from the error offset starts with this
	}{
		{"posX string", `{"_key":"a", "posX": "12"}`, new(datasource.Node), "posX", "expected number, got string", `"12"`},
		{"not an object", `[1]`, new(datasource.Node), "", "expected object, got array", `[1]`},
		{"size width", `{"size": {"width": true}}`, new(datasource.Node), "size.width", "expected number, got boolean", `true`},
		{"handle point id", `{"handles": {"L": {"point": [{"id":"0"}, {"id": {"x":1}}]}}}`, new(datasource.Node), "handles.L.point[1].id", "expected string, got object", `{"x":1}`},
		{"handle points not array", `{"handles": {"R": {"point": "0"}}}`, new(datasource.Node), "handles.R.point", "expected array, got string", `"0"`},
		{"sheetsList value", `{"sheetsList": {"0": "main", "1": 2}}`, new(datasource.Graph), "sheetsList.1", "expected string, got number", `2`},
		{"metadata", `{"metadata": [1]}`, new(datasource.Graph), "metadata", "expected object, got array", `[1]`},
		{"document node", "{\"graph\": {\"_key\": \"g\"},\n \"nodes\": [{\"_key\": \"a\"},\n  {\"_key\": \"b\", \"posY\": [1]}]}", new(datasource.Document), "nodes[1].posY", "expected number, got array", `[1]`},
		{"document edges", `{"edges": {"a": 1}}`, new(datasource.Document), "edges", "expected array, got object", `{"a": 1}`},
		{"config key", `{"nodeConfigs": [{"_key": 7}]}`, new(datasource.Document), "nodeConfigs[0]._key", "expected string, got number", `7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.into.(json.Unmarshaler)
			err := u.UnmarshalJSON([]byte(tt.in))
			var de *datasource.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v (%T), want *DecodeError", err, err)
			}
			if de.Path != tt.path || de.Msg != tt.msg {
				t.Errorf("got %q / %q, want %q / %q", de.Path, de.Msg, tt.path, tt.msg)
			}
			if rest := tt.in[de.Offset:]; !strings.HasPrefix(rest, tt.atPrefix) {
				t.Errorf("offset %d points at %q, want %q", de.Offset, rest, tt.atPrefix)
			}
		})
	}
	var n datasource.Node
	var se *json.SyntaxError
	if err := n.UnmarshalJSON([]byte(`{"_key": `)); !errors.As(err, &se) {
		t.Errorf("syntax: %v", err)
	}
}

// FuzzDocument checks that no input makes decoding panic, and that what decodes
// re-encodes to something that decodes the same.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{`{}`, `{"nodes":[{"_key":"a","handles":{"L":{"point":[{"id":1}]}}}]}`, `{"graph":null}`, `[`, `{"edges":[{"sheet":0}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d datasource.Document
		if err := d.UnmarshalJSON(data); err != nil {
			return
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var d2 datasource.Document
		if err := json.Unmarshal(b, &d2); err != nil {
			t.Fatalf("re-decode %s: %v", b, err)
		}
	})
}
