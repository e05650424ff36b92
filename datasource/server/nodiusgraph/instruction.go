package nodiusgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Op is an instruction's operation (Nodius's OpType: docs/protocol.md, "instructions").
type Op int

// The operations, numbered as Nodius numbers them on the wire.
const (
	OpSet        Op = 1
	OpRemove     Op = 2
	OpArrAdd     Op = 3
	OpArrInsert  Op = 4
	OpStrReplace Op = 5
	OpStrRepAll  Op = 6
	OpArrPop     Op = 7
	OpArrShift   Op = 8
	OpArrUnshift Op = 9
	OpStrAppend  Op = 10
	OpStrRemove  Op = 11
	OpStrRepAt   Op = 12
	OpBoolToggle Op = 13
	OpArrRemIdx  Op = 14
	OpDictMerge  Op = 15
	OpStrInsert  Op = 16
	OpArrMove    Op = 17
	OpObjMove    Op = 18
	OpObjInsert  Op = 19
)

// Instruction is one change of a value at a path, in Nodius's short-keyed form
// {o, p, v, i, l, s, r, f, t, d}. Pointers tell an absent index from 0, and HasV an
// absent value from null (JavaScript's undefined and null differ here: a SET
// without v is refused, a SET of null is not).
type Instruction struct {
	O    Op
	P    []string
	V    any
	HasV bool
	I    *float64
	L    *float64
	S    *string
	R    *string
	F    *float64
	T    *float64
	D    []string
}

type instructionJSON struct {
	O Op              `json:"o"`
	P []string        `json:"p,omitempty"`
	V json.RawMessage `json:"v,omitempty"`
	I *float64        `json:"i,omitempty"`
	L *float64        `json:"l,omitempty"`
	S *string         `json:"s,omitempty"`
	R *string         `json:"r,omitempty"`
	F *float64        `json:"f,omitempty"`
	T *float64        `json:"t,omitempty"`
	D []string        `json:"d,omitempty"`
}

