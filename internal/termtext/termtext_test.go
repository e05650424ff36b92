package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello, world", "hello, world"},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"unicode kept", "héllo → 世界 🎉", "héllo → 世界 🎉"},
		{"sgr colour", "\x1b[31mred\x1b[0m", "red"},
		{"cursor movement", "a\x1b[2Ab\x1b[10;20Hc", "abc"},
		{"private csi", "x\x1b[?25ly", "xy"},
		{"clear screen", "\x1b[2J\x1b[Hhi", "hi"},
		{"osc title bel", "\x1b]0;pwned\x07after", "after"},
		{"osc title st", "\x1b]2;pwned\x1b\\after", "after"},
		{"osc 52 clipboard", "a\x1b]52;c;ZWNobyBoaQ==\x07b", "ab"},
		{"osc 8 hyperlink", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"charset designation", "a\x1b(Bb", "ab"},
		{"save cursor", "a\x1b7b\x1b8c", "abc"},
		{"reset terminal", "\x1bcok", "ok"},
		{"carriage return", "safe\rEVIL", "safeEVIL"},
		{"backspace and bell", "a\bb\x07c", "abc"},
		{"del", "a\x7fb", "ab"},
		{"nul", "a\x00b", "ab"},
		{"c1 csi", "a\u009b31mb", "ab"},
		{"c1 osc st", "a\u009d0;t\u009cb", "ab"},
		{"c1 other", "a\u0085b", "ab"},
		{"raw 0x9b byte", "a\x9b31mb", "a\uFFFD31mb"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"unterminated csi", "text\x1b[31", "text"},
		{"unterminated osc", "text\x1b]0;title", "text"},
		{"lone esc at end", "text\x1b", "text"},
		{"csi aborted by control", "a\x1b[3\nb", "a\nb"},
		{"osc ended by new esc", "a\x1b]0;t\x1b[1mb", "ab"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Strip(tt.in)
			if got != tt.want {
				t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if Strip(got) != got {
				t.Errorf("Strip is not idempotent on %q", got)
			}
		})
	}
}

func TestStripNeverLeavesControls(t *testing.T) {
	t.Parallel()
	// Every pair and triple of interesting bytes, in any order: the result never
	// holds ESC, C0 (but \n, \t), DEL or C1, and is valid UTF-8.
	alphabet := []string{"\x1b", "[", "]", "P", "\\", "\x07", "\u009b", "\u009c", "\u009d", "\x9b", "a", "1", ";", "\n", "\r", "\xc2"}
	for _, x := range alphabet {
		for _, y := range alphabet {
			for _, z := range alphabet {
				in := x + y + z + "tail"
				out := Strip(in)
				if !utf8.ValidString(out) {
					t.Fatalf("Strip(%q) = %q: invalid UTF-8", in, out)
				}
				for _, r := range out {
					if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
						t.Fatalf("Strip(%q) = %q: control %U left", in, out, r)
					}
				}
			}
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"  a\n\nb\tc  ", "a b c"},
		{"title\x1b[31m red", "title red"},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStripCleanDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("clean text é ", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Strip(s) }); n != 0 {
		t.Errorf("Strip allocated %v times on clean text", n)
	}
	r := s + "✔ → 世界 \u2070"
	if n := testing.AllocsPerRun(100, func() { _ = Reveal(r) }); n != 0 {
		t.Errorf("Reveal allocated %v times on clean text", n)
	}
}

func BenchmarkStrip(b *testing.B) {
	s := strings.Repeat("some \x1b[1mbold\x1b[0m text ", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = Strip(s)
	}
}
