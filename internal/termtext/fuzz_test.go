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

// FuzzReveal: whatever the input, Reveal's output holds nothing a terminal would
// obey or not draw (no control but newline and tab, nothing Hidden but an emoji's
// selector or joiner), is valid UTF-8, and keeps every visible character of the
// input in order.
func FuzzReveal(f *testing.F) {
	for _, s := range []string{"safe\u202e txt", "a\u200bb", "\x1b[31mred", "\xff", "✔\ufe0f\ufe0f", "👩\u200d💻", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Reveal(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Reveal(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isDirection(r) {
				t.Fatalf("Reveal(%q) = %q keeps control %U", s, out, r)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		// Without its markers, the output is the input less what was marked.
		rest := out
		for _, r := range s {
			if Hidden(r) || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				if strings.HasPrefix(rest, string(r)) { // an emoji's, kept
					rest = rest[utf8.RuneLen(r):]
					continue
				}
				j := strings.Index(rest, "⟩")
				if !strings.HasPrefix(rest, "⟨U+") || j < 0 {
					t.Fatalf("Reveal(%q) = %q: %U neither kept nor marked", s, out, r)
				}
				rest = rest[j+len("⟩"):]
				continue
			}
			if !strings.HasPrefix(rest, string(r)) {
				t.Fatalf("Reveal(%q) = %q lost %q", s, out, r)
			}
			rest = rest[utf8.RuneLen(r):]
		}
		if rest != "" {
			t.Fatalf("Reveal(%q) = %q added %q", s, out, rest)
		}
	})
}