// MarshalJSON writes v when HasV is set, null included.
func (in Instruction) MarshalJSON() ([]byte, error) {
	j := instructionJSON{O: in.O, P: in.P, I: in.I, L: in.L, S: in.S, R: in.R, F: in.F, T: in.T, D: in.D}
	if in.HasV {
		v, err := json.Marshal(in.V)
		if err != nil {
			return nil, err
		}
		j.V = v
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the short-keyed form; HasV says whether v was there.
func (in *Instruction) UnmarshalJSON(data []byte) error {
	var j instructionJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*in = Instruction{O: j.O, P: j.P, I: j.I, L: j.L, S: j.S, R: j.R, F: j.F, T: j.T, D: j.D}
	if j.V != nil {
		in.HasV = true
		if err := json.Unmarshal(j.V, &in.V); err != nil {
			return err
		}
	}
	return nil
}

// Set is the instruction that sets the value at path (InstructionBuilder.key(...).set(v)).
func Set(v any, path ...string) Instruction { return Instruction{O: OpSet, P: path, V: v, HasV: true} }

// Validate checks what the server checks before applying (validateInstruction),
// with its sentences.
func (in Instruction) Validate() error {
	switch in.O {
	case OpSet, OpArrAdd, OpArrUnshift, OpStrAppend, OpDictMerge:
		if !in.HasV {
			return errors.New("Missing value for operation")
		}
	case OpArrInsert, OpStrInsert:
		if in.I == nil || !in.HasV {
			return errors.New("Missing index or value for operation")
		}
	case OpArrRemIdx:
		if in.I == nil {
			return errors.New("Missing index for operation")
		}
	case OpStrRemove, OpStrRepAt:
		if in.I == nil || in.L == nil {
			return errors.New("Missing index or length for operation")
		}
	case OpStrReplace, OpStrRepAll:
		if in.S == nil || *in.S == "" || in.R == nil {
			return errors.New("Missing search or replacement string")
		}
	case OpArrMove:
		if in.F == nil || in.T == nil {
			return errors.New("Missing from_index or to_index for operation")
		}
	case OpObjMove, OpObjInsert:
		if in.D == nil {
			return errors.New("Missing destination path for operation")
		}
		if in.O == OpObjInsert && in.I != nil && *in.I < 0 {
			return errors.New("Invalid index for operation")
		}
	case OpRemove, OpArrPop, OpArrShift, OpBoolToggle:
	default:
		return errors.New("Invalid operation type")
	}
	return nil
}

// Apply returns target with the instruction applied, leaving target unchanged, with
// the semantics and the error sentences of Nodius's applyInstruction: intermediate
// keys must exist, SET and DICT_MERGE may create the last key, every other
// operation needs it. target is JSON as encoding/json decodes it into any.
func Apply(target any, in Instruction) (any, error) {
	if err := in.Validate(); err != nil {
		return target, err
	}
	root := Clone(target)
	switch in.O {
	case OpObjMove, OpObjInsert:
		return moveValue(root, in)
	}
	if len(in.P) == 0 {
		switch in.O {
		case OpSet:
			return Clone(in.V), nil
		case OpRemove:
			return target, errors.New("Cannot remove root element")
		case OpDictMerge:
			return merge(root, in.V), nil
		}
		return onValue(root, in)
	}
	return walk(root, in.P, 0, in)
}

func walk(cur any, path []string, at int, in Instruction) (any, error) {
	if at == len(path)-1 {
		return applyLast(cur, path, in)
	}
	key := path[at]
	if !isObject(cur) {
		return nil, fmt.Errorf("Cannot navigate path: %s - parent is not an object", strings.Join(path[:at+1], "."))
	}
	child, ok := get(cur, key)
	if !ok {
		return nil, fmt.Errorf("Key not found: %s at path %s", key, strings.Join(path[:at], "."))
	}
	nc, err := walk(child, path, at+1, in)
	if err != nil {
		return nil, err
	}
	return put(cur, key, nc), nil
}

func applyLast(parent any, path []string, in Instruction) (any, error) {
	key := path[len(path)-1]
	switch in.O {
	case OpSet:
		if !isObject(parent) {
			return parent, nil // JavaScript ignores a property set on a primitive
		}
		return put(parent, key, Clone(in.V)), nil
	case OpDictMerge:
		if !isObject(parent) {
			return parent, nil
		}
		old, _ := get(parent, key)
		return put(parent, key, merge(old, in.V)), nil
	}
	cur, ok := get(parent, key)
	if !isObject(parent) || !ok {
		return nil, fmt.Errorf("Key not found: %s at path %s", key, strings.Join(path[:len(path)-1], "."))
	}
	if in.O == OpRemove {
		return remove(parent, key), nil
	}
	nv, err := onValue(cur, in)
	if err != nil {
		return nil, err
	}
	return put(parent, key, nv), nil
}

// onValue applies an array, string or boolean operation to the value itself.
func onValue(cur any, in Instruction) (any, error) {
	switch in.O {
	case OpArrAdd, OpArrInsert, OpArrPop, OpArrShift, OpArrUnshift, OpArrRemIdx, OpArrMove:
		return onArray(cur, in)
	case OpStrInsert, OpStrAppend, OpStrRemove, OpStrRepAt, OpStrReplace, OpStrRepAll:
		return onString(cur, in)
	case OpBoolToggle:
		b, ok := cur.(bool)
		if !ok {
			return nil, errors.New("Target is not a boolean for boolToggle operation")
		}
		return !b, nil
	}
	return nil, fmt.Errorf("unsupported operation %d", in.O)
}

var arrayOpName = map[Op]string{OpArrAdd: "arrayAdd", OpArrInsert: "arrayInsertAtIndex", OpArrPop: "arrayPop",
	OpArrShift: "arrayShift", OpArrUnshift: "arrayUnshift", OpArrRemIdx: "arrayRemoveIndex", OpArrMove: "arrayMove"}

func onArray(cur any, in Instruction) (any, error) {
	a, ok := cur.([]any)
	if !ok {
		return nil, fmt.Errorf("Target is not an array for %s operation", arrayOpName[in.O])
	}
	n := len(a)
	switch in.O {
	case OpArrAdd:
		return append(a, Clone(in.V)), nil
	case OpArrUnshift:
		return append([]any{Clone(in.V)}, a...), nil
	case OpArrInsert:
		i, ok := index(in.I)
		if !ok || i < 0 || i > n {
			return nil, fmt.Errorf("Invalid index %s for array of length %d", jsNum(in.I), n)
		}
		out := append(append(append([]any{}, a[:i]...), Clone(in.V)), a[i:]...)
		return out, nil
	case OpArrPop, OpArrShift:
		if n == 0 {
			if in.O == OpArrPop {
				return nil, errors.New("Cannot pop from empty array")
			}
			return nil, errors.New("Cannot shift from empty array")
		}
		if in.O == OpArrPop {
			return a[:n-1], nil
		}
		return a[1:], nil
	case OpArrRemIdx:
		i, ok := index(in.I)
		if !ok || i < 0 || i >= n {
			return nil, fmt.Errorf("Invalid index %s for array of length %d", jsNum(in.I), n)
		}
		return append(append([]any{}, a[:i]...), a[i+1:]...), nil
	case OpArrMove:
		f, okf := index(in.F)
		t, okt := index(in.T)
		if !okf || !okt || f < 0 || f >= n || t < 0 || t > n {
			return nil, fmt.Errorf("Invalid from_index %s or to_index %s for array of length %d", jsNum(in.F), jsNum(in.T), n)
		}
		if f == t {
			return a, nil
		}
		el := a[f]
		rest := append(append([]any{}, a[:f]...), a[f+1:]...)
		t = min(t, len(rest))
		return append(append(append([]any{}, rest[:t]...), el), rest[t:]...), nil
	}
	return a, nil
}

var stringOpName = map[Op]string{OpStrInsert: "insertString", OpStrAppend: "stringAppend", OpStrRemove: "stringRemove",
	OpStrRepAt: "stringReplaceAt", OpStrReplace: "stringReplace", OpStrRepAll: "stringReplaceAll"}

// onString works in UTF-16 code units, as JavaScript indexes strings.
func onString(cur any, in Instruction) (any, error) {
	s, ok := cur.(string)
	if !ok {
		return nil, fmt.Errorf("Target is not a string for %s operation", stringOpName[in.O])
	}
	u := utf16.Encode([]rune(s))
	n := len(u)
	v, _ := in.V.(string)
	if in.O != OpStrReplace && in.O != OpStrRepAll && in.V != nil {
		if _, isStr := in.V.(string); !isStr {
			v = fmt.Sprint(in.V)
		}
	}
	str := func(x []uint16) string { return string(utf16.Decode(x)) }
	switch in.O {
	case OpStrAppend:
		return s + v, nil
	case OpStrInsert:
		i, ok := index(in.I)
		if !ok || i < 0 || i > n {
			return nil, fmt.Errorf("Invalid index %s for string of length %d", jsNum(in.I), n)
		}
		end := i
		if in.T != nil {
			t, _ := index(in.T)
			if t < i || t > n {
				return nil, fmt.Errorf("Invalid to index %s for string of length %d", jsNum(in.T), n)
			}
			end = t
		}
		return str(u[:i]) + v + str(u[end:]), nil
	case OpStrRemove, OpStrRepAt:
		i, oki := index(in.I)
		l, okl := index(in.L)
		if !oki || !okl || i < 0 || i >= n {
			return nil, fmt.Errorf("Invalid index %s or length %s for string", jsNum(in.I), jsNum(in.L))
		}
		end := min(max(i+l, i), n)
		if in.O == OpStrRemove {
			return str(u[:i]) + str(u[end:]), nil
		}
		return str(u[:i]) + v + str(u[end:]), nil
	case OpStrReplace, OpStrRepAll:
		if in.S == nil || in.R == nil {
			return nil, errors.New("Missing search or replacement string")
		}
		if in.O == OpStrReplace {
			return strings.Replace(s, *in.S, *in.R, 1), nil
		}
		return strings.ReplaceAll(s, *in.S, *in.R), nil
	}
	return s, nil
}

// moveValue is OBJ_MOVE (value at p moved to path d) and OBJ_INSERT (inserted into
// the array at d, at index i or at its end).
func moveValue(root any, in Instruction) (any, error) {
	if in.D == nil {
		name := "objectMove"
		if in.O == OpObjInsert {
			name = "objectInsert"
		}
		return nil, fmt.Errorf("Missing or invalid destination path for %s operation", name)
	}
	if len(in.P) == 0 {
		return nil, errors.New("Cannot move root element")
	}
	v, ok := lookup(root, in.P)
	if !ok {
		return nil, fmt.Errorf("Source key not found: %s at path %s", in.P[len(in.P)-1], strings.Join(in.P[:len(in.P)-1], "."))
	}
	root, err := walk(root, in.P, 0, Instruction{O: OpRemove})
	if err != nil {
		return nil, err
	}
	if in.O == OpObjMove {
		if len(in.D) == 0 {
			return v, nil
		}
		return walk(root, in.D, 0, Instruction{O: OpSet, V: v, HasV: true})
	}
	if len(in.D) == 0 {
		return nil, errors.New("Destination path must be provided for objectInsert")
	}
	if in.I == nil {
		return walk(root, in.D, 0, Instruction{O: OpArrAdd, V: v, HasV: true})
	}
	return walk(root, in.D, 0, Instruction{O: OpArrInsert, I: in.I, V: v, HasV: true})
}

func lookup(root any, path []string) (any, bool) {
	cur := root
	for _, k := range path {
		if !isObject(cur) {
			return nil, false
		}
		var ok bool
		if cur, ok = get(cur, k); !ok {
			return nil, false
		}
	}
	return cur, true
}

func isObject(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// get reads key of an object or array ("in" in JavaScript).
func get(c any, key string) (any, bool) {
	switch c := c.(type) {
	case map[string]any:
		v, ok := c[key]
		return v, ok
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != key {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// put sets key of an object or array and returns the container (a new slice when
// an array grows).
func put(c any, key string, v any) any {
	switch c := c.(type) {
	case map[string]any:
		c[key] = v
		return c
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 {
			return c
		}
		for len(c) <= i {
			c = append(c, nil)
		}
		c[i] = v
		return c
	}
	return c
}

// remove deletes key (splices an array, as REM does).
func remove(c any, key string) any {
	switch c := c.(type) {
	case map[string]any:
		delete(c, key)
		return c
	case []any:
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(c) {
			return c
		}
		return append(append([]any{}, c[:i]...), c[i+1:]...)
	}
	return c
}

// merge is {...old, ...v} with a non-object old replaced by {}.
func merge(old, v any) any {
	out := map[string]any{}
	if m, ok := old.(map[string]any); ok {
		for k, x := range m {
			out[k] = x
		}
	}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			out[k] = Clone(x)
		}
	}
	return out
}

func index(f *float64) (int, bool) {
	if f == nil {
		return 0, false
	}
	return int(*f), true
}

func jsNum(f *float64) string {
	if f == nil {
		return "undefined"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

// Clone deep-copies JSON values (maps, slices, scalars).
func Clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Clone(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Clone(x)
		}
		return out
	case json.RawMessage:
		var x any
		if json.Unmarshal(v, &x) == nil {
			return x
		}
	}
	return v
}
