package tui

import (
	"strings"
	"unicode/utf8"
)

// strip removes terminal control sequences (CSI, OSC, DCS/APC/PM/SOS strings, other
// escapes) and control characters other than newline and tab from text that comes
// from the model, tools or the graph, so that none of it can retitle the window,
// clear the screen or move the cursor.
//
// TODO(termtext): switch to internal/termtext.Strip once that package lands; this
// private copy exists only so the TUI is safe in the meantime.
func strip(s string) string {
	if !needsStrip(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i+1)
			continue
		case c == '\n' || c == '\t':
			b.WriteByte(c)
		case c == '\r':
			// a lone CR would overwrite the line; keep CRLF as LF
		case c < 0x20 || c == 0x7f:
			// other C0 controls (BEL, BS, ...) dropped
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				i++
				continue
			}
			if r >= 0x80 && r <= 0x9f { // C1 controls (CSI = U+009B, OSC = U+009D, ...)
				if r == 0x9b {
					i = skipCSI(s, i+n)
					continue
				}
				if r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f || r == 0x98 {
					i = skipString(s, i+n)
					continue
				}
				i += n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		i++
	}
	return b.String()
}

func needsStrip(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return true
		}
		if c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true
		}
	}
	return !utf8.ValidString(s)
}

// skipEscape skips what follows an ESC at i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// two- or three-byte escapes: intermediates 0x20-0x2f then a final byte
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipCSI skips parameters and intermediates up to the final byte (0x40-0x7e).
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			return i
		}
		if c < 0x20 && c != 0x1b {
			continue
		}
		if c == 0x1b {
			return i - 1
		}
	}
	return i
}

// skipString skips an OSC/DCS/APC/PM/SOS body up to BEL, ST (ESC \) or C1 ST.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}
