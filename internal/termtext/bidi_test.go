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
	for _, s := range []string{"שלום עולם", "مرحبا", "a → b", "plain\ttext\n", "\u2065\u2070\u200D"} {
		if Strip(s) != s || Reveal(s) != s {
			t.Errorf("%q changed: Strip %q, Reveal %q", s, Strip(s), Reveal(s))
		}
	}
}
