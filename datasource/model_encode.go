package datasource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EncodeDocument returns d as a graph file (WriteDocument).
func EncodeDocument(d Document) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteDocument(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteDocument writes d to w as a graph file: two-space indentation, no HTML
// escaping, a final newline. The bytes are exactly those of a json.Encoder with
// SetEscapeHTML(false) and SetIndent("", "  ") over d (the MarshalJSON methods'
// order: known fields first, then Extra sorted by name), written in one pass in
// chunks of about 64 KiB: a 100,000-node graph is rewritten after each approval,
// and going through encoding/json (a map, a buffer and a validation per node, then
// the whole file compacted and indented again, in memory) took seconds.
func WriteDocument(w io.Writer, d Document) error {
	e := &encoder{buf: make([]byte, 0, 2*flushAt), w: w}
	e.document(d)
	e.buf = append(e.buf, '\n')
	e.flush()
	return e.err
}

// flushAt is how many bytes the encoder gathers before writing them out.
const flushAt = 64 << 10

// encoder appends JSON to buf, indented by two spaces per level, and writes it to
// w by chunks. The first error stops it (every later call does nothing useful).
type encoder struct {
	buf    []byte
	w      io.Writer // where buf goes once it holds flushAt bytes
	depth  int
	counts []int // values written in each open object or array
	err    error
}

// flush writes out what buf holds.
func (e *encoder) flush() {
	if len(e.buf) == 0 {
		return
	}
	if e.err == nil {
		if _, err := e.w.Write(e.buf); err != nil {
			e.err = err
		}
	}
	e.buf = e.buf[:0]
}

// maybeFlush writes buf out once it is big enough; called between the elements of
// the document's long arrays.
func (e *encoder) maybeFlush() {
	if len(e.buf) >= flushAt {
		e.flush()
	}
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
}

func (e *encoder) newline() {
	e.buf = append(e.buf, '\n')
	for range e.depth {
		e.buf = append(e.buf, ' ', ' ')
	}
}

// open starts an object ('{') or an array ('[').
func (e *encoder) open(c byte) {
	e.buf = append(e.buf, c)
	e.depth++
	e.counts = append(e.counts, 0)
}

// close ends what open started; an empty one stays on its line ("{}", "[]").
func (e *encoder) close(c byte) {
	n := e.counts[len(e.counts)-1]
	e.counts = e.counts[:len(e.counts)-1]
	e.depth--
	if n > 0 {
		e.newline()
	}
	e.buf = append(e.buf, c)
}

// elem starts the next element of the innermost array or object.
func (e *encoder) elem() {
	if e.counts[len(e.counts)-1] > 0 {
		e.buf = append(e.buf, ',')
	}
	e.counts[len(e.counts)-1]++
	e.newline()
}

// key starts the member k of the innermost object.
func (e *encoder) key(k string) {
	e.elem()
	e.buf = appendString(e.buf, k)
	e.buf = append(e.buf, ':', ' ')
}

func (e *encoder) str(k, v string) {
	e.key(k)
	e.buf = appendString(e.buf, v)
}

func (e *encoder) float(k string, v float64) {
	e.key(k)
	e.number(v, 64)
}

// number writes a float as encoding/json does: the shortest form that reads back,
// with an exponent only below 1e-6 or from 1e21.
func (e *encoder) number(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
		e.buf = append(e.buf, '0')
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	start := len(e.buf)
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, bits)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it
		b := e.buf[start:]
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			e.buf = e.buf[:len(e.buf)-1]
		}
	}
}

// raw writes a JSON value given as bytes (an Extra field), compacted and indented
// like the rest; an invalid value is an error, as with encoding/json.
func (e *encoder) raw(k string, v json.RawMessage) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		v = []byte("null")
	}
	e.key(k)
	e.rawValue(v)
}

func (e *encoder) rawValue(v []byte) {
	var b bytes.Buffer
	if err := json.Indent(&b, v, strings.Repeat("  ", e.depth), "  "); err != nil {
		e.fail("json: invalid value %.40q: %w", v, err)
		return
	}
	e.buf = append(e.buf, b.Bytes()...)
}

// extra writes the fields of x not in known, sorted by name.
func (e *encoder) extra(x map[string]json.RawMessage, known ...string) {
	if len(x) == 0 {
		return
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		if !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.raw(k, x[k])
	}
}

// value writes free JSON (Node.Data, Graph.Metadata): what decoding with
// json.Number gives, quickly; anything else through encoding/json.
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendString(e.buf, v)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case json.Number:
		if v == "" {
			v = "0"
		}
		if !isNumber(string(v)) {
			e.fail("json: invalid number literal %q", v)
			return
		}
		e.buf = append(e.buf, v...)
	case float64:
		e.number(v, 64)
	case map[string]any:
		if v == nil {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.object(v)
	case []any:
		if v == nil {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.open('[')
		for _, x := range v {
			e.elem()
			e.value(x)
		}
		e.close(']')
	default:
		b, err := encodeNoEscape(v)
		if err != nil {
			e.fail("%w", err)
			return
		}
		e.rawValue(b)
	}
}

func (e *encoder) object(m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.open('{')
	for _, k := range keys {
		e.key(k)
		e.value(m[k])
	}
	e.close('}')
}

