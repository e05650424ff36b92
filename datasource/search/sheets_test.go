package search

import (
	"slices"
	"testing"
)

// A question names a sheet the way the index reads a node's sheet name: words
// split and stemmed, French through the lexicon, nothing for an unrelated word.
func TestMatchingSheets(t *testing.T) {
	t.Parallel()
	sheets := map[string]string{"0": "main", "1": "Season reports", "2": "error_handling"}
	tests := []struct {
		q    string
		want []string
	}{
		{"what is on the reports sheet", []string{"1"}},
		{"season report", []string{"1"}},
		{"errors handled where", []string{"2"}},
		{"fetch api", nil},
		{"", nil},
	}
	for _, tc := range tests {
		got := MatchingSheets(tc.q, sheets)
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("MatchingSheets(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if got := MatchingSheets("reports", nil); got != nil {
		t.Errorf("no sheets: %q", got)
	}
}
