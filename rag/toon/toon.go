// Package toon encodes values as TOON (Token-Oriented Object Notation, spec v4): a
// compact, indentation-based notation with tabular arrays that costs an LLM fewer
// tokens than JSON for the same data. No Go library follows spec v4, so this is ours;
// it matches the reference encoder (@toon-format/toon 4.4.0) byte for byte.
package toon

import "encoding/json"

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

// Encode writes v as TOON. v may be nil, bool, string, json.Number, any Go number,
// Object, []any (and other slices), map[string]any (keys sorted). TODO(toon): placeholder.
func Encode(v any, opts Options) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ParseJSON decodes JSON keeping object key order (objects become Object) and numbers
// as written (json.Number). TODO(toon): placeholder.
func ParseJSON(data []byte) (any, error) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err
}
