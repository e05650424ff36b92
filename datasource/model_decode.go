package datasource

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Reading the graph model: one pass over the bytes with a streaming tokenizer
// (jsontext, the tokenizer of encoding/json/v2), each value decoded where it
// stands. A 100,000-node file is read in well under a second this way; decoding
// each level with encoding/json (object → map of raw members → each member) went
// over the same bytes once per level of nesting and took ten times as long.
//
// What is accepted is what encoding/json accepts, with the same results: a null
// leaves a value as it was, the last of repeated members wins, invalid UTF-8
// becomes U+FFFD, and a malformed document gives encoding/json's *json.SyntaxError.
// Offsets in a *DecodeError are from the start of the bytes decoded.

// decoder reads one JSON document.
type decoder struct {
	data []byte
	dec  *jsontext.Decoder
	// strs interns short strings that repeat across a graph (types, sheets,
	// handle ids and sides), so 100,000 nodes do not hold 100,000 copies of "0".
	strs map[string]string
	// handleSets shares one decoded value among the nodes whose handles are the
	// same text (nodes of a type usually are): 100,000 nodes held about 80 MB of
	// handle maps each their own. Handle maps are never changed in place (a change
	// replaces a node's map with a copy: CloneHandles), so sharing is safe.
	handleSets map[string]map[string]HandleGroup
	// What tells the two file formats apart (see Document.Format).
	sheetsList, earlierSheets, nodeProcess, flatConfig, nestedConfig bool
	// standalone: decoding one node's in-memory form (Node.UnmarshalJSON), where
	// ownProcess is the node's own process member.
	standalone bool
}

func newDecoder(data []byte) *decoder {
	// A *bytes.Buffer is read in place: the values handed out alias data, which is
	// never written, so they stay valid after the next read.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return &decoder{data: data, dec: dec, strs: make(map[string]string)}
}

// decodeWhole decodes data with fn and checks that only white space follows.
// Malformed JSON anywhere in data is reported as encoding/json reports it, even
// when fn stopped earlier on a value of the wrong kind.
func decodeWhole(data []byte, fn func(d *decoder) error) error {
	d := newDecoder(data)
	err := fn(d)
	if err == nil && len(bytes.TrimLeft(data[d.dec.InputOffset():], " \t\r\n")) > 0 {
		err = errors.New("data after the JSON value")
	}
	if err == nil {
		return nil
	}
	if !json.Valid(data) {
		return json.Unmarshal(data, new(struct{})) // the *json.SyntaxError, with its offset
	}
	return err
}

// at prefixes the path of a *DecodeError; other errors pass unchanged.
func at(path string, err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return &DecodeError{Path: joinPath(path, de.Path), Offset: de.Offset, Msg: de.Msg}
	}
	return err
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

