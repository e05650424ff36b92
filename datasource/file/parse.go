package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/datasource"
)

// ParseError locates a problem in a graph file. Its message reads
// "graph.json:12:5: nodes[2].posX: expected number, got string".
type ParseError struct {
	File   string
	Line   int // 1-based; 0 when the problem has no place in the text
	Column int // 1-based, in characters
	Path   string
	Msg    string
}

func (e *ParseError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	if e.Path != "" {
		return loc + ": " + e.Path + ": " + e.Msg
	}
	return loc + ": " + e.Msg
}

// Parse decodes and checks a graph file; name is used in error messages. Besides
// JSON errors it rejects what the store could not serve: no graph object or graph
// key, nodes or edges without a key or with a key used twice, edges whose ends are
// not nodes of the file.
func Parse(name string, data []byte) (datasource.Document, error) {
	doc, _, err := parse(name, data)
	return doc, err
}

// parse is Parse that also says where each node and edge lies in data.
func parse(name string, data []byte) (datasource.Document, datasource.Spans, error) {
	const bom = "\xef\xbb\xbf" // a UTF-8 byte order mark
	skipped := int64(0)
	if bytes.HasPrefix(data, []byte(bom)) {
		data, skipped = data[len(bom):], int64(len(bom))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return datasource.Document{}, datasource.Spans{}, &ParseError{File: name, Msg: "the file is empty; it should hold a graph object ({\"graph\": {...}, \"nodes\": [...], \"edges\": [...]})"}
	}
	doc, spans, err := datasource.DecodeDocument(data)
	if err != nil {
		var se *json.SyntaxError
		var de *datasource.DecodeError
		switch {
		case errors.As(err, &se):
			off := se.Offset - 1 // Offset is just after the offending byte
			if off < 0 || strings.Contains(se.Error(), "unexpected end") {
				off = se.Offset
			}
			line, col := lineCol(data, off)
			return datasource.Document{}, datasource.Spans{}, &ParseError{File: name, Line: line, Column: col, Msg: "invalid JSON: " + se.Error()}
		case errors.As(err, &de):
			line, col := lineCol(data, de.Offset)
			return datasource.Document{}, datasource.Spans{}, &ParseError{File: name, Line: line, Column: col, Path: de.Path, Msg: de.Msg}
		}
		return datasource.Document{}, datasource.Spans{}, &ParseError{File: name, Msg: err.Error()}
	}
	if err := validate(doc); err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = name
			if off, ok := offsetOf(data, pe.Path); ok {
				pe.Line, pe.Column = lineCol(data, off)
			}
		}
		return datasource.Document{}, datasource.Spans{}, err
	}
	if skipped > 0 {
		for _, list := range [][]datasource.Span{spans.Nodes, spans.Edges} {
			for i := range list {
				list[i].Start += skipped
				list[i].End += skipped
			}
		}
	}
	return doc, spans, nil
}

func validate(doc datasource.Document) error {
	if doc.Graph.Key == "" {
		return &ParseError{Path: "graph._key", Msg: `missing or empty: the file must look like {"graph": {"_key": "...", ...}, "nodes": [...], "edges": [...]}`}
	}
	nodes := make(map[string]int, len(doc.Nodes))
	for i, n := range doc.Nodes {
		p := "nodes[" + strconv.Itoa(i) + "]"
		if n.Key == "" {
			return &ParseError{Path: p + "._key", Msg: "missing or empty: every node needs a key"}
		}
		if j, dup := nodes[n.Key]; dup {
			return &ParseError{Path: p + "._key", Msg: fmt.Sprintf("node key %q is already used by nodes[%d]", n.Key, j)}
		}
		nodes[n.Key] = i
	}
	edges := make(map[string]int, len(doc.Edges))
	for i, e := range doc.Edges {
		p := "edges[" + strconv.Itoa(i) + "]"
		if e.Key == "" {
			return &ParseError{Path: p + "._key", Msg: "missing or empty: every edge needs a key"}
		}
		if j, dup := edges[e.Key]; dup {
			return &ParseError{Path: p + "._key", Msg: fmt.Sprintf("edge key %q is already used by edges[%d]", e.Key, j)}
		}
		edges[e.Key] = i
		if _, ok := nodes[e.Source]; !ok {
			return &ParseError{Path: p + ".source", Msg: fmt.Sprintf("node %q does not exist in this file", e.Source)}
		}
		if _, ok := nodes[e.Target]; !ok {
			return &ParseError{Path: p + ".target", Msg: fmt.Sprintf("node %q does not exist in this file", e.Target)}
		}
	}
	for i, c := range doc.NodeConfigs {
		if c.Key == "" {
			return &ParseError{Path: "nodeConfigs[" + strconv.Itoa(i) + "]._key", Msg: "missing or empty: every node type config needs a key"}
		}
	}
	return nil
}

// lineCol turns a byte offset into a 1-based line and column (in characters).
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// offsetOf finds where the value at path ("nodes[2]._key") starts in data; when the
// last member is missing, where its object starts.
func offsetOf(data []byte, path string) (int64, bool) {
	segs, ok := splitPath(path)
	if !ok {
		return 0, false
	}
	base := int64(0)
	cur := data
	for _, seg := range segs {
		off, found := int64(0), false
		if seg.index >= 0 {
			off, found = elementOffset(cur, seg.index)
		} else {
			off, found = memberOffset(cur, seg.key)
		}
		if !found {
			return base + leadingSpace(cur), true
		}
		base += off
		cur = cur[off:]
		var v json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(cur)).Decode(&v); err != nil {
			return base, true
		}
		cur = cur[:len(v)]
	}
	return base, true
}

func leadingSpace(b []byte) int64 { return int64(len(b) - len(bytes.TrimLeft(b, " \t\r\n"))) }

type segment struct {
	key   string
	index int
}

// splitPath splits "nodes[2]._key" into nodes, [2], _key.
func splitPath(p string) ([]segment, bool) {
	var out []segment
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := bytes.IndexByte([]byte(p), ']')
			if end < 0 {
				return nil, false
			}
			i, err := strconv.Atoi(p[1:end])
			if err != nil {
				return nil, false
			}
			out = append(out, segment{index: i})
			p = p[end+1:]
		default:
			end := len(p)
			for j := 0; j < len(p); j++ {
				if p[j] == '.' || p[j] == '[' {
					end = j
					break
				}
			}
			out = append(out, segment{key: p[:end], index: -1})
			p = p[end:]
		}
	}
	return out, true
}

func memberOffset(data []byte, key string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	found, ok := int64(0), false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		off := skipSeparators(data, dec.InputOffset())
		if k, _ := t.(string); k == key {
			found, ok = off, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return found, ok
}

func elementOffset(data []byte, i int) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0, false
	}
	for n := 0; dec.More(); n++ {
		off := skipSeparators(data, dec.InputOffset())
		if n == i {
			return off, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return 0, false
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
