package datasource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// JSON for the graph model. Every type keeps the fields this client does not know in
// Extra and writes them back, so a graph file edited by this client loses nothing the
// Nodius editor (or a newer version of it) put there. Known fields are written first,
// in declaration order, then the unknown ones sorted by name.
//
// Free JSON (Node.Data, Graph.Metadata) is decoded with json.Number for numbers, so
// a value such as 12345678901234567890 or 1.10 is written back exactly as it was read
// (object keys inside it are written sorted, as encoding/json writes maps).
// Code reading Data must therefore expect json.Number (not float64) for numbers.
//
// Decoding errors are *DecodeError values naming the field path and the byte offset
// of the offending value, so a file source can say "graph.json:12:5: nodes[2].posX:
// expected number, got string".

// DecodeError says which value of a JSON document does not fit the graph model.
type DecodeError struct {
	// Path of the value: "posX", "handles.L.point[0].id", "nodes[2].posX"; empty for
	// the decoded value itself.
	Path string
	// Offset is the byte offset where the offending value starts, relative to the
	// data given to UnmarshalJSON.
	Offset int64
	// Msg says what is wrong: "expected number, got string".
	Msg string
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Document is the graph file format (docs/reference.md): the format of file:PATH
// sources and of the embedded demo graph. Extra keeps unknown top-level keys.
//
// Format is the format the document was read in and is written in: Nodius's own
// (FormatNodius) or this project's earlier one (FormatEarlier); FormatAuto (the
// zero value, for documents made in memory) picks one that loses nothing.
type Document struct {
	Graph       Graph        `json:"graph"`
	Nodes       []Node       `json:"nodes"`
	Edges       []Edge       `json:"edges"`
	NodeConfigs []NodeConfig `json:"nodeConfigs"`
	Format      Format       `json:"-"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Snapshot returns the document as a Snapshot (sharing its slices).
func (d Document) Snapshot() Snapshot {
	return Snapshot{Graph: d.Graph, Nodes: d.Nodes, Edges: d.Edges, Configs: d.NodeConfigs}
}

// DocumentFromSnapshot is the inverse of Document.Snapshot; extra carries the unknown
// top-level keys to write back (may be nil).
func DocumentFromSnapshot(s Snapshot, extra map[string]json.RawMessage) Document {
	return Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs, Extra: extra}
}

// ---------------------------------------------------------------------------
// Writing

// objectWriter writes a JSON object field by field, without HTML escaping (process
// code is full of < and >; a graph file should stay readable).
type objectWriter struct {
	buf   bytes.Buffer
	n     int
	known map[string]bool
	err   error
}

func newObjectWriter() *objectWriter {
	w := &objectWriter{known: map[string]bool{}}
	w.buf.WriteByte('{')
	return w
}

func (w *objectWriter) key(k string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.buf.Write(marshalNoEscape(k))
	w.buf.WriteByte(':')
}

func (w *objectWriter) field(k string, v any) {
	w.known[k] = true
	if w.err != nil {
		return
	}
	b, err := encodeNoEscape(v)
	if err != nil {
		w.err = fmt.Errorf("%s: %w", k, err)
		return
	}
	w.key(k)
	w.buf.Write(b)
}

func (w *objectWriter) extra(extra map[string]json.RawMessage) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !w.known[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := bytes.TrimSpace(extra[k])
		if len(raw) == 0 {
			raw = []byte("null")
		}
		w.key(k)
		w.buf.Write(raw)
	}
}

func (w *objectWriter) finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

func encodeNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func marshalNoEscape(s string) []byte {
	b, err := encodeNoEscape(s)
	if err != nil { // cannot happen for a string
		return []byte(strconv.Quote(s))
	}
	return b
}

// emptyMap makes nil maps write as {} rather than null: the file format has objects there.
func emptyMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// MarshalJSON writes the known fields, then Extra; sheet names as sheetsList.
func (g Graph) MarshalJSON() ([]byte, error) { return g.marshal(FormatNodius) }

// sheetsMember is the name of the sheet names in format f.
func sheetsMember(f Format) string {
	if f == FormatEarlier {
		return "sheets"
	}
	return "sheetsList"
}

func (g Graph) marshal(f Format) ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", g.Key)
	w.field("name", g.Name)
	w.field("description", g.Description)
	w.field("workspace", g.Workspace)
	w.field(sheetsMember(f), emptyMap(g.Sheets))
	w.field("metadata", emptyMap(g.Metadata))
	w.extra(g.Extra)
	return w.finish()
}

// MarshalJSON writes the known fields, then Extra.
func (p HandlePoint) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("id", p.ID)
	w.field("type", p.Type)
	w.field("accept", p.Accept)
	w.extra(p.Extra)
	return w.finish()
}

// MarshalJSON writes the known fields, then Extra.
func (h HandleGroup) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("position", h.Position)
	pts := h.Point
	if pts == nil {
		pts = []HandlePoint{}
	}
	w.field("point", pts)
	w.extra(h.Extra)
	return w.finish()
}

// MarshalJSON writes the known fields, process included (the in-memory form, which
// carries the code resolved from the node's type; a process member of the node's
// own, if any, goes as ownProcess), then Extra. Embedding is left out when empty.
func (n Node) MarshalJSON() ([]byte, error) { return n.marshal(FormatEarlier) }

// ownProcessMember carries a node's own process member in the in-memory form.
const ownProcessMember = "ownProcess"

// marshal writes the node as a document in format f holds it: in Nodius's
// format without process (a node's code is its type's).
func (n Node) marshal(f Format) ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", n.Key)
	w.field("type", n.Type)
	w.field("sheet", n.Sheet)
	if f == FormatEarlier {
		w.field("process", n.Process)
		if own, ok := n.Extra["process"]; ok {
			// The node's own process member beside the code shown (a node of a
			// Nodius document carrying one): kept under another name, so an undo
			// record or a cached copy of the node loses neither.
			w.field(ownProcessMember, own)
		}
	}
	w.field("handles", emptyMap(n.Handles))
	w.field("data", n.Data)
	w.field("posX", n.PosX)
	w.field("posY", n.PosY)
	w.field("size", n.Size)
	if len(n.Embedding) > 0 {
		w.field("embedding", n.Embedding)
	} else {
		w.known["embedding"] = true
	}
	w.extra(n.Extra)
	return w.finish()
}

// MarshalJSON writes the known fields, then Extra.
func (e Edge) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", e.Key)
	w.field("sheet", e.Sheet)
	w.field("source", e.Source)
	w.field("sourceHandle", e.SourceHandle)
	w.field("target", e.Target)
	w.field("targetHandle", e.TargetHandle)
	w.field("label", e.Label)
	w.extra(e.Extra)
	return w.finish()
}

// MarshalJSON writes the config as Nodius does (handles and process inside node),
// then Extra. Workspace is left out when empty.
func (c NodeConfig) MarshalJSON() ([]byte, error) { return c.marshal(FormatNodius) }

// marshal writes the config in format f: nested, or flat as earlier files had it
// (process written there only when the config has code).
func (c NodeConfig) marshal(f Format) ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", c.Key)
	w.field("displayName", c.DisplayName)
	w.field("description", c.Description)
	w.field("category", c.Category)
	w.field("icon", c.Icon)
	if f == FormatEarlier {
		w.field("handles", emptyMap(c.Handles))
		if c.Process != "" {
			w.field("process", c.Process)
		}
	}
	if c.Workspace != "" {
		w.field("workspace", c.Workspace)
	} else {
		w.known["workspace"] = true
	}
	if f != FormatEarlier {
		nw := newObjectWriter()
		nw.field("handles", emptyMap(c.Handles))
		nw.field("process", c.Process)
		nw.extra(c.NodeExtra)
		b, err := nw.finish()
		if err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		w.field("node", json.RawMessage(b))
	} else {
		w.extra(flatNodeMembers(&c))
	}
	w.extra(c.Extra)
	return w.finish()
}

// MarshalJSON writes graph, nodes, edges, nodeConfigs, then Extra, in
// d.WriteFormat().
func (d Document) MarshalJSON() ([]byte, error) {
	d.Format = d.WriteFormat()
	w := newObjectWriter()
	g, err := d.Graph.marshal(d.Format)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	w.field("graph", json.RawMessage(g))
	nodes := make([]json.RawMessage, len(d.Nodes))
	for i, n := range d.Nodes {
		if nodes[i], err = n.marshal(d.Format); err != nil {
			return nil, fmt.Errorf("nodes[%d]: %w", i, err)
		}
	}
	w.field("nodes", nodes)
	w.field("edges", nonNil(d.Edges))
	configs := make([]json.RawMessage, len(d.NodeConfigs))
	for i, c := range d.NodeConfigs {
		if configs[i], err = c.marshal(d.Format); err != nil {
			return nil, fmt.Errorf("nodeConfigs[%d]: %w", i, err)
		}
	}
	w.field("nodeConfigs", configs)
	w.extra(d.Extra)
	return w.finish()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
