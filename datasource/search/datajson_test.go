package search

import (
	"encoding/json"
	"testing"
)

// appendData writes what json.Marshal writes, for every kind of value node data
// holds, and declines what it does not know (the caller then uses json.Marshal).
func TestAppendDataIsMarshal(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `q"uo\te`, "<b>&amp;</b>", "\b\f\n\r\t\x00\x01\x1f\x7f", "é日本\u2028\u2029x",
		"bad \xff\xfe \xc3", "\xe2\x80", "ǅ𝄞", "</script>"}
	values := []any{nil, true, false, json.Number("0"), json.Number("-12.5e+3"), json.Number(""), json.Number("1E9"),
		[]any(nil), map[string]any(nil), []any{}, map[string]any{}}
	for _, s := range strs {
		values = append(values, s, []any{s, json.Number("3")}, map[string]any{s: s, "z": nil, "a": []any{true, s}})
	}
	values = append(values, map[string]any{"b": map[string]any{"y": []any{map[string]any{"k": "v"}}}, "a": json.Number("1")})
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendData([]byte("prefix"), v)
		if !ok || string(got) != "prefix"+string(want) {
			t.Errorf("appendData(%#v) = %q, %v; json.Marshal gives %q", v, got, ok, want)
		}
	}
	for _, n := range []string{"01", "1.", ".5", "-", "1e", "+1", " 1", "1 ", "0x10", "NaN", "1.5e+", "--1"} {
		if _, err := json.Marshal(json.Number(n)); err == nil {
			t.Fatalf("json.Marshal accepts %q", n)
		}
		if _, ok := appendData(nil, json.Number(n)); ok {
			t.Errorf("appendData accepts the invalid number %q", n)
		}
	}
	for _, v := range []any{1.5, 3, map[string]string{"a": "b"}, []string{"x"}, struct{}{}, []any{1}} {
		if _, ok := appendData(nil, v); ok {
			t.Errorf("appendData(%#v) is ok: it should leave it to json.Marshal", v)
		}
	}
}
