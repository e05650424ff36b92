package toon

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncodeGoValues(t *testing.T) {
	t.Parallel()
	type point struct {
		X    int    `json:"x"`
		Y    int    `json:"y"`
		Note string `json:"note,omitempty"`
	}
	type label string
	three := 3
	cyclic := make([]any, 1)
	cyclic[0] = cyclic
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, "null"},
		{"int", 42, "42"},
		{"int64 beyond 2^53 stays exact", int64(9007199254740993), "9007199254740993"},
		{"uint64 max", uint64(math.MaxUint64), "18446744073709551615"},
		{"float32 keeps its own digits", float32(0.1), "0.1"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"NaN", math.NaN(), "null"},
		{"+Inf", math.Inf(1), "null"},
		{"large float", 1e21, "1e+21"},
		{"small float", 1.5e-7, "1.5e-7"},
		{"tiny float", 5e-324, "5e-324"},
		{"huge float", 1.7976931348623157e308, "1.7976931348623157e+308"},
		{"lower bound plain", 1e-6, "0.000001"},
		{"below 1e21 plain", 1e20, "100000000000000000000"},
		{"json.Number canonicalised", json.Number("1.50"), "1.5"},
		{"json.Number exponent", json.Number("1E5"), "100000"},
		{"json.Number -0", json.Number("-0"), "0"},
		{"json.Number beyond float64", json.Number("1e400"), "null"},
		{"json.Number big integer rounds like JS", json.Number("12345678901234567890"), "12345678901234567000"},
		{"json.Number not a number", json.Number("abc"), "abc"},
		{"json.Number not a number, ambiguous", json.Number("true"), `"true"`},
		{"map keys sorted", map[string]any{"b": 1, "a": 2}, "a: 2\nb: 1"},
		{"map of strings", map[string]string{"z": "1", "y": "x"}, "y: x\nz: \"1\""},
		{"string slice", []string{"a", "b,c"}, `[2]: a,"b,c"`},
		{"int slice", []int{1, 2}, "[2]: 1,2"},
		{"nil slice", []int(nil), "null"},
		{"slice of Object is a table", []Object{{{"id", 1}}, {{"id", 2}}}, "[2]{id}:\n  1\n  2"},
		{"struct via encoding/json", point{X: 1, Y: 2}, "x: 1\ny: 2"},
		{"struct slice", []point{{1, 2, ""}, {3, 4, ""}}, "[2]{x,y}:\n  1,2\n  3,4"},
		{"pointer", &three, "3"},
		{"nil pointer", (*int)(nil), "null"},
		{"named string", label("- x"), `"- x"`},
		{"time via MarshalJSON", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), `"2024-01-02T03:04:05Z"`},
		{"bytes as base64", []byte("hi"), "aGk="},
		{"raw message", json.RawMessage(`{"b":1,"a":[true]}`), "b: 1\na[1]: true"},
		{"func is null", func() {}, "null"},
		{"channel in object is null", Object{{"c", make(chan int)}}, "c: null"},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
		{"invalid UTF-8 in quoted string", "a:\xff", "\"a:\uFFFD\""},
		{"BOM at root is quoted", "\ufeffx", "\"\ufeffx\""},
		{"BOM in a field is not", Object{{"k", "\ufeffx"}}, "k: \ufeffx"},
		{"DEL is not a control character here", "a\x7fb", "a\x7fb"},
		{"Object with nested map", Object{{"m", map[string]any{"y": []string{"p"}, "x": true}}}, "m:\n  x: true\n  y[1]: p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Encode(tc.in, Options{}); got != tc.want {
				t.Errorf("Encode(%#v)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
		})
	}
	t.Run("cyclic slice ends in null", func(t *testing.T) {
		t.Parallel()
		got := Encode(cyclic, Options{})
		if !strings.HasPrefix(got, "[1]:\n  - [1]:") || !strings.HasSuffix(got, "null") {
			t.Errorf("unexpected output starting %q", got[:min(len(got), 40)])
		}
	})
}

func TestEncodeOptions(t *testing.T) {
	t.Parallel()
	v := Object{{"a", Object{{"b", []any{"x", "y"}}}}}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"defaults", Options{}, "a:\n  b[2]: x,y"},
		{"tab", Options{Delimiter: '\t'}, "a:\n  b[2\t]: x\ty"},
		{"pipe, indent 4", Options{Delimiter: '|', Indent: 4}, "a:\n    b[2|]: x|y"},
		{"indent 1", Options{Indent: 1}, "a:\n b[2]: x,y"},
		{"unknown delimiter means comma", Options{Delimiter: ';'}, "a:\n  b[2]: x,y"},
		{"negative indent means 2", Options{Indent: -3}, "a:\n  b[2]: x,y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Encode(v, tc.opts); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    string // TOON of the result
		wantErr string
	}{
		{"key order kept", `{"b":1,"a":2}`, "b: 1\na: 2", ""},
		{"numbers as written", `[1.50,1E2,-0]`, "[3]: 1.5,100,0", ""},
		{"duplicate key keeps first place, last value", `{"a":1,"b":2,"a":3}`, "a: 3\nb: 2", ""},
		{"duplicate key in a large object", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k0":"x","k16":"y"}`,
			"k0: x\nk1: 1\nk2: 2\nk3: 3\nk4: 4\nk5: 5\nk6: 6\nk7: 7\nk8: 8\nk9: 9\nk10: 10\nk11: 11\nk12: 12\nk13: 13\nk14: 14\nk15: 15\nk16: y", ""},
		{"surrounding whitespace", " \n{\"a\":null}\n ", "a: null", ""},
		{"empty input", "", "", "empty input"},
		{"only spaces", "   ", "", "empty input"},
		{"truncated object", `{"a":`, "", "unexpected end of input"},
		{"truncated array", `[1,2`, "", "unexpected end of input"},
		{"missing comma", `[1 2]`, "", "parse JSON"},
		{"trailing comma", `{"a":1,}`, "", "looking for beginning of object key"},
		{"non-string key", `{1:2}`, "", "parse JSON"},
		{"leading zero", `01`, "", "unexpected data after the value"},
		{"trailing data", `{} {}`, "", "unexpected data after the value"},
		{"trailing garbage", `1 x`, "", "parse JSON"},
		{"bad literal", `tru`, "", "parse JSON"},
		{"too deep", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "", "nesting deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := ParseJSON([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := Encode(v, Options{}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzEncode checks that no JSON document makes ParseJSON or Encode panic, and
// that Encode output is valid UTF-8 without trailing spaces or newline.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{`{"a":[{"x":1,"y":{"z":2}},{"x":2,"y":{"z":3}}]}`, `[[1],[2,[3]],{}]`,
		`{"m":{"a":{"k":1},"b":{"k":2}}}`, `"\u0000-"`, `[{"a":[{"b":1}]},{"a":[]}]`, `1e400`} {
		f.Add([]byte(s), uint8(0), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, d, indent uint8) {
		v, err := ParseJSON(data)
		if err != nil {
			return
		}
		delim := []rune{',', '\t', '|'}[int(d)%3]
		out := Encode(v, Options{Delimiter: delim, Indent: int(indent % 8)})
		if strings.HasSuffix(out, "\n") {
			t.Errorf("trailing newline in %q", out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, " ") {
				t.Errorf("trailing space in line %q", line)
			}
		}
	})
}