// longArray writes one of the document's long arrays, handing buf to the writer
// between elements once it is big enough.
func longArray[T any](e *encoder, items []T, write func(*T)) {
	e.open('[')
	for i := range items {
		e.elem()
		write(&items[i])
		e.maybeFlush()
	}
	e.close(']')
}

func (e *encoder) document(d Document) {
	d.Format = d.WriteFormat()
	e.open('{')
	e.key("graph")
	e.graph(d.Graph, d.Format)
	e.key("nodes")
	longArray(e, d.Nodes, func(n *Node) { e.node(n, d.Format) })
	e.key("edges")
	longArray(e, d.Edges, e.edge)
	e.key("nodeConfigs")
	longArray(e, d.NodeConfigs, func(c *NodeConfig) { e.nodeConfig(c, d.Format) })
	e.extra(d.Extra, "graph", "nodes", "edges", "nodeConfigs")
	e.close('}')
}

func (e *encoder) graph(g Graph, f Format) {
	e.open('{')
	e.str("_key", g.Key)
	e.str("name", g.Name)
	e.str("description", g.Description)
	e.str("workspace", g.Workspace)
	e.key(sheetsMember(f))
	keys := make([]string, 0, len(g.Sheets))
	for k := range g.Sheets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.open('{')
	for _, k := range keys {
		e.str(k, g.Sheets[k])
	}
	e.close('}')
	e.key("metadata")
	e.object(g.Metadata)
	e.extra(g.Extra, "_key", "name", "description", "workspace", sheetsMember(f), "metadata")
	e.close('}')
}

func (e *encoder) handles(h map[string]HandleGroup) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.open('{')
	for _, k := range keys {
		g := h[k]
		e.key(k)
		e.open('{')
		e.str("position", g.Position)
		e.key("point")
		e.open('[')
		for _, p := range g.Point {
			e.elem()
			e.open('{')
			e.str("id", p.ID)
			e.str("type", p.Type)
			e.str("accept", p.Accept)
			e.extra(p.Extra, "id", "type", "accept")
			e.close('}')
		}
		e.close(']')
		e.extra(g.Extra, "position", "point")
		e.close('}')
	}
	e.close('}')
}

func (e *encoder) node(n *Node, f Format) {
	e.open('{')
	e.str("_key", n.Key)
	e.str("type", n.Type)
	e.str("sheet", n.Sheet)
	known := nodeMembers
	if f == FormatEarlier {
		e.str("process", n.Process)
		known = earlierNodeMembers
	}
	e.key("handles")
	e.handles(n.Handles)
	e.key("data")
	e.value(n.Data)
	e.float("posX", n.PosX)
	e.float("posY", n.PosY)
	e.key("size")
	e.open('{')
	e.float("width", n.Size.Width)
	e.float("height", n.Size.Height)
	if n.Size.Dynamic {
		e.key("dynamic")
		e.buf = append(e.buf, "true"...)
	}
	e.close('}')
	if len(n.Embedding) > 0 {
		e.key("embedding")
		e.open('[')
		for _, f := range n.Embedding {
			e.elem()
			e.number(float64(f), 32)
		}
		e.close(']')
	}
	e.extra(n.Extra, known...)
	e.close('}')
}

// The members a node's writer knows, in each format: in Nodius's, a process
// member is not the node's code (Extra keeps one a file has, written back as is).
var (
	nodeMembers        = []string{"_key", "type", "sheet", "handles", "data", "posX", "posY", "size", "embedding"}
	earlierNodeMembers = append([]string{"process"}, nodeMembers...)
)

func (e *encoder) edge(x *Edge) {
	e.open('{')
	e.str("_key", x.Key)
	e.str("sheet", x.Sheet)
	e.str("source", x.Source)
	e.str("sourceHandle", x.SourceHandle)
	e.str("target", x.Target)
	e.str("targetHandle", x.TargetHandle)
	e.str("label", x.Label)
	e.extra(x.Extra, "_key", "sheet", "source", "sourceHandle", "target", "targetHandle", "label")
	e.close('}')
}

func (e *encoder) nodeConfig(c *NodeConfig, f Format) {
	e.open('{')
	e.str("_key", c.Key)
	e.str("displayName", c.DisplayName)
	e.str("description", c.Description)
	e.str("category", c.Category)
	e.str("icon", c.Icon)
	if f == FormatEarlier {
		e.key("handles")
		e.handles(c.Handles)
		if c.Process != "" {
			e.str("process", c.Process)
		}
	}
	if c.Workspace != "" {
		e.str("workspace", c.Workspace)
	}
	if f == FormatEarlier {
		e.extra(flatNodeMembers(c), "_key", "displayName", "description", "category", "icon", "handles", "process", "workspace")
		e.extra(c.Extra, "_key", "displayName", "description", "category", "icon", "handles", "process", "workspace")
	} else {
		e.key("node")
		e.open('{')
		e.key("handles")
		e.handles(c.Handles)
		e.str("process", c.Process)
		e.extra(c.NodeExtra, "handles", "process")
		e.close('}')
		e.extra(c.Extra, "_key", "displayName", "description", "category", "icon", "workspace", "node")
	}
	e.close('}')
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does without HTML escaping: \" \\ \b \f
// \n \r \t, \u00XX for other control characters, \u2028 and \u2029 escaped for
// JavaScript, invalid UTF-8 replaced by \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// isNumber reports whether s is a JSON number literal.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}