// next is where the next value starts.
func (d *decoder) next() int64 {
	data, off := d.data, d.dec.InputOffset()
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

// mismatch reports that the next value is not of the kind wanted.
func (d *decoder) mismatch(want string) error {
	return &DecodeError{Offset: d.next(), Msg: "expected " + want + ", got " + kindName(d.dec.PeekKind())}
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// null reads a null when it comes next (a null leaves the value as it was).
func (d *decoder) null() (bool, error) {
	if d.dec.PeekKind() != 'n' {
		return false, nil
	}
	_, err := d.dec.ReadToken()
	return true, err
}

// object reads an object, calling member with each name while the decoder stands
// at its value, which member must read.
func (d *decoder) object(member func(name []byte) error) error {
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '{' {
		return d.mismatch("object")
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for d.dec.PeekKind() != '}' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		name := unquote(raw)
		if err := member(name); err != nil {
			return at(string(name), err)
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

// array reads an array, calling elem for each element.
func (d *decoder) array(elem func(i int) error) error {
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '[' {
		return d.mismatch("array")
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for i := 0; d.dec.PeekKind() != ']'; i++ {
		if err := elem(i); err != nil {
			return at("["+strconv.Itoa(i)+"]", err)
		}
	}
	_, err := d.dec.ReadToken()
	return err
}

// unquote returns the text of a JSON string as read (quotes included). Plain
// strings are sliced; those with escapes or invalid UTF-8 are decoded as
// encoding/json does.
func unquote(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return raw
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body
	}
	if utf8.Valid(body) {
		if out, err := jsontext.AppendUnquote(nil, raw); err == nil {
			return out
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return body
	}
	return []byte(s)
}

// str reads a string (or a null).
func (d *decoder) str(dst *string) error {
	*dst = "" // a repeated member: the last one decides, as encoding/json does
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '"' {
		return d.mismatch("string")
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	*dst = string(unquote(raw))
	return nil
}

// short reads a string that is likely to repeat across the graph, interned.
func (d *decoder) short(dst *string) error {
	*dst = ""
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '"' {
		return d.mismatch("string")
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	*dst = d.intern(unquote(raw))
	return nil
}

func (d *decoder) intern(b []byte) string {
	if len(b) > 32 {
		return string(b)
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.strs) < 1<<14 {
		d.strs[s] = s
	}
	return s
}

// text reads a string, or a number as its literal text (handle and sheet ids are
// sometimes written 0 rather than "0").
func (d *decoder) text(dst *string) error {
	if d.dec.PeekKind() == '0' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		*dst = d.intern(raw)
		return nil
	}
	return d.short(dst)
}

// float reads a number (or a null) of the given bit size.
func (d *decoder) float(bits int) (float64, bool, error) {
	if null, err := d.null(); null || err != nil {
		return 0, false, err
	}
	if d.dec.PeekKind() != '0' {
		return 0, false, d.mismatch("number")
	}
	off := d.next()
	raw, err := d.dec.ReadValue()
	if err != nil {
		return 0, false, err
	}
	f, err := strconv.ParseFloat(string(raw), bits)
	if err != nil {
		return 0, false, &DecodeError{Offset: off, Msg: "number " + string(raw) + " is out of range"}
	}
	return f, true, nil
}

func (d *decoder) float64(dst *float64) error {
	*dst = 0
	f, ok, err := d.float(64)
	if ok {
		*dst = f
	}
	return err
}

// float32s reads an array of numbers.
func (d *decoder) float32s(dst *[]float32) error {
	*dst = nil
	if null, err := d.null(); null || err != nil {
		return err
	}
	out := []float32{}
	err := d.array(func(int) error {
		f, _, err := d.float(32)
		out = append(out, float32(f))
		return err
	})
	if err == nil {
		*dst = out
	}
	return err
}

// skip reads a value and forgets it.
func (d *decoder) skip() error {
	_, err := d.dec.ReadValue()
	return err
}

// raw reads a value as its JSON text (a copy).
func (d *decoder) raw() (json.RawMessage, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), v...), nil
}

// extra keeps an unknown member.
func (d *decoder) extra(dst *map[string]json.RawMessage, name []byte) error {
	k := string(name) // before the next read: a streamed name does not outlive it
	v, err := d.raw()
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = make(map[string]json.RawMessage)
	}
	(*dst)[k] = v
	return nil
}

// free reads free JSON: objects as map[string]any, arrays as []any, numbers as
// json.Number.
func (d *decoder) free() (any, error) {
	switch d.dec.PeekKind() {
	case '{':
		m := map[string]any{}
		err := d.object(func(name []byte) error {
			k := string(name)
			v, err := d.free()
			m[k] = v
			return err
		})
		return m, err
	case '[':
		s := []any{}
		err := d.array(func(int) error {
			v, err := d.free()
			s = append(s, v)
			return err
		})
		return s, err
	case '"':
		var s string
		err := d.str(&s)
		return s, err
	case '0':
		raw, err := d.dec.ReadValue()
		return json.Number(raw), err
	}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil // null
}

// freeMap reads free JSON that must be an object (or null).
func (d *decoder) freeMap(dst *map[string]any) error {
	*dst = nil
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '{' {
		return d.mismatch("object")
	}
	v, err := d.free()
	if m, ok := v.(map[string]any); ok && err == nil {
		*dst = m
	}
	return err
}

func (d *decoder) size(dst *Size) error {
	// As encoding/json decodes a struct: names match regardless of case, others
	// are ignored.
	*dst = Size{}
	return d.object(func(name []byte) error {
		switch {
		case bytes.EqualFold(name, []byte("width")):
			return d.float64(&dst.Width)
		case bytes.EqualFold(name, []byte("height")):
			return d.float64(&dst.Height)
		case bytes.EqualFold(name, []byte("dynamic")):
			if d.dec.PeekKind() == 't' || d.dec.PeekKind() == 'f' {
				tok, err := d.dec.ReadToken()
				dst.Dynamic = err == nil && tok.Bool()
				return err
			}
		}
		return d.skip()
	})
}

// record reads an object with field, called with each member name while the
// decoder stands at its value, then calls keep. A null leaves the value as it
// was, and so does an error: field reads into a fresh value, which keep stores
// only when all went well, as encoding/json leaves a struct it could not decode.
// (Not generic on purpose: through a generic helper the fresh value escaped to
// the heap, one more allocation per node, edge and handle.)
func (d *decoder) record(field func(name []byte) error, keep func()) error {
	if null, err := d.null(); null || err != nil {
		return err
	}
	err := d.object(field)
	if err == nil {
		keep()
	}
	return err
}

func (d *decoder) graph(g *Graph) error {
	var out Graph
	sheetsList := false
	return d.record(func(name []byte) error {
		if string(name) == "sheetsList" {
			sheetsList = true
		}
		return d.graphField(&out, name)
	}, func() {
		// An earlier file names its sheets "sheets"; beside a sheetsList, sheets is
		// something else (the server's in-memory map), kept as it is.
		if raw, ok := out.Extra["sheets"]; ok && !sheetsList {
			var names map[string]string
			if json.Unmarshal(raw, &names) == nil {
				out.Sheets = names
				delete(out.Extra, "sheets")
				d.earlierSheets = true
			}
		}
		d.sheetsList = d.sheetsList || sheetsList
		*g = out
	})
}

func (d *decoder) graphField(out *Graph, name []byte) error {
	switch string(name) {
	case "_key":
		return d.str(&out.Key)
	case "name":
		return d.str(&out.Name)
	case "description":
		return d.str(&out.Description)
	case "workspace":
		return d.str(&out.Workspace)
	case "sheetsList":
		out.Sheets = nil
		if null, err := d.null(); null || err != nil {
			return err
		}
		out.Sheets = map[string]string{}
		return d.object(func(id []byte) error {
			k := string(id)
			var name string
			err := d.str(&name)
			out.Sheets[k] = name
			return err
		})
	case "metadata":
		return d.freeMap(&out.Metadata)
	}
	return d.extra(&out.Extra, name)
}

func (d *decoder) handlePoint(p *HandlePoint) error {
	var out HandlePoint
	return d.record(func(name []byte) error { return d.handlePointField(&out, name) }, func() { *p = out })
}

func (d *decoder) handlePointField(out *HandlePoint, name []byte) error {
	switch string(name) {
	case "id":
		return d.text(&out.ID)
	case "type":
		return d.short(&out.Type)
	case "accept":
		return d.short(&out.Accept)
	}
	return d.extra(&out.Extra, name)
}

func (d *decoder) handleGroup(h *HandleGroup) error {
	var out HandleGroup
	return d.record(func(name []byte) error { return d.handleGroupField(&out, name) }, func() { *h = out })
}

func (d *decoder) handleGroupField(out *HandleGroup, name []byte) error {
	switch string(name) {
	case "position":
		return d.short(&out.Position)
	case "point":
		out.Point = nil
		return d.array(func(int) error {
			var p HandlePoint
			err := d.handlePoint(&p)
			out.Point = append(out.Point, p)
			return err
		})
	}
	return d.extra(&out.Extra, name)
}

func (d *decoder) handles(dst *map[string]HandleGroup) error {
	*dst = nil
	if null, err := d.null(); null || err != nil {
		return err
	}
	if d.dec.PeekKind() != '{' || d.data == nil {
		return d.handleSides(dst)
	}
	off := d.next()
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	if h, ok := d.handleSets[string(raw)]; ok {
		*dst = h
		return nil
	}
	sub := &decoder{data: raw, dec: jsontext.NewDecoder(bytes.NewBuffer(raw),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)), strs: d.strs}
	if err := sub.handleSides(dst); err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Offset += off
		}
		return err
	}
	const maxShared, maxLen = 1 << 12, 4 << 10
	if len(raw) <= maxLen && len(d.handleSets) < maxShared {
		if d.handleSets == nil {
			d.handleSets = make(map[string]map[string]HandleGroup)
		}
		d.handleSets[string(raw)] = *dst
	}
	return nil
}

// handleSides reads a handles object: side → group.
func (d *decoder) handleSides(dst *map[string]HandleGroup) error {
	out := map[string]HandleGroup{}
	err := d.object(func(side []byte) error {
		k := d.intern(side)
		var g HandleGroup
		err := d.handleGroup(&g)
		out[k] = g
		return err
	})
	*dst = out
	return err
}

func (d *decoder) node(n *Node) error {
	var out Node
	return d.record(func(name []byte) error { return d.nodeField(&out, name) }, func() { *n = out })
}

func (d *decoder) nodeField(out *Node, name []byte) error {
	switch string(name) {
	case "_key":
		return d.str(&out.Key)
	case "type":
		return d.short(&out.Type)
	case "sheet":
		return d.text(&out.Sheet)
	case "process":
		d.nodeProcess = true
		return d.str(&out.Process)
	case "handles":
		return d.handles(&out.Handles)
	case "data":
		v, err := d.free()
		out.Data = v
		return err
	case "posX":
		return d.float64(&out.PosX)
	case "posY":
		return d.float64(&out.PosY)
	case "size":
		return d.size(&out.Size)
	case "embedding":
		return d.float32s(&out.Embedding)
	case ownProcessMember:
		if d.standalone {
			return d.extra(&out.Extra, []byte("process"))
		}
	}
	return d.extra(&out.Extra, name)
}

func (d *decoder) edge(e *Edge) error {
	var out Edge
	return d.record(func(name []byte) error { return d.edgeField(&out, name) }, func() { *e = out })
}

func (d *decoder) edgeField(out *Edge, name []byte) error {
	switch string(name) {
	case "_key":
		return d.str(&out.Key)
	case "sheet":
		return d.text(&out.Sheet)
	case "source":
		return d.str(&out.Source)
	case "sourceHandle":
		return d.text(&out.SourceHandle)
	case "target":
		return d.str(&out.Target)
	case "targetHandle":
		return d.text(&out.TargetHandle)
	case "label":
		return d.short(&out.Label)
	}
	return d.extra(&out.Extra, name)
}

func (d *decoder) nodeConfig(c *NodeConfig) error {
	var out NodeConfig
	nested := false
	return d.record(func(name []byte) error {
		if string(name) == "node" && d.dec.PeekKind() == '{' {
			nested = true
		}
		return d.nodeConfigField(&out, name)
	}, func() {
		if !nested {
			liftNodeMembers(&out)
		}
		*c = out
	})
}

// flatNodeNames are the members of Nodius's config.node that a flat config (the
// earlier format) keeps beside its others: what a type change gives it.
var flatNodeNames = [...]string{"type", "posX", "posY", "size"}

// liftNodeMembers moves a flat config's node members from Extra to NodeExtra, where
// a nested config has them: written back flat in the earlier format
// (flatNodeMembers), and inside "node" when the file is converted to Nodius's,
// whose createNodeFromConfig reads config.node.size.
func liftNodeMembers(c *NodeConfig) {
	for _, k := range flatNodeNames {
		if raw, ok := c.Extra[k]; ok {
			setExtra(&c.NodeExtra, k, raw)
			delete(c.Extra, k)
		}
	}
	if len(c.Extra) == 0 {
		c.Extra = nil
	}
}

func (d *decoder) nodeConfigField(out *NodeConfig, name []byte) error {
	switch string(name) {
	case "_key":
		return d.str(&out.Key)
	case "displayName":
		return d.str(&out.DisplayName)
	case "description":
		return d.str(&out.Description)
	case "category":
		return d.str(&out.Category)
	case "icon":
		return d.str(&out.Icon)
	case "handles": // an earlier, flat config
		d.flatConfig = true
		return d.handles(&out.Handles)
	case "process":
		return d.str(&out.Process)
	case "workspace":
		return d.str(&out.Workspace)
	case "node":
		if k := d.dec.PeekKind(); k != '{' {
			return d.extra(&out.Extra, name)
		}
		d.nestedConfig = true
		out.NodeExtra = nil
		return d.object(func(member []byte) error {
			switch string(member) {
			case "handles":
				return d.handles(&out.Handles)
			case "process":
				return d.str(&out.Process)
			}
			return d.extra(&out.NodeExtra, member)
		})
	}
	return d.extra(&out.Extra, name)
}

// Span is where one value lies in a document: data[Start:End].
type Span struct{ Start, End int64 }

// Spans locate a decoded document's nodes and edges in its bytes, in order.
type Spans struct {
	Nodes, Edges []Span
}

// document reads a graph document; spans, when not nil, is filled.
func (d *decoder) document(doc *Document, spans *Spans) error {
	if null, err := d.null(); null || err != nil {
		if err == nil {
			err = &DecodeError{Msg: "expected object, got null"}
		}
		return err
	}
	var out Document
	err := d.object(func(name []byte) error {
		switch string(name) {
		case "graph":
			out.Graph = Graph{}
			return d.graph(&out.Graph)
		case "nodes":
			var nodes chunks[Node]
			var where chunks[Span]
			err := d.array(func(int) error {
				start := d.next()
				err := d.node(nodes.next())
				if spans != nil {
					*where.next() = Span{start, d.dec.InputOffset()}
				}
				return err
			})
			out.Nodes = nodes.slice()
			if spans != nil {
				spans.Nodes = where.slice()
			}
			return err
		case "edges":
			var edges chunks[Edge]
			var where chunks[Span]
			err := d.array(func(int) error {
				start := d.next()
				err := d.edge(edges.next())
				if spans != nil {
					*where.next() = Span{start, d.dec.InputOffset()}
				}
				return err
			})
			out.Edges = edges.slice()
			if spans != nil {
				spans.Edges = where.slice()
			}
			return err
		case "nodeConfigs":
			out.NodeConfigs = nil
			return d.array(func(int) error {
				var c NodeConfig
				err := d.nodeConfig(&c)
				out.NodeConfigs = append(out.NodeConfigs, c)
				return err
			})
		}
		return d.extra(&out.Extra, name)
	})
	if err == nil {
		out.Format = d.format()
		if out.Format == FormatNodius {
			if d.nodeProcess { // not the node's code here: kept as it is
				for i := range out.Nodes {
					if n := &out.Nodes[i]; n.Process != "" {
						raw, _ := json.Marshal(n.Process)
						setExtra(&n.Extra, "process", raw)
					}
				}
			}
			out.ResolveCode()
		}
		*doc = out
	}
	return err
}

// chunks gathers the elements of a long array (a big graph's nodes and edges) in
// chunks, then copies them once into a slice of the exact length. Appending to one
// slice grew it by a quarter at a time past a few hundred elements: for 100,000
// nodes that allocated and copied the slice about five times over, a third of a
// second of a cold start. The file does not say how many elements come, and
// counting them first would mean reading it twice.
type chunks[T any] struct {
	full [][]T // chunks filled
	cur  []T   // the chunk being filled
	n    int
}

// maxChunk is the largest chunk, in elements: big enough that a 100,000-element
// array is a few dozen chunks, small enough that the last chunk wastes little.
const maxChunk = 4096

// next returns a zero element added at the end, to decode into.
func (c *chunks[T]) next() *T {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, min(max(2*cap(c.cur), 16), maxChunk))
	}
	c.cur = c.cur[:len(c.cur)+1]
	c.n++
	return &c.cur[len(c.cur)-1]
}

