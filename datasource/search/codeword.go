package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Code words.
//
// Tokens splits sms_replies into "sms" and "replies", which is what lets "sms
// replies" find it; but a question that writes sms_replies exactly then scores a
// node that merely talks about SMS and replies as high as the one whose code reads
// the table sms_replies. So the index also keeps every code-shaped word whole —
// an identifier, a constant, a dotted name, a path — next to its parts, in every
// field, and a question that writes such a word looks the whole word up too, with
// a strong weight. Plain words are left alone: their terms, their scores and the
// fields' lengths do not change.

// codeMarker starts every whole-word term in the index: it keeps them apart from
// the stemmed terms (no plain query word reaches one, not even as a prefix).
const codeMarker = "="

// CodeWords returns the code-shaped words of s as written, lowercased and
// accent-folded, in order: a run of letters and digits joined by _ . / or - (its
// ends trimmed of those marks) that contains one of those marks inside, a digit
// next to a letter or a camelCase boundary, and at least one letter. A path or
// dotted name also gives its code-shaped parts between / and . and its tails after
// each /, so "api.example.com/v1/first-notice" is found by "/v1/first-notice" and
// by "first-notice". Plain words give nothing: CodeWords("sms replies") is empty,
// CodeWords("reads sms_replies") is ["sms_replies"]. It never panics, whatever
// bytes s holds.
func CodeWords(s string) []string {
	var out []string
	forEachCodeRun(s, func(run string) { codeRun(run, func(w string) { out = append(out, w) }) })
	return out
}

// maxCodeParts bounds the parts and tails one long path or dotted chain gives.
const maxCodeParts = 8

// forEachCodeRun calls fn for every run of word runes and marks in s that holds a
// mark, a digit or an uppercase letter (a plain lowercase word cannot be code).
//
// It scans bytes, decoding only what is not ASCII (an index build reads every
// node's text through it); invalid UTF-8 is one separator byte, as a range loop
// over the string decodes it.
func forEachCodeRun(s string, fn func(string)) {
	start, maybe := -1, false
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if isWordRune(r) || isCodeMark(r) {
			if start < 0 {
				start, maybe = i, false
			}
			if !maybe && (r >= utf8.RuneSelf || r < 'a' || r > 'z') {
				maybe = true
			}
			i += size
			continue
		}
		if start >= 0 && maybe {
			fn(s[start:i])
		}
		start = -1
		i += size
	}
	if start >= 0 && maybe {
		fn(s[start:])
	}
}

func isCodeMark(r rune) bool { return r == '_' || r == '.' || r == '/' || r == '-' }

// codeRun emits the whole of one run of word runes and marks when it is
// code-shaped, then its parts and tails.
func codeRun(run string, emit func(string)) {
	run = strings.Trim(run, "_./-")
	if !codeShaped(run) {
		return
	}
	emit(fold(run))
	if !strings.ContainsAny(run, "./") {
		return
	}
	n := 0
	// Parts between the separators of paths and dotted names (sms_replies in
	// db.sms_replies), when code-shaped themselves.
	for _, p := range strings.FieldsFunc(run, func(r rune) bool { return r == '.' || r == '/' }) {
		if p = strings.Trim(p, "_-"); p != run && codeShaped(p) && n < maxCodeParts {
			emit(fold(p))
			n++
		}
	}
	// Tails of a path: everything after each /, when it still holds a mark.
	for i := 0; i < len(run) && n < maxCodeParts; i++ {
		if run[i] != '/' {
			continue
		}
		if t := strings.Trim(run[i+1:], "_./-"); strings.ContainsRune(t, '/') {
			emit(fold(t))
			n++
		}
	}
}

// codeShaped says whether w (trimmed of marks at its ends) is written like code:
// a mark inside, a digit next to a letter, or a lowercase letter followed by an
// uppercase one; and at least one letter, so numbers and dates are not words.
func codeShaped(w string) bool {
	shaped, letter := false, false
	var prev rune
	for i, r := range w {
		switch {
		case isCodeMark(r):
			shaped = true
		case unicode.IsLetter(r):
			letter = true
			if i > 0 && (unicode.IsDigit(prev) || unicode.IsLower(prev) && unicode.IsUpper(r)) {
				shaped = true
			}
		case unicode.IsDigit(r):
			if i > 0 && unicode.IsLetter(prev) {
				shaped = true
			}
		}
		if shaped && letter {
			return true
		}
		prev = r
	}
	return false
}

// codeMemo keeps the index terms of each run of code met during an index build,
// where the same identifiers come back in node after node: the run is read and
// its terms allocated once. A nil codeMemo memoises nothing.
type codeMemo map[string][]string

// terms appends the index terms of the code words of s (codeMarker + word).
func (m codeMemo) terms(s string, dst []string) []string {
	forEachCodeRun(s, func(run string) {
		ts, ok := m[run]
		if !ok {
			codeRun(run, func(w string) { ts = append(ts, codeMarker+w) })
			if m != nil {
				m[strings.Clone(run)] = ts
			}
		}
		dst = append(dst, ts...)
	})
	return dst
}

// keyCodeTerms is codeMemo.terms for a node's key, less the key itself: a key
// named whole already ranks its node first (Search's key bonus), so a term that
// only the key's own node holds would add nothing but one more entry per node.
// Its parts still count (v2/orders in api.example.com/v2/orders).
func keyCodeTerms(key string, dst []string) []string {
	whole := strings.Trim(key, "_./-")
	forEachCodeRun(key, func(run string) {
		skip := strings.Trim(run, "_./-") == whole // the key itself: codeRun's first word
		codeRun(run, func(w string) {
			if !skip {
				dst = append(dst, codeMarker+w)
			}
			skip = false
		})
	})
	return dst
}
