package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
)

// kind is the JSON type of one tool argument. The same table produces the JSON schema
// sent to the model and drives the validation of what the model sends back, so the
// two cannot drift apart.
type kind int

const (
	kString kind = iota
	kInteger
	kNumber
	kObject
	kArray
	kBoolean
)

func (k kind) String() string {
	switch k {
	case kString:
		return "a string"
	case kInteger:
		return "an integer"
	case kNumber:
		return "a number"
	case kArray:
		return "an array"
	case kBoolean:
		return "a boolean"
	default:
		return "an object"
	}
}

// param describes one argument of a tool.
type param struct {
	name     string
	kind     kind
	required bool
	desc     string
	enum     []string
	// min/max bound integers and numbers, and the length of arrays, when hasRange;
	// maxLen bounds strings when > 0.
	hasRange bool
	min, max float64
	maxLen   int
	// emptyOK lets a required string be empty (a patch's replace text).
	emptyOK bool
	// items is the JSON kind of each element of an array of scalars (nodeKeys).
	items kind
	// fields are the arguments of an object, or of each object in an array: the
	// schema lists them and parsing rejects any other (handles, batch steps), so the
	// nested shapes come from one table too. Checking a parent argument checks its
	// fields too (each item's for an array), unless freeKeys.
	fields []param
	// freeKeys: an object whose fields are checked by the code that reads it
	// (handles: sides are keys), not by check.
	freeKeys bool
	// schema, when set, replaces the generated schema (update_node's free-form changes).
	schema map[string]any
}

// spec is one tool: its name, the description the model reads, its arguments and
// whether unknown arguments are rejected (write tools) or ignored (read tools).
type spec struct {
	name   string
	desc   string
	params []param
	strict bool
}

func (s spec) def() toolDef {
	return toolDef{name: s.name, desc: s.desc, schema: objectSchema(s.params, s.strict)}
}

// objectSchema is the JSON schema of an object whose properties are params.
func objectSchema(params []param, strict bool) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		props[p.name] = p.jsonSchema()
		if p.required {
			required = append(required, p.name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "required": required}
	if strict {
		schema["additionalProperties"] = false
	}
	return schema
}

func (p param) jsonSchema() map[string]any {
	var s map[string]any
	switch {
	case p.schema != nil:
		s = maps.Clone(p.schema)
	case p.kind == kString:
		s = map[string]any{"type": "string"}
		if len(p.enum) > 0 {
			s["enum"] = p.enum
		}
		if p.required && len(p.enum) == 0 && !p.emptyOK {
			s["minLength"] = 1
		}
		if p.maxLen > 0 {
			s["maxLength"] = p.maxLen
		}
	case p.kind == kInteger || p.kind == kNumber:
		s = map[string]any{"type": "number"}
		if p.kind == kInteger {
			s["type"] = "integer"
		}
		if p.hasRange {
			s["minimum"] = p.min
			s["maximum"] = p.max
		}
	case p.kind == kBoolean:
		s = map[string]any{"type": "boolean"}
	case p.kind == kArray:
		s = map[string]any{"type": "array"}
		if p.fields != nil {
			s["items"] = objectSchema(p.fields, true)
		} else if p.items == kString {
			s["items"] = map[string]any{"type": "string"}
		}
		if p.hasRange {
			s["minItems"] = p.min
			s["maxItems"] = p.max
		}
	case p.fields != nil:
		s = objectSchema(p.fields, true)
	default:
		s = map[string]any{"type": "object"}
	}
	if p.desc != "" {
		s["description"] = p.desc
	}
	return s
}

// args holds the validated top-level arguments of one call.
type args struct {
	tool string
	m    map[string]json.RawMessage
}

