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
		want := fmt.Sprintf("if (admin⟨U+%04X⟩) {⟨U+001B⟩[31m", r)
		if got := Reveal(in); got != want {
			t.Errorf("Reveal(%U): %q, want %q", r, got, want)
		}
		if got := OneLine(in); got != "if (admin) {" {
			t.Errorf("OneLine(%U): %q", r, got)
		}
	}
	for _, s := range []string{"שלום עולם", "مرحبا", "a → b", "plain\ttext\n", "\u2070", "x²"} {
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

// Reveal hides nothing: an invisible character, a control character or a byte
// that is not UTF-8 in a value someone approves is a marker they can see, and the
// text around it is kept whole (issue 31: "safe\u202e txt.exe" was shown as
// "safe txt.exe"). Strip leaves invisible characters that are not direction
// controls as they are (an emoji keeps its joiner in a transcript).
func TestRevealHidesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"safe\u202e txt.exe", "safe⟨U+202E⟩ txt.exe"},
		{"ad\u200bmin", "ad⟨U+200B⟩min"},
		{"a\u200cb\u200dc\u2060d\ufeffe\u00adf", "a⟨U+200C⟩b⟨U+200D⟩c⟨U+2060⟩d⟨U+FEFF⟩e⟨U+00AD⟩f"},
		{"x\u2062y\u2065z\u034fw", "x⟨U+2062⟩y⟨U+2065⟩z⟨U+034F⟩w"},
		{"tag\U000E0041\U000E0042", "tag⟨U+E0041⟩⟨U+E0042⟩"},
		{"smuggled\ufe01\U000E0100", "smuggled⟨U+FE01⟩⟨U+E0100⟩"},
		{"line\u2028sep", "line⟨U+2028⟩sep"},
		{"hangul\u3164filler\u115f", "hangul⟨U+3164⟩filler⟨U+115F⟩"},
		{"safe\rEVIL", "safe⟨U+000D⟩EVIL"},
		{"\x1b[2Jcleared\x1b]0;title\x07", "⟨U+001B⟩[2Jcleared⟨U+001B⟩]0;title⟨U+0007⟩"},
		{"c1\u009b2J", "c1⟨U+009B⟩2J"},
		{"bad\xffbyte", "bad⟨0xFF⟩byte"},
		{"del\x7f", "del⟨U+007F⟩"},
		// An emoji's own selector and joiner are kept; a second selector is not.
		{"ok ✔\ufe0f 1\ufe0f\u20e3 👩\u200d💻", "ok ✔\ufe0f 1\ufe0f\u20e3 👩\u200d💻"},
		{"✔\ufe0f\ufe0f", "✔\ufe0f⟨U+FE0F⟩"},
		{"a\ufe0f", "a⟨U+FE0F⟩"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"format\u0600\U000110BD\U00013430", "format⟨U+0600⟩⟨U+110BD⟩⟨U+13430⟩"},
		{"replacement \ufffd kept", "replacement \ufffd kept"},
	}
	for _, tt := range tests {
		if got := Reveal(tt.in); got != tt.want {
			t.Errorf("Reveal(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if s := "ad\u200bmin 👩\u200d💻"; Strip(s) != s {
		t.Errorf("Strip(%q) = %q", s, Strip(s))
	}
}
