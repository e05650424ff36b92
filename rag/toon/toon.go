// Package toon encodes values as TOON (Token-Oriented Object Notation, spec v4): a
// compact, indentation-based notation with tabular arrays that costs an LLM fewer
// tokens than JSON for the same data. No Go library follows spec v4, so this is ours;
// it matches the reference encoder (@toon-format/toon 4.4.0) byte for byte.
package toon

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Field is one key/value pair of an Object.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object with its key order kept (order matters in TOON output).
type Object []Field

// Options of the encoder. Delimiter is ',', '\t' or '|' (default ','); Indent is the
// number of spaces per level (default 2).
type Options struct {
	Delimiter rune
	Indent    int
}

// Encode writes v as TOON, without a trailing newline (as the reference encoder
// does). v may be nil, bool, string, json.Number, any Go number, Object, []any and
// other slices, map[string]any (keys sorted, for deterministic output); other values
// (structs, pointers...) are encoded as encoding/json would see them. Any other
// Delimiter means ',' and an Indent below 1 means 2, so no input can make it fail.
func Encode(v any, opts Options) string {
	e := encoder{delim: ',', indent: 2}
	switch opts.Delimiter {
	case '\t', '|':
		e.delim = byte(opts.Delimiter)
	}
	if opts.Indent > 0 {
		e.indent = opts.Indent
	}
	v, _ = normalize(v, 0)
	e.w.Grow(estimate(v, 0))
	e.root(v)
	return e.w.String()
}

// estimate guesses the output size of v so the builder is allocated once: the
// text of strings and keys, plus a little for punctuation, numbers and indentation.
func estimate(v any, depth int) int {
	switch t := v.(type) {
	case string:
		return len(t) + 3
	case Object:
		n := 0
		for _, f := range t {
			n += len(f.Key) + 4 + 2*depth + estimate(f.Value, depth+1)
		}
		return n
	case []any:
		n := 8
		for _, x := range t {
			n += 2 + estimate(x, depth+1)
		}
		return n
	}
	return 6
}

// encoder writes TOON lines into w. After normalize every value is an Object, a
// []any or a primitive, which is all the encoder has to tell apart.
type encoder struct {
	w       strings.Builder
	delim   byte
	indent  int
	started bool
}

// column is one field of a tabular header; children makes it a nested field group
// ("customer{name,country}") whose leaves become consecutive cells.
type column struct {
	name     string
	pos      int // position of the key in the first row, a lookup hint for the others
	children []column
}

const spaces = "                                                                "

// line starts a new output line at depth.
func (e *encoder) line(depth int) {
	if e.started {
		e.w.WriteByte('\n')
	}
	e.started = true
	for n := depth * e.indent; n > 0; {
		k := min(n, len(spaces))
		e.w.WriteString(spaces[:k])
		n -= k
	}
}

// item starts a new "- " list-item line at depth.
func (e *encoder) item(depth int) {
	e.line(depth)
	e.w.WriteString("- ")
}

func (e *encoder) int(n int64) {
	var tmp [24]byte
	e.w.Write(strconv.AppendInt(tmp[:0], n, 10))
}

func (e *encoder) uint(n uint64) {
	var tmp [24]byte
	e.w.Write(strconv.AppendUint(tmp[:0], n, 10))
}

func isPrimitive(v any) bool {
	switch v.(type) {
	case Object, []any:
		return false
	}
	return true
}

func (e *encoder) primitive(v any) {
	switch t := v.(type) {
	case nil:
		e.w.WriteString("null")
	case bool:
		e.w.WriteString(strconv.FormatBool(t))
	case string:
		writeString(&e.w, t, e.delim)
	case json.Number:
		writeNumber(&e.w, t, e.delim)
	case int:
		e.int(int64(t))
	case int8:
		e.int(int64(t))
	case int16:
		e.int(int64(t))
	case int32:
		e.int(int64(t))
	case int64:
		e.int(t)
	case uint:
		e.uint(uint64(t))
	case uint8:
		e.uint(uint64(t))
	case uint16:
		e.uint(uint64(t))
	case uint32:
		e.uint(uint64(t))
	case uint64:
		e.uint(t)
	case uintptr:
		e.uint(uint64(t))
	case float32:
		writeFloat(&e.w, float64(t), 32)
	case float64:
		writeFloat(&e.w, t, 64)
	default:
		e.w.WriteString("null") // unreachable after normalize
	}
}

func (e *encoder) root(v any) {
	switch t := v.(type) {
	case []any:
		e.array("", false, t, 0)
	case Object:
		if cols := keyedColumns(t); cols != nil {
			e.keyed("", false, t, cols, 0)
			return
		}
		e.fields(t, 0)
	default:
		e.line(0)
		if s, ok := t.(string); ok && strings.HasPrefix(s, "\uFEFF") {
			// A leading byte-order mark would be eaten by readers of the document.
			writeQuoted(&e.w, s)
			return
		}
		e.primitive(t)
	}
}

