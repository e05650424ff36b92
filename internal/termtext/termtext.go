// Package termtext makes untrusted text (model output, tool results, graph content,
// stored threads) safe to write to a terminal. A terminal obeys escape sequences in
// whatever it is given: a stored message could retitle the window, move the cursor
// over earlier output, hide text or, with OSC 52, write the clipboard. Strip removes
// every such sequence and control character while keeping the visible text.
//
// Unicode direction controls (U+202E and its friends) are a second kind of hidden
// instruction: they reorder what is drawn, so code can read differently from what
// runs. Strip removes them; Reveal, for text a person decides on (a proposed change,
// an undo), shows each one as ⟨U+202E⟩ instead, and so every other character that
// draws nothing (zero-width spaces and joiners, U+FEFF, tag characters): the text
// read is then the text applied.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07

	// C1 controls as Unicode code points (U+0080..U+009F). Some terminals obey them
	// even in UTF-8 mode, so they introduce and end sequences just like their
	// ESC-prefixed 7-bit forms.
	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

// Strip returns s without terminal control sequences: CSI (ESC [ ... final), OSC
// (ESC ] ... BEL or ST), DCS, SOS, PM and APC strings (... ST), other two- or
// three-byte ESC sequences, their C1 forms, and every C0 and C1 control character
// except newline and tab. Carriage returns go too (they let text overwrite a line).
// An unterminated sequence swallows the rest of the string, as the terminal would.
// Invalid UTF-8 bytes become U+FFFD so that a stray 0x9B byte can never act as a CSI.
// Unicode direction controls go too (see isDirection).
// Text that needs nothing removed is returned as is, without allocating.
func Strip(s string) string { return sanitize(s, false) }

// Reveal is Strip for text shown so that a person decides on it: every direction
// control is written visibly as ⟨U+202E⟩ rather than removed, and every other
// invisible character (isInvisible) likewise, so the reader sees that the text was
// built to display differently from what it is.
func Reveal(s string) string { return sanitize(s, true) }

// isInvisible reports the characters, other than direction controls, that a
// terminal draws as nothing or as a blank a reader cannot tell from no character:
// the format characters (zero-width space, non-joiner and joiner, word joiner,
// U+FEFF, soft hyphen, invisible operators, tag characters…), the line and
// paragraph separators, and the fillers that render empty.
func isInvisible(r rune) bool {
	switch r {
	case 0x034F, 0x115F, 0x1160, 0x180E, 0x2028, 0x2029, 0x3164, 0xFFA0:
		return true
	}
	return r >= 0x80 && unicode.Is(unicode.Cf, r)
}

// hasInvisible reports whether s holds a character isInvisible reports.
func hasInvisible(s string) bool {
	for _, r := range s {
		if r >= 0x80 && isInvisible(r) {
			return true
		}
	}
	return false
}

// isDirection reports the Unicode bidirectional formatting characters: the
// embeddings and overrides U+202A–202E, the isolates U+2066–2069, and the marks
// U+200E, U+200F and U+061C.
func isDirection(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func sanitize(s string, reveal bool) string {
	if clean(s) && (!reveal || !hasInvisible(s)) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case r == esc:
			i = skipEscape(s, i+1)
			continue
		case r == c1CSI:
			i = skipCSI(s, i+size)
			continue
		case r == c1OSC || r == c1DCS || r == c1SOS || r == c1PM || r == c1APC:
			i = skipString(s, i+size, r == c1OSC)
			continue
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// other C0 and C1 controls, DEL: dropped
		case isDirection(r):
			if reveal {
				fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			}
		case reveal && isInvisible(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// OneLine is Strip for a single-line cell (a table column, a title): newlines and
// tabs become spaces and runs of white space collapse to one.
func OneLine(s string) string {
	s = Strip(s)
	if !strings.ContainsAny(s, "\n\t") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// clean reports whether s is valid UTF-8 with no control character but \n and \t,
// and no direction control.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20:
			if c != '\n' && c != '\t' {
				return false
			}
		case c == 0x7f:
			return false
		case c == 0xc2:
			// U+0080..U+009F encode as C2 80..C2 9F.
			if i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
				return false
			}
		case c == 0xd8 || c == 0xe2:
			// U+061C is D8 9C; U+200E/F, U+202A..E and U+2066..9 start with E2 80 or E2 81.
			if r, _ := utf8.DecodeRuneInString(s[i:]); isDirection(r) {
				return false
			}
		}
	}
	return utf8.ValidString(s)
}

// skipEscape skips the sequence whose ESC was just before i and returns the index
// after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']':
		return skipString(s, i+1, true)
	case 'P', 'X', '^', '_':
		return skipString(s, i+1, false)
	}
	// nF sequences: intermediates 0x20..0x2F, then one final byte 0x30..0x7E
	// (ESC ( B, ESC # 8); Fp/Fe/Fs sequences are a single final byte (ESC 7, ESC c).
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips parameter bytes (0x30..0x3F), intermediate bytes (0x20..0x2F) and
// the final byte (0x40..0x7E). A byte outside those ranges ends the sequence early
// and is kept for normal processing, as terminals abort the sequence there.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string up to and including its terminator: ST (ESC \
// or U+009C), or BEL for OSC. Unterminated, it runs to the end of s.
func skipString(s string, i int, osc bool) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == esc && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case c == esc:
			// ESC not followed by '\' also ends the string in most terminals.
			return i
		case osc && c == bel:
			return i + 1
		case c == 0xc2 && i+1 < len(s) && s[i+1] == c1ST:
			return i + 2
		}
		i++
	}
	return i
}
