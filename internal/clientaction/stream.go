package clientaction

import "strings"

// maxHeld bounds how much text a Splitter holds back waiting for a tag to close: a
// real tag is short, and a stray "{{" must not stop the answer from streaming.
const maxHeld = 512

// Splitter cuts a streamed answer where tags cannot be split: a token may end in
// the middle of "{{node:fetch_" and the next one finish it. Feed returns what can be
// rendered now; the start of a tag that may still be completing is held until the
// next Feed or Flush.
type Splitter struct {
	held string
}

// Feed adds a chunk and returns the text that is ready (possibly empty).
func (s *Splitter) Feed(chunk string) string {
	t := s.held + chunk
	cut := holdFrom(t)
	if len(t)-cut > maxHeld {
		cut = len(t)
	}
	s.held = t[cut:]
	return t[:cut]
}

// Flush returns what is held: the stream ended, an unfinished tag is text.
func (s *Splitter) Flush() string {
	t := s.held
	s.held = ""
	return t
}

// holdFrom returns the offset from which t may be the beginning of a tag not yet
// closed (len(t) when nothing needs holding).
func holdFrom(t string) int {
	if strings.HasSuffix(t, "{") && !strings.HasSuffix(t, "{{") {
		if i := strings.LastIndex(t, "{{"); i < 0 || !couldBeTag(t[i:]) {
			return len(t) - 1
		}
	}
	if i := strings.LastIndex(t, "{{"); i >= 0 {
		// In "{{{node:a" the tag starts at the last "{{", one brace later.
		if couldBeTag(t[i:]) {
			return i
		}
	}
	if strings.HasSuffix(t, "{") {
		return len(t) - 1
	}
	return len(t)
}

// couldBeTag reports whether s (starting with "{{") is an unfinished tag: a word,
// optionally ':' and parameters without '}', optionally one closing '}'.
func couldBeTag(s string) bool {
	j := 2
	for j < len(s) && isWord(s[j]) {
		j++
	}
	if j == len(s) {
		return true
	}
	if s[j] != ':' || j == 2 {
		return false
	}
	k := strings.IndexByte(s[j+1:], '}')
	if k < 0 {
		return true
	}
	return j+1+k == len(s)-1 // a single closing brace, the last byte
}

// Complete returns the part of a streaming text that cannot end in an unfinished
// tag: a screen that redraws the whole text so far shows it without the tag still
// arriving, instead of its raw beginning.
func Complete(s string) string {
	cut := holdFrom(s)
	if len(s)-cut > maxHeld {
		return s
	}
	return s[:cut]
}
