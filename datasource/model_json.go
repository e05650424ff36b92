package datasource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
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

// Document is the graph file format (DESIGN.md section 2): the format of file:PATH
// sources and of the embedded demo graph. Extra keeps unknown top-level keys.
type Document struct {
	Graph       Graph        `json:"graph"`
	Nodes       []Node       `json:"nodes"`
	Edges       []Edge       `json:"edges"`
	NodeConfigs []NodeConfig `json:"nodeConfigs"`

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

// MarshalJSON writes the known fields, then Extra.
func (g Graph) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", g.Key)
	w.field("name", g.Name)
	w.field("description", g.Description)
	w.field("workspace", g.Workspace)
	w.field("sheets", emptyMap(g.Sheets))
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

// MarshalJSON writes the known fields, then Extra. Embedding is left out when empty.
func (n Node) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", n.Key)
	w.field("type", n.Type)
	w.field("sheet", n.Sheet)
	w.field("process", n.Process)
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

// MarshalJSON writes the known fields, then Extra. Workspace is left out when empty.
func (c NodeConfig) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("_key", c.Key)
	w.field("displayName", c.DisplayName)
	w.field("description", c.Description)
	w.field("category", c.Category)
	w.field("icon", c.Icon)
	w.field("handles", emptyMap(c.Handles))
	if c.Workspace != "" {
		w.field("workspace", c.Workspace)
	} else {
		w.known["workspace"] = true
	}
	w.extra(c.Extra)
	return w.finish()
}

// MarshalJSON writes graph, nodes, edges, nodeConfigs, then Extra.
func (d Document) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.field("graph", d.Graph)
	w.field("nodes", nonNil(d.Nodes))
	w.field("edges", nonNil(d.Edges))
	w.field("nodeConfigs", nonNil(d.NodeConfigs))
	w.extra(d.Extra)
	return w.finish()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---------------------------------------------------------------------------
// Reading

// objectReader hands out the members of one JSON object; what is left once the known
// fields are taken becomes Extra. Like objectWriter it keeps the first error and
// ignores later calls, so a type's UnmarshalJSON is a plain list of its fields.
type objectReader struct {
	data    []byte
	members map[string]json.RawMessage
	err     error
}

// readObject splits data into members. ok is false for a JSON null (a no-op, as
// encoding/json does for null).
func readObject(data []byte) (r *objectReader, ok bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if string(trimmed) == "null" {
		return nil, false, nil
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if !json.Valid(data) {
			var v any
			return nil, false, json.Unmarshal(data, &v) // the syntax error, with its offset
		}
		return nil, false, &DecodeError{Offset: int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n"))),
			Msg: "expected object, got " + jsonKindOf(trimmed)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, err
	}
	return &objectReader{data: data, members: m}, true, nil
}

// take removes and returns a member.
func (r *objectReader) take(key string) (json.RawMessage, bool) {
	raw, ok := r.members[key]
	if ok {
		delete(r.members, key)
	}
	return raw, ok
}

// custom decodes member key with fn, which reports errors relative to raw. The other
// readers are built on it.
func (r *objectReader) custom(key string, fn func(raw []byte) error) {
	if r.err != nil {
		return
	}
	raw, ok := r.take(key)
	if !ok {
		return
	}
	if err := fn(raw); err != nil {
		r.err = r.wrap(key, raw, err)
	}
}

// field decodes member key into dst with encoding/json (dst must be a plain type).
func (r *objectReader) field(key string, dst any) {
	r.custom(key, func(raw []byte) error {
		if isNull(raw) {
			return nil
		}
		return json.Unmarshal(raw, dst)
	})
}

// text decodes member key as a string, accepting a number as its literal text
// (handle ids and sheet ids are sometimes written as 0 rather than "0").
func (r *objectReader) text(key string, dst *string) {
	r.custom(key, func(raw []byte) error {
		t := bytes.TrimSpace(raw)
		if len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
			*dst = string(t)
			return nil
		}
		if isNull(raw) {
			return nil
		}
		return json.Unmarshal(raw, dst)
	})
}

// free decodes member key as free JSON, numbers as json.Number.
func (r *objectReader) free(key string, dst *any) {
	r.custom(key, func(raw []byte) (err error) {
		*dst, err = decodeFree(raw)
		return err
	})
}

