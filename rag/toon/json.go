package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxDepth bounds how deeply ParseJSON and Encode descend, so that hostile input
// (or a cyclic Go value handed to Encode) ends in an error or a null rather than
// exhausting the stack. It matches encoding/json's own nesting limit.
const maxDepth = 10000

// indexThreshold is the object size from which ParseJSON keeps a key index to
// resolve duplicate keys; below it a linear scan is cheaper than a map.
const indexThreshold = 16

// ParseJSON decodes one JSON document keeping object key order (objects become
// Object) and numbers as written (json.Number), because TOON output follows key
// order and a float64 round trip would change how numbers are spelled. A key that
// appears twice keeps its first position and its last value, as JSON.parse does.
// Anything after the document other than whitespace is an error.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := parser{dec: dec}
	tok, err := p.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("toon: parse JSON: empty input")
		}
		return nil, err
	}
	v, err := p.value(tok, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("toon: parse JSON: unexpected data after the value at offset %d", dec.InputOffset())
	}
	return v, nil
}

type parser struct {
	dec *json.Decoder
}

// next reads one token and turns a truncated document into a clear error.
func (p *parser) next() (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if p.dec.InputOffset() == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("toon: parse JSON: unexpected end of input at offset %d", p.dec.InputOffset())
		}
		return nil, fmt.Errorf("toon: parse JSON: %w", err)
	}
	return tok, nil
}

func (p *parser) value(tok json.Token, depth int) (any, error) {
	if depth >= maxDepth {
		return nil, fmt.Errorf("toon: parse JSON: nesting deeper than %d levels", maxDepth)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return p.object(depth)
		case '[':
			return p.array(depth)
		}
		return nil, fmt.Errorf("toon: parse JSON: unexpected %q at offset %d", rune(t), p.dec.InputOffset())
	case nil, bool, string, json.Number:
		return t, nil
	}
	return nil, fmt.Errorf("toon: parse JSON: unexpected token %v", tok)
}

func (p *parser) object(depth int) (any, error) {
	obj := Object{}
	var index map[string]int
	for {
		tok, err := p.next()
		if err != nil {
			return nil, eofIsError(err)
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return obj, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("toon: parse JSON: object key expected at offset %d", p.dec.InputOffset())
		}
		tok, err = p.next()
		if err != nil {
			return nil, eofIsError(err)
		}
		val, err := p.value(tok, depth+1)
		if err != nil {
			return nil, err
		}
		if at := findKey(obj, index, key); at >= 0 {
			obj[at].Value = val
			continue
		}
		obj = append(obj, Field{Key: key, Value: val})
		switch {
		case index != nil:
			index[key] = len(obj) - 1
		case len(obj) == indexThreshold:
			index = make(map[string]int, 2*indexThreshold)
			for i, f := range obj {
				index[f.Key] = i
			}
		}
	}
}

// findKey returns the position of key in obj, or -1.
func findKey(obj Object, index map[string]int, key string) int {
	if index != nil {
		if i, ok := index[key]; ok {
			return i
		}
		return -1
	}
	for i := range obj {
		if obj[i].Key == key {
			return i
		}
	}
	return -1
}

func (p *parser) array(depth int) (any, error) {
	arr := []any{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, eofIsError(err)
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			return arr, nil
		}
		val, err := p.value(tok, depth+1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, val)
	}
}

// eofIsError reports a document that ends inside an object or array.
func eofIsError(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("toon: parse JSON: unexpected end of input")
	}
	return err
}
