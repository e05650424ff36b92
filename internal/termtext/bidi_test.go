package termtext

import (
	"fmt"
	"testing"
)

// Direction controls (Trojan Source, CVE-2021-42574) make code read differently from
// what runs: Strip removes them, Reveal shows each one as ⟨U+XXXX⟩ so a person
// deciding on the text sees it is there.
func TestDirectionControls(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069} {
		in := "if (admin" + string(r) + ") {\x1b[31m"
		if got := Strip(in); got != "if (admin) {" {
			t.Errorf("Strip(%U): %q", r, got)
		}
		want := fmt.Sprintf("if (admin⟨U+%04X⟩) {", r)
		if got := Reveal(in); got != want {
			t.Errorf("Reveal(%U): %q, want %q", r, got, want)
		}
		if got := OneLine(in); got != "if (admin) {" {
			t.Errorf("OneLine(%U): %q", r, got)
		}
	}
	for _, s := range []string{"שלום עולם", "مرحبا", "a → b", "plain\ttext\n", "\u2065\u2070", "x²"} {
		if Strip(s) != s || Reveal(s) != s {
			t.Errorf("%q changed: Strip %q, Reveal %q", s, Strip(s), Reveal(s))
		}
	}
}

// Characters that draw nothing are shown by Reveal too, in values, keys and names
// alike: what a person reads is what is applied. Strip keeps them (an emoji's
// joiner belongs to the answer it is in).
func TestRevealShowsInvisibleCharacters(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x2062, 0x2028, 0xE0041, 0x3164, 0x034F} {
		in := "safe" + string(r) + "name"
		want := fmt.Sprintf("safe⟨U+%04X⟩name", r)
		if got := Reveal(in); got != want {
			t.Errorf("Reveal(%U): %q, want %q", r, got, want)
		}
	}
	if got := Strip("a\u200Db"); got != "a\u200Db" {
		t.Errorf("Strip removed a joiner: %q", got)
	}
}
