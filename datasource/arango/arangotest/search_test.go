package arangotest

import (
	"slices"
	"testing"
)

// The fake's View follows ArangoSearch's link rules: a listed field takes its own
// analyzers or inherits its parent's; includeAllFields (itself inherited) indexes
// what is not listed; anything else is not indexed. Arrays are their elements,
// and only strings are text.
func TestViewLinkRules(t *testing.T) {
	t.Parallel()
	link := map[string]any{"fields": map[string]any{
		"graphKey": map[string]any{},
		"label":    map[string]any{"analyzers": []any{"en"}},
		"data": map[string]any{"analyzers": []any{"en"}, "includeAllFields": true, "fields": map[string]any{
			"raw": map[string]any{"analyzers": []any{"identity"}, "includeAllFields": false},
		}},
	}}
	tests := []struct {
		path     []string
		analyzer string
		want     bool
	}{
		{[]string{"graphKey"}, "identity", true}, // the link's default
		{[]string{"graphKey"}, "en", false},
		{[]string{"label"}, "en", true},
		{[]string{"process"}, "en", false}, // not listed, no includeAllFields
		{[]string{"data", "url"}, "en", true},
		{[]string{"data", "headers", "accept"}, "en", true}, // inherited all the way down
		{[]string{"data", "raw"}, "identity", true},
		{[]string{"data", "raw", "x"}, "identity", false}, // includeAllFields turned off below
	}
	for _, tc := range tests {
		if got := indexedWith(link, tc.path, tc.analyzer); got != tc.want {
			t.Errorf("indexedWith(%v, %s) = %v, want %v", tc.path, tc.analyzer, got, tc.want)
		}
	}
	doc := map[string]any{"data": map[string]any{
		"fields": []any{map[string]any{"label": "Year"}, map[string]any{"label": []any{"a", 2.0}}},
		"n":      3.0, "on": true,
	}}
	if got := valuesAt(doc, []string{"data", "fields", "label"}); !slices.Equal(got, []string{"Year", "a"}) {
		t.Errorf("valuesAt(data.fields.label) = %q", got)
	}
	for _, p := range [][]string{{"data", "n"}, {"data", "on"}, {"data"}} {
		if got := valuesAt(doc, p); len(got) != 0 {
			t.Errorf("valuesAt(%v) = %q, want no text", p, got)
		}
	}
}
