package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStrip: whatever the input, the output holds no escape, no C0 or C1 control but
// newline and tab, is valid UTF-8, and stripping it again changes nothing.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred\x1b[0m", "\x1b]0;title\x07x", "\x1b]8;;http://x\x1b\\link", "a\rb", "\x9b31m", "\xc2\x9b2J", "\x1bP+q\x1b\\", "tab\tnl\n", "\x1b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Strip(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Strip(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isDirection(r) {
				t.Fatalf("Strip(%q) = %q keeps control %U", s, out, r)
			}
		}
		if Strip(Reveal(s)) != Reveal(s) {
			t.Fatalf("Reveal(%q) keeps something Strip removes", s)
		}
		if Strip(out) != out {
			t.Fatalf("Strip is not idempotent on %q", s)
		}
		if one := OneLine(s); strings.ContainsAny(one, "\n\r\x1b") {
			t.Fatalf("OneLine(%q) = %q", s, one)
		}
	})
}