// fields writes each field of obj as its own line(s) at depth.
func (e *encoder) fields(obj Object, depth int) {
	for _, f := range obj {
		e.field(f.Key, f.Value, depth)
	}
}

func (e *encoder) field(key string, v any, depth int) {
	switch t := v.(type) {
	case []any:
		e.array(key, true, t, depth)
	case Object:
		if cols := keyedColumns(t); cols != nil {
			e.keyed(key, true, t, cols, depth)
			return
		}
		e.line(depth)
		writeKey(&e.w, key)
		e.w.WriteByte(':')
		e.fields(t, depth+1)
	default:
		e.line(depth)
		writeKey(&e.w, key)
		e.w.WriteString(": ")
		e.primitive(t)
	}
}

// header writes `key[N]{fields}:`, with ':' after N for keyed form and the
// delimiter after N when it is not a comma.
func (e *encoder) header(key string, hasKey bool, n int, cols []column, keyed bool) {
	if hasKey {
		writeKey(&e.w, key)
	}
	e.w.WriteByte('[')
	e.int(int64(n))
	if keyed {
		e.w.WriteByte(':')
	}
	if e.delim != ',' {
		e.w.WriteByte(e.delim)
	}
	e.w.WriteByte(']')
	if cols != nil {
		e.w.WriteByte('{')
		e.columnNames(cols)
		e.w.WriteByte('}')
	}
	e.w.WriteByte(':')
}

func (e *encoder) columnNames(cols []column) {
	for i, c := range cols {
		if i > 0 {
			e.w.WriteByte(e.delim)
		}
		writeKey(&e.w, c.name)
		if c.children != nil {
			e.w.WriteByte('{')
			e.columnNames(c.children)
			e.w.WriteByte('}')
		}
	}
}

// inline writes a primitive array on the current line: `key[N]: a,b,c`.
func (e *encoder) inline(key string, hasKey bool, arr []any) {
	e.header(key, hasKey, len(arr), nil, false)
	for i, v := range arr {
		if i == 0 {
			e.w.WriteByte(' ')
		} else {
			e.w.WriteByte(e.delim)
		}
		e.primitive(v)
	}
}

// array writes arr as the value of key (or as the root when hasKey is false),
// choosing the first form that fits: empty, inline primitives, list of inline
// arrays, table, or expanded list.
func (e *encoder) array(key string, hasKey bool, arr []any, depth int) {
	switch {
	case len(arr) == 0:
		e.line(depth)
		if hasKey {
			writeKey(&e.w, key)
			e.w.WriteString(": []")
		} else {
			e.w.WriteString("[]")
		}
		return
	case allPrimitive(arr):
		e.line(depth)
		e.inline(key, hasKey, arr)
		return
	case allPrimitiveArrays(arr):
		e.line(depth)
		e.header(key, hasKey, len(arr), nil, false)
		for _, v := range arr {
			e.item(depth + 1)
			e.inline("", false, v.([]any))
		}
		return
	case allObjects(arr):
		if cols := tabularColumns(anyRows(arr)); cols != nil {
			e.line(depth)
			e.header(key, hasKey, len(arr), cols, false)
			e.rows(anyRows(arr), cols, depth+1)
			return
		}
	}
	e.line(depth)
	e.header(key, hasKey, len(arr), nil, false)
	for _, v := range arr {
		e.listValue(v, depth+1)
	}
}

// rows writes one delimited line per row at depth.
func (e *encoder) rows(rows anyRows, cols []column, depth int) {
	for i := range rows.count() {
		e.line(depth)
		first := true
		e.cells(rows.at(i), cols, &first)
	}
}

// cells writes the leaf values of row in column order, depth first through
// nested field groups.
func (e *encoder) cells(row Object, cols []column, first *bool) {
	for _, c := range cols {
		v, _ := lookup(row, c.name, c.pos)
		if c.children != nil {
			sub, _ := v.(Object)
			e.cells(sub, c.children, first)
			continue
		}
		if !*first {
			e.w.WriteByte(e.delim)
		}
		*first = false
		e.primitive(v)
	}
}

// keyed writes an object of uniform objects as `key[N:]{fields}:` followed by one
// `entryKey: cells` line per entry.
func (e *encoder) keyed(key string, hasKey bool, obj Object, cols []column, depth int) {
	e.line(depth)
	e.header(key, hasKey, len(obj), cols, true)
	e.entries(obj, cols, depth+1)
}

func (e *encoder) entries(obj Object, cols []column, depth int) {
	for _, f := range obj {
		e.line(depth)
		writeKey(&e.w, f.Key)
		e.w.WriteString(": ")
		first := true
		e.cells(f.Value.(Object), cols, &first)
	}
}

// listValue writes v as one "- " item of an expanded list at depth.
func (e *encoder) listValue(v any, depth int) {
	switch t := v.(type) {
	case Object:
		e.listObject(t, depth)
	case []any:
		e.item(depth)
		if allPrimitive(t) {
			e.inline("", false, t)
			return
		}
		e.header("", false, len(t), nil, false)
		for _, x := range t {
			e.listValue(x, depth+1)
		}
	default:
		e.item(depth)
		e.primitive(t)
	}
}

