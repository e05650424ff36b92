// Package toon encodes values as TOON (Token-Oriented Object Notation, spec v4): a
// compact, indentation-based notation with tabular arrays that costs an LLM fewer
// tokens than JSON for the same data. No Go library follows spec v4, so this is ours;
// it matches the reference encoder (@toon-format/toon 4.4.0) byte for byte.
package toon

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
