package mdstream

import "testing"

func TestStablePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, stable string
	}{
		{"two paragraphs", "para one\n\npara two", "para one\n\n"},
		{"no blank line yet", "no blank line yet", ""},
		{"unfinished last line is not a boundary", "a\n\nb\n  ", "a\n\n"},
		{"blank line inside a fence", "```\ncode\n\nmore\n", ""},
		{"tilde fence", "~~~\nx\n\ny\n~~~\n\nz", "~~~\nx\n\ny\n~~~\n\n"},
		{"after a closed fence", "```\ncode\n```\n\nafter", "```\ncode\n```\n\n"},
		{"last blank line wins", "a\n\nb\n\nc", "a\n\nb\n\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.in[:StablePrefix(tt.in)]; got != tt.stable {
				t.Fatalf("stable %q, want %q", got, tt.stable)
			}
		})
	}
}
