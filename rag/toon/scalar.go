package toon

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeNumber writes a json.Number the way JavaScript's String(Number(s)) does, which
// is what the reference encoder prints: the nearest float64, shortest round-trip
// digits, plain decimal for 1e-6 <= |n| < 1e21, exponent form outside, -0 as 0 and
// non-finite values as null. A literal that is not a number at all is written as a
// string, so a hand-built json.Number can never corrupt the output.
func writeNumber(w *strings.Builder, n json.Number, delim byte) {
	s := string(n)
	if isPlainInteger(s) {
		w.WriteString(s)
		return
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range is ±Inf or 0, as in JS
		writeString(w, s, delim)
		return
	}
	writeFloat(w, f, 64)
}

// isPlainInteger reports a short canonical integer literal ("0", "42", "-7"), which
// prints unchanged: at most 15 digits is always exact in a float64.
func isPlainInteger(s string) bool {
	i := 0
	if len(s) > 0 && s[0] == '-' {
		i = 1
	}
	digits := len(s) - i
	if digits == 0 || digits > 15 {
		return false
	}
	if s[i] == '0' {
		return digits == 1 && i == 0 // "0" yes; "-0" and "05" no
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeFloat formats f as JavaScript's Number.prototype.toString would (bitSize 32
// keeps a float32's own shortest digits instead of its float64 widening).
func writeFloat(w *strings.Builder, f float64, bitSize int) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		w.WriteString("null")
		return
	case f == 0:
		w.WriteByte('0')
		return
	}
	var tmp [32]byte
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		w.Write(strconv.AppendFloat(tmp[:0], f, 'f', -1, bitSize))
		return
	}
	// Exponent form: Go writes "1e+21" and "1.5e-07"; JavaScript drops the
	// exponent's leading zeros ("1.5e-7").
	b := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize)
	e := 0
	for e < len(b) && b[e] != 'e' {
		e++
	}
	if e+2 < len(b) { // b[e+1] is the sign
		j := e + 2
		for j < len(b)-1 && b[j] == '0' {
			j++
		}
		b = append(b[:e+2], b[j:]...)
	}
	w.Write(b)
}

// writeString writes s as a TOON string, quoted only when it would otherwise read
// back as something else (see needsQuotes).
func writeString(w *strings.Builder, s string, delim byte) {
	if !needsQuotes(s, delim) {
		w.WriteString(sanitize(s))
		return
	}
	writeQuoted(w, s)
}

// needsQuotes is the spec's unquoted-string test: a string is quoted when it is
// empty, has leading or trailing space/tab, would read as true/false/null or a
// number, starts with '-' (list marker) or '#' (comment), or contains a colon,
// quote, backslash, bracket, brace, control character or the active delimiter.
func needsQuotes(s string, delim byte) bool {
	if s == "" {
		return true
	}
	if c := s[0]; c == ' ' || c == '\t' || c == '-' || c == '#' {
		return true
	}
	if c := s[len(s)-1]; c == ' ' || c == '\t' {
		return true
	}
	if s == "true" || s == "false" || s == "null" || isNumericLike(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ':', '"', '\\', '[', ']', '{', '}':
			return true
		default:
			if c < 0x20 || c == delim {
				return true
			}
		}
	}
	return false
}

// isNumericLike matches /^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i: strings a decoder would
// take for a number, leading zeros and signs included.
func isNumericLike(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := skipDigits(s, i)
	if j == i {
		return false
	}
	i = j
	if i < len(s) && s[i] == '.' {
		j = skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j = skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// isPlainKey reports keys that may stay unquoted: /^[A-Za-z_][A-Za-z0-9_.]*$/.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func writeKey(w *strings.Builder, k string) {
	if isPlainKey(k) {
		w.WriteString(k)
		return
	}
	writeQuoted(w, k)
}

const hexDigits = "0123456789abcdef"

// writeQuoted writes s in double quotes with TOON escapes: \\ \" \n \r \t, and
// \u00XX for the other C0 controls. Invalid UTF-8 becomes U+FFFD so the output is
// always valid text.
func writeQuoted(w *strings.Builder, s string) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				w.WriteString(s[start:i])
				w.WriteString("\uFFFD")
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			w.WriteByte('\\')
			w.WriteByte(c)
		case '\n':
			w.WriteString(`\n`)
		case '\r':
			w.WriteString(`\r`)
		case '\t':
			w.WriteString(`\t`)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hexDigits[c>>4])
			w.WriteByte(hexDigits[c&0xf])
		}
		i++
		start = i
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// sanitize replaces invalid UTF-8 in an unquoted string; valid strings (nearly all)
// are returned as they are.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