// freeMap decodes member key as a free JSON object.
func (r *objectReader) freeMap(key string, dst *map[string]any) {
	r.custom(key, func(raw []byte) error {
		if isNull(raw) {
			return nil
		}
		v, err := decodeFree(raw)
		if err != nil {
			return err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return &DecodeError{Msg: "expected object, got " + jsonKindOf(raw)}
		}
		*dst = m
		return nil
	})
}

// list decodes member key as an array of T, appending to dst.
func list[T any, PT interface {
	*T
	json.Unmarshaler
}](r *objectReader, key string, dst *[]T) {
	r.custom(key, func(raw []byte) error {
		return eachElement(raw, func(_ int, elem []byte) error {
			var v T
			if err := PT(&v).UnmarshalJSON(elem); err != nil {
				return err
			}
			*dst = append(*dst, v)
			return nil
		})
	})
}

// finish returns the first error, or stores the unknown members in extra (nil when
// there are none).
func (r *objectReader) finish(extra *map[string]json.RawMessage) error {
	if r.err != nil {
		return r.err
	}
	if len(r.members) > 0 {
		*extra = r.members
	}
	return nil
}

// wrap turns err, met while decoding member key, into a *DecodeError located in r.data.
func (r *objectReader) wrap(key string, raw []byte, err error) error {
	off := memberOffset(r.data, key)
	return locate(key, off, raw, err)
}

// locate prefixes err with path and moves its offset by off; raw is the value that
// failed (used to find where a type error points).
func locate(path string, off int64, raw []byte, err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return &DecodeError{Path: joinPath(path, de.Path), Offset: off + de.Offset, Msg: de.Msg}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		sub := te.Field
		inner := int64(0)
		if sub != "" {
			// A nested plain value (sheets.x, embedding[3]): point at it when we can.
			inner = pathOffset(raw, sub)
		}
		return &DecodeError{Path: joinPath(path, sub), Offset: off + inner,
			Msg: fmt.Sprintf("expected %s, got %s", kindName(te.Type), valueName(te.Value))}
	}
	return &DecodeError{Path: path, Offset: off, Msg: err.Error()}
}

// joinPath joins "nodes[2]" and "posX" as "nodes[2].posX", "handles" and "[0]" as
// "handles[0]".
func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasPrefix(b, "["):
		return a + b
	}
	return a + "." + b
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

func decodeFree(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// kindName names what a Go type expects, in JSON words.
func kindName(t reflect.Type) string {
	if t == nil {
		return "a different value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// valueName normalises encoding/json's description of a JSON value ("number 1.5").
func valueName(v string) string {
	if i := strings.IndexByte(v, ' '); i > 0 {
		v = v[:i]
	}
	if v == "bool" {
		return "boolean"
	}
	return v
}

// jsonKindOf names the kind of a raw JSON value.
func jsonKindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// memberOffset finds where the value of member key starts in the JSON object data
// (the last occurrence, as decoding keeps the last). Only used on error paths.
func memberOffset(data []byte, key string) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	found := int64(0)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return found
		}
		k, _ := t.(string)
		off := skipSeparators(data, dec.InputOffset())
		if k == key {
			found = off
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return found
		}
	}
	return found
}

// elementOffset finds where element i starts in the JSON array data.
func elementOffset(data []byte, i int) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0
	}
	for n := 0; dec.More(); n++ {
		off := skipSeparators(data, dec.InputOffset())
		if n == i {
			return off
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0
		}
	}
	return 0
}

// pathOffset follows a dotted encoding/json field path ("a.b", "3") in data and
// returns where that value starts; 0 when it cannot be followed.
func pathOffset(data []byte, path string) int64 {
	off := int64(0)
	cur := bytes.TrimSpace(data)
	lead := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
	off += lead
	for _, seg := range strings.Split(path, ".") {
		if seg == "" || len(cur) == 0 {
			return 0
		}
		var next int64
		switch cur[0] {
		case '{':
			next = memberOffset(cur, seg)
		case '[':
			i, err := strconv.Atoi(seg)
			if err != nil {
				return 0
			}
			next = elementOffset(cur, i)
		default:
			return off
		}
		if next == 0 {
			return 0
		}
		off += next
		cur = cur[next:]
		var v json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(cur)).Decode(&v); err != nil {
			return 0
		}
		cur = v
	}
	return off
}

