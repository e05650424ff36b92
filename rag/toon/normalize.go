package toon

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
)

// normalize turns any Go value into the encoder's data model: nil, bool, string,
// json.Number, Go numbers, Object and []any. Values already in that model come back
// as they are (changed == false) so the common case allocates nothing; other slices
// and maps are converted (maps with keys sorted), and anything else (structs, types
// with MarshalJSON...) goes through encoding/json, as a caller would expect. Values
// nested deeper than maxDepth (only a cyclic value gets there) become null.
func normalize(v any, depth int) (out any, changed bool) {
	if depth >= maxDepth {
		return nil, true
	}
	switch t := v.(type) {
	case nil, bool, string, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64:
		return v, false
	case Object:
		var cp Object
		for i, f := range t {
			nv, ch := normalize(f.Value, depth+1)
			if ch && cp == nil {
				cp = make(Object, len(t))
				copy(cp, t)
			}
			if cp != nil {
				cp[i] = Field{Key: f.Key, Value: nv}
			}
		}
		if cp != nil {
			return cp, true
		}
		return v, false // v, not t: boxing t again would allocate
	case []any:
		var cp []any
		for i, e := range t {
			nv, ch := normalize(e, depth+1)
			if ch && cp == nil {
				cp = make([]any, len(t))
				copy(cp, t)
			}
			if cp != nil {
				cp[i] = nv
			}
		}
		if cp != nil {
			return cp, true
		}
		return v, false // v, not t: boxing t again would allocate
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		obj := make(Object, len(keys))
		for i, k := range keys {
			nv, _ := normalize(t[k], depth+1)
			obj[i] = Field{Key: k, Value: nv}
		}
		return obj, true
	case []Object:
		arr := make([]any, len(t))
		for i, o := range t {
			arr[i], _ = normalize(o, depth+1)
		}
		return arr, true
	case []string:
		arr := make([]any, len(t))
		for i, s := range t {
			arr[i] = s
		}
		return arr, true
	case json.RawMessage:
		pv, err := ParseJSON(t)
		if err != nil {
			return nil, true
		}
		return pv, true
	}
	return normalizeReflect(reflect.ValueOf(v), depth), true
}

// normalizeReflect handles the values the fast path does not know.
func normalizeReflect(rv reflect.Value, depth int) any {
	typ := rv.Type()
	if typ.Implements(reflect.TypeFor[json.Marshaler]()) || typ.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
		return viaJSON(rv.Interface(), depth)
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		out, _ := normalize(rv.Elem().Interface(), depth+1)
		return out
	case reflect.Bool:
		return rv.Bool()
	case reflect.String:
		return rv.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint()
	case reflect.Float32:
		return float32(rv.Float())
	case reflect.Float64:
		return rv.Float()
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil // as encoding/json writes a nil slice
		}
		if typ.Elem().Kind() == reflect.Uint8 {
			return viaJSON(rv.Interface(), depth) // base64, as encoding/json does
		}
		arr := make([]any, rv.Len())
		for i := range arr {
			arr[i], _ = normalize(rv.Index(i).Interface(), depth+1)
		}
		return arr
	case reflect.Map:
		if typ.Key().Kind() != reflect.String {
			return viaJSON(rv.Interface(), depth)
		}
		if rv.IsNil() {
			return nil
		}
		obj := make(Object, 0, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			nv, _ := normalize(iter.Value().Interface(), depth+1)
			obj = append(obj, Field{Key: iter.Key().String(), Value: nv})
		}
		sort.Slice(obj, func(i, j int) bool { return obj[i].Key < obj[j].Key })
		return obj
	case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return nil // not representable in JSON
	}
	return viaJSON(rv.Interface(), depth)
}

// viaJSON encodes v with encoding/json and reads it back in order: structs keep
// their field order and tags, custom marshalers are honoured. Failure gives null.
func viaJSON(v any, depth int) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	pv, err := ParseJSON(data)
	if err != nil {
		return nil
	}
	out, _ := normalize(pv, depth)
	return out
}