// slice returns the elements in order: nil when there are none, the one chunk when
// it holds them all.
func (c *chunks[T]) slice() []T {
	if len(c.full) == 0 {
		return c.cur
	}
	out := make([]T, 0, c.n)
	for _, ch := range c.full {
		out = append(out, ch...)
	}
	return append(out, c.cur...)
}

// format decides which format the document read is in: Nodius's when its graph
// has a sheetsList or when nothing says otherwise; the earlier one when its sheet
// names are "sheets", its nodes carry "process" or its configs are flat.
func (d *decoder) format() Format {
	switch {
	case d.sheetsList || d.nestedConfig:
		return FormatNodius
	case d.earlierSheets || d.nodeProcess || d.flatConfig:
		return FormatEarlier
	}
	return FormatNodius
}

// DecodeDocument reads a graph file as Document.UnmarshalJSON does, and also says
// where each node and edge lies in data, so that one can be read again alone.
func DecodeDocument(data []byte) (Document, Spans, error) {
	var doc Document
	var spans Spans
	err := decodeWhole(data, func(d *decoder) error { return d.document(&doc, &spans) })
	if err != nil {
		return Document{}, Spans{}, err
	}
	return doc, spans, nil
}

// PeekGraph reads the graph object of a graph file, stopping as soon as it is
// read: it usually comes first, so this reads a few hundred bytes of a file of any
// size. ok is false when the file has no graph object. The graph is decoded as
// when the whole file is read (if the file repeats the member, this is the first).
func PeekGraph(r io.Reader) (g Graph, ok bool, err error) {
	d := &decoder{dec: jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
		strs: make(map[string]string)}
	if tok, err := d.dec.ReadToken(); err != nil {
		return Graph{}, false, err
	} else if tok.Kind() != '{' {
		return Graph{}, false, errors.New("not a graph file: it should hold a JSON object")
	}
	for d.dec.PeekKind() != '}' {
		name, err := d.dec.ReadToken()
		if err != nil {
			return Graph{}, false, err
		}
		if name.String() != "graph" || d.dec.PeekKind() != '{' {
			if err := d.dec.SkipValue(); err != nil {
				return Graph{}, false, err
			}
			continue
		}
		if err := d.graph(&g); err != nil {
			return Graph{}, false, err
		}
		return g, true, nil
	}
	return Graph{}, false, nil
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (g *Graph) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { return d.graph(g) })
}

// UnmarshalJSON reads the known fields and keeps the others in Extra. A point id
// given as a number (0) is read as its text ("0").
func (p *HandlePoint) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { return d.handlePoint(p) })
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (h *HandleGroup) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { return d.handleGroup(h) })
}

// UnmarshalJSON reads the known fields and keeps the others in Extra. Data is free
// JSON with numbers as json.Number.
func (n *Node) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { d.standalone = true; return d.node(n) })
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (e *Edge) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { return d.edge(e) })
}

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (c *NodeConfig) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(d *decoder) error { return d.nodeConfig(c) })
}

// UnmarshalJSON reads a graph file. Errors are *json.SyntaxError for malformed JSON
// and *DecodeError (path and offset relative to data) for values of the wrong kind.
func (d *Document) UnmarshalJSON(data []byte) error {
	return decodeWhole(data, func(dec *decoder) error { return dec.document(d, nil) })
}