// listObject writes an object as a list item: its first field shares the hyphen
// line, the others follow one level deeper; an empty object is a bare "-".
func (e *encoder) listObject(obj Object, depth int) {
	if len(obj) == 0 {
		e.line(depth)
		e.w.WriteByte('-')
		return
	}
	key, first := obj[0].Key, obj[0].Value
	switch t := first.(type) {
	case []any:
		if allObjects(t) {
			if cols := tabularColumns(anyRows(t)); cols != nil {
				e.item(depth)
				e.header(key, true, len(t), cols, false)
				e.rows(anyRows(t), cols, depth+2)
				break
			}
		}
		e.item(depth)
		switch {
		case len(t) == 0:
			writeKey(&e.w, key)
			e.w.WriteString(": []")
		case allPrimitive(t):
			e.inline(key, true, t)
		default:
			e.header(key, true, len(t), nil, false)
			for _, x := range t {
				e.listValue(x, depth+2)
			}
		}
	case Object:
		if cols := keyedColumns(t); cols != nil {
			e.item(depth)
			e.header(key, true, len(t), cols, true)
			e.entries(t, cols, depth+2)
			break
		}
		e.item(depth)
		writeKey(&e.w, key)
		e.w.WriteByte(':')
		e.fields(t, depth+2)
	default:
		e.item(depth)
		writeKey(&e.w, key)
		e.w.WriteString(": ")
		e.primitive(t)
	}
	e.fields(obj[1:], depth+1)
}

func allPrimitive(arr []any) bool {
	for _, v := range arr {
		if !isPrimitive(v) {
			return false
		}
	}
	return true
}

// allPrimitiveArrays reports a non-empty array whose items are all primitive arrays.
func allPrimitiveArrays(arr []any) bool {
	for _, v := range arr {
		a, ok := v.([]any)
		if !ok || !allPrimitive(a) {
			return false
		}
	}
	return len(arr) > 0
}

func allObjects(arr []any) bool {
	for _, v := range arr {
		if _, ok := v.(Object); !ok {
			return false
		}
	}
	return true
}

// lookup finds key in row, trying position hint first (rows usually share the
// first row's key order). The first occurrence wins.
func lookup(row Object, key string, hint int) (any, bool) {
	if hint >= 0 && hint < len(row) && row[hint].Key == key {
		return row[hint].Value, true
	}
	for _, f := range row {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// rowSource lets the table detection run over an array of objects, the values of
// an object, or a column of nested objects without copying them into a new slice.
type rowSource interface {
	count() int
	at(i int) Object
}

type anyRows []any // every item is an Object

func (r anyRows) count() int      { return len(r) }
func (r anyRows) at(i int) Object { return r[i].(Object) }

type entryRows Object // every value is an Object

func (r entryRows) count() int      { return len(r) }
func (r entryRows) at(i int) Object { return r[i].Value.(Object) }

type objectRows []Object

func (r objectRows) count() int      { return len(r) }
func (r objectRows) at(i int) Object { return r[i] }

// tabularColumns returns the header of rows when they can be a table: every row has
// exactly the first row's keys, and each column is either all primitives or all
// non-empty objects that are themselves tabular (a nested field group). Otherwise nil.
func tabularColumns[R rowSource](rows R) []column {
	n := rows.count()
	if n == 0 {
		return nil
	}
	first := rows.at(0)
	if len(first) == 0 {
		return nil
	}
	for i := 1; i < n; i++ {
		row := rows.at(i)
		if len(row) != len(first) {
			return nil
		}
		for j, f := range first {
			if _, ok := lookup(row, f.Key, j); !ok {
				return nil
			}
		}
	}
	cols := make([]column, len(first))
	for j, f := range first {
		cols[j] = column{name: f.Key, pos: j}
		prim, objs := true, true
		for i := range n {
			v, _ := lookup(rows.at(i), f.Key, j)
			o, isObj := v.(Object)
			if isPrimitive(v) {
				objs = false
			} else {
				prim = false
				if !isObj || len(o) == 0 {
					objs = false
				}
			}
		}
		if prim {
			continue
		}
		if !objs {
			return nil
		}
		sub := make(objectRows, n)
		for i := range n {
			v, _ := lookup(rows.at(i), f.Key, j)
			sub[i] = v.(Object)
		}
		children := tabularColumns(sub)
		if children == nil {
			return nil
		}
		cols[j].children = children
	}
	return cols
}

// keyedColumns returns the header of obj's keyed tabular form: at least two
// entries, all non-empty objects that form a table. Otherwise nil.
func keyedColumns(obj Object) []column {
	if len(obj) < 2 {
		return nil
	}
	for _, f := range obj {
		if o, ok := f.Value.(Object); !ok || len(o) == 0 {
			return nil
		}
	}
	return tabularColumns(entryRows(obj))
}