func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// eachElement decodes a JSON array with fn per element; errors are located.
func eachElement(raw []byte, fn func(i int, elem []byte) error) error {
	trimmed := bytes.TrimSpace(raw)
	if isNull(trimmed) {
		return nil
	}
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return &DecodeError{Offset: int64(len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))),
			Msg: "expected array, got " + jsonKindOf(trimmed)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return err
	}
	for i, e := range elems {
		if err := fn(i, e); err != nil {
			return locate("["+strconv.Itoa(i)+"]", elementOffset(raw, i), e, err)
		}
	}
	return nil
}

// eachMember decodes a JSON object with fn per member, in key order; errors are located.
func eachMember(raw []byte, fn func(key string, val []byte) error) error {
	r, ok, err := readObject(raw)
	if err != nil || !ok {
		return err
	}
	keys := make([]string, 0, len(r.members))
	for k := range r.members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.members[k]
		if err := fn(k, v); err != nil {
			return locate(k, memberOffset(r.data, k), v, err)
		}
	}
	return nil
}

func decodeHandles(raw []byte) (map[string]HandleGroup, error) {
	if isNull(raw) {
		return nil, nil
	}
	out := map[string]HandleGroup{}
	err := eachMember(raw, func(key string, val []byte) error {
		var g HandleGroup
		if err := g.UnmarshalJSON(val); err != nil {
			return err
		}
		out[key] = g
		return nil
	})
	return out, err
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (g *Graph) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out Graph
	r.field("_key", &out.Key)
	r.field("name", &out.Name)
	r.field("description", &out.Description)
	r.field("workspace", &out.Workspace)
	r.custom("sheets", func(raw []byte) error {
		if isNull(raw) {
			return nil
		}
		out.Sheets = map[string]string{}
		return eachMember(raw, func(id string, val []byte) error {
			var name string
			if err := json.Unmarshal(val, &name); err != nil {
				return err
			}
			out.Sheets[id] = name
			return nil
		})
	})
	r.freeMap("metadata", &out.Metadata)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*g = out
	return nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra. A point id
// given as a number (0) is read as its text ("0").
func (p *HandlePoint) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out HandlePoint
	r.text("id", &out.ID)
	r.field("type", &out.Type)
	r.field("accept", &out.Accept)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*p = out
	return nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (h *HandleGroup) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out HandleGroup
	r.field("position", &out.Position)
	list(r, "point", &out.Point)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*h = out
	return nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra. Data is free
// JSON with numbers as json.Number.
func (n *Node) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out Node
	r.field("_key", &out.Key)
	r.field("type", &out.Type)
	r.text("sheet", &out.Sheet)
	r.field("process", &out.Process)
	r.custom("handles", func(raw []byte) (err error) {
		out.Handles, err = decodeHandles(raw)
		return err
	})
	r.free("data", &out.Data)
	r.field("posX", &out.PosX)
	r.field("posY", &out.PosY)
	r.field("size", &out.Size)
	r.field("embedding", &out.Embedding)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*n = out
	return nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (e *Edge) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out Edge
	r.field("_key", &out.Key)
	r.text("sheet", &out.Sheet)
	r.field("source", &out.Source)
	r.text("sourceHandle", &out.SourceHandle)
	r.field("target", &out.Target)
	r.text("targetHandle", &out.TargetHandle)
	r.field("label", &out.Label)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*e = out
	return nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (c *NodeConfig) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil || !ok {
		return err
	}
	var out NodeConfig
	r.field("_key", &out.Key)
	r.field("displayName", &out.DisplayName)
	r.field("description", &out.Description)
	r.field("category", &out.Category)
	r.field("icon", &out.Icon)
	r.custom("handles", func(raw []byte) (err error) {
		out.Handles, err = decodeHandles(raw)
		return err
	})
	r.field("workspace", &out.Workspace)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*c = out
	return nil
}

// UnmarshalJSON reads a graph file. Errors are *json.SyntaxError for malformed JSON
// and *DecodeError (path and offset relative to data) for values of the wrong kind.
func (d *Document) UnmarshalJSON(data []byte) error {
	r, ok, err := readObject(data)
	if err != nil {
		return err
	}
	if !ok {
		return &DecodeError{Msg: "expected object, got null"}
	}
	var out Document
	r.custom("graph", out.Graph.UnmarshalJSON)
	list(r, "nodes", &out.Nodes)
	list(r, "edges", &out.Edges)
	list(r, "nodeConfigs", &out.NodeConfigs)
	if err := r.finish(&out.Extra); err != nil {
		return err
	}
	*d = out
	return nil
}