// decodeObject reads a JSON object keeping raw values. Empty input and "null" read as
// an empty object (models send "" for tools without arguments).
func decodeObject(raw []byte) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]json.RawMessage{}, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("must be a JSON object, got %s", describeJSON(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

// parseArgs decodes and checks a call's arguments against params: types, enums,
// ranges, required arguments, and (strict) unknown arguments. A null optional
// argument counts as absent.
func parseArgs(tool, argsJSON string, params []param, strict bool) (args, error) {
	m, err := decodeObject([]byte(argsJSON))
	if err != nil {
		return args{}, &Error{Tool: tool, Code: CodeInvalidJSON, Msg: "the arguments " + err.Error()}
	}
	a := args{tool: tool, m: m}
	if err := checkFields(tool, "", m, params, strict); err != nil {
		return args{}, err
	}
	return a, nil
}

// checkFields validates object m (at path prefix "where", empty for top level).
func checkFields(tool, where string, m map[string]json.RawMessage, params []param, strict bool) error {
	known := make(map[string]bool, len(params))
	for _, p := range params {
		known[p.name] = true
		raw, ok := m[p.name]
		if ok && isNull(raw) {
			delete(m, p.name)
			ok = false
		}
		if !ok {
			if p.required {
				return argErr(tool, "missing required argument %q%s", where+p.name, expectHint(p))
			}
			continue
		}
		if err := p.check(tool, where, raw); err != nil {
			return err
		}
	}
	if strict {
		var unknown []string
		for k := range m {
			if !known[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			names := make([]string, 0, len(params))
			for _, p := range params {
				names = append(names, p.name)
			}
			what := "unknown argument"
			if len(unknown) > 1 {
				what = "unknown arguments"
			}
			return argErr(tool, "%s %s; the accepted arguments are: %s",
				what, quoteList(unknown, where), strings.Join(names, ", "))
		}
	}
	return nil
}

func expectHint(p param) string {
	if p.desc == "" {
		return ""
	}
	return " (" + p.kind.String() + ")"
}

func (p param) check(tool, where string, raw json.RawMessage) error {
	name := where + p.name
	switch p.kind {
	case kString:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return argErr(tool, "argument %q must be a string, got %s", name, describeJSON(raw))
		}
		if p.required && !p.emptyOK && strings.TrimSpace(s) == "" {
			return argErr(tool, "argument %q must not be empty", name)
		}
		if p.maxLen > 0 && len([]rune(s)) > p.maxLen {
			return argErr(tool, "argument %q is too long (%d characters, at most %d)", name, len([]rune(s)), p.maxLen)
		}
		if len(p.enum) > 0 && !contains(p.enum, s) {
			return argErr(tool, "argument %q must be one of %s, got %q", name, strings.Join(p.enum, ", "), s)
		}
	case kInteger, kNumber:
		f, ok := number(raw)
		if !ok {
			return argErr(tool, "argument %q must be %s, got %s", name, p.kind, describeJSON(raw))
		}
		if p.kind == kInteger && f != math.Trunc(f) {
			return argErr(tool, "argument %q must be an integer, got %s", name, string(raw))
		}
		if p.hasRange && (f < p.min || f > p.max) {
			return argErr(tool, "argument %q must be between %s and %s, got %s", name, fmtNum(p.min), fmtNum(p.max), string(raw))
		}
	case kBoolean:
		if b := firstByte(raw); b != 't' && b != 'f' {
			return argErr(tool, "argument %q must be a boolean, got %s", name, describeJSON(raw))
		}
	case kArray:
		if firstByte(raw) != '[' {
			return argErr(tool, "argument %q must be an array, got %s", name, describeJSON(raw))
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return argErr(tool, "argument %q is not a valid array: %v", name, err)
		}
		if p.hasRange && (float64(len(items)) < p.min || float64(len(items)) > p.max) {
			return argErr(tool, "argument %q must have between %s and %s items, got %d", name, fmtNum(p.min), fmtNum(p.max), len(items))
		}
		if p.fields == nil && p.items == kString {
			for i, it := range items {
				var s string
				if json.Unmarshal(it, &s) != nil {
					return argErr(tool, "argument %q[%d] must be a string, got %s", name, i, describeJSON(it))
				}
			}
		}
		if p.fields != nil {
			for i, it := range items {
				m, err := decodeObject(it)
				if err != nil || firstByte(it) != '{' {
					return argErr(tool, "argument %q[%d] must be an object, got %s", name, i, describeJSON(it))
				}
				if err := checkFields(tool, fmt.Sprintf("%s[%d].", name, i), m, p.fields, true); err != nil {
					return err
				}
			}
		}
	default:
		if firstByte(raw) != '{' {
			return argErr(tool, "argument %q must be an object, got %s", name, describeJSON(raw))
		}
		if p.fields != nil && p.schema == nil && !p.freeKeys {
			m, err := decodeObject(raw)
			if err != nil {
				return argErr(tool, "argument %q %v", name, err)
			}
			if err := checkFields(tool, name+".", m, p.fields, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a args) boolean(name string, def bool) bool {
	raw, ok := a.m[name]
	if !ok {
		return def
	}
	return firstByte(raw) == 't'
}

func (a args) strings(name string) []string {
	var out []string
	_ = json.Unmarshal(a.m[name], &out) // validated by parseArgs
	return out
}

func (a args) has(name string) bool { _, ok := a.m[name]; return ok }

func (a args) str(name string) string {
	var s string
	_ = json.Unmarshal(a.m[name], &s) // validated by parseArgs
	return s
}

func (a args) num(name string, def float64) float64 {
	raw, ok := a.m[name]
	if !ok {
		return def
	}
	f, _ := number(raw)
	return f
}

func (a args) raw(name string) json.RawMessage { return a.m[name] }

// number reads a finite JSON number (not a numeric string: the schema says number).
func number(raw json.RawMessage) (float64, bool) {
	b := firstByte(raw)
	if b != '-' && (b < '0' || b > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func firstByte(raw []byte) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// describeJSON names the JSON type of raw, with a short excerpt, for error messages.
func describeJSON(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	ex := string(raw)
	if r := []rune(ex); len(r) > 40 {
		ex = string(r[:40]) + "…"
	}
	switch firstByte(raw) {
	case '"':
		return "a string " + ex
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean " + ex
	case 'n':
		return "null"
	case 0:
		return "nothing"
	}
	if _, ok := number(raw); ok {
		return "a number " + ex
	}
	return "invalid JSON " + strconv.Quote(ex)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(names []string, prefix string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(prefix + n)
	}
	return strings.Join(q, ", ")
}
