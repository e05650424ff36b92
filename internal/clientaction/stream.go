package clientaction

import "strings"

// maxHeld bounds how much text a Splitter holds back waiting for a tag or an
// inline code span to close: both are short, and a stray "{{" or backtick must not
// stop the answer from streaming.
const maxHeld = 512

// Splitter reads the tags of an answer that arrives in pieces, as Parse reads a
// whole one. A token may end in the middle of "{{node:fetch_" and the next one
// finish it, and whether a tag is quoted code depends on a backtick that may have
// come many tokens earlier. So the start of a tag or of an inline code span still
// arriving is held until the next Feed or Flush, and a fenced block left open by
// one piece makes the next ones code until it closes.
type Splitter struct {
	held  string
	fence string // the backtick run of a fenced block open in what was released
}

// Feed adds a chunk and returns the segments ready to render (possibly none).
func (s *Splitter) Feed(chunk string) []Segment {
	t := s.held + chunk
	cut := s.holdFrom(t)
	if len(t)-cut > maxHeld {
		cut = len(t)
	}
	s.held = t[cut:]
	return s.parse(t[:cut])
}

// Flush returns what is held: the stream ended, an unfinished tag is text.
func (s *Splitter) Flush() []Segment {
	t := s.held
	s.held = ""
	out := s.parse(t)
	s.fence = ""
	return out
}

// parse reads t, which continues what was released before, and notes whether it
// leaves a fenced block open.
func (s *Splitter) parse(t string) []Segment {
	var out []Segment
	if s.fence != "" {
		j := strings.Index(t, s.fence)
		if j < 0 {
			return textSegment(t)
		}
		j += len(s.fence)
		out = textSegment(t[:j])
		t = t[j:]
		s.fence = ""
	}
	for _, seg := range Parse(t) {
		if n := len(out); n > 0 && seg.Action == nil && out[n-1].Action == nil {
			out[n-1].Text += seg.Text
			continue
		}
		out = append(out, seg)
	}
	s.fence = openFence(t)
	return out
}

func textSegment(t string) []Segment {
	if t == "" {
		return nil
	}
	return []Segment{{Text: t}}
}

// holdFrom is where the splitter must stop releasing t: before a tag that may still
// be completing, an inline code span not yet closed, or backticks that may be the
// start of a longer run.
func (s *Splitter) holdFrom(t string) int {
	base := 0
	if s.fence != "" {
		j := strings.Index(t, s.fence)
		if j < 0 {
			return len(t) - trailingBackticks(t)
		}
		base = j + len(s.fence)
	}
	u := t[base:]
	return base + min(holdFrom(u), holdCode(u))
}

// holdCode returns the offset of an inline code span of t that is not closed yet,
// or of the backticks t ends with (len(t) when there is neither).
func holdCode(t string) int {
	from := 0
	for {
		i := strings.IndexByte(t[from:], '`')
		if i < 0 {
			return len(t)
		}
		i += from
		n := 0
		for i+n < len(t) && t[i+n] == '`' {
			n++
		}
		if i+n == len(t) {
			return i // the run may go on
		}
		end := skipCode(t, i)
		switch {
		case n >= 3 && !strings.Contains(t[i+n:], t[i:i+n]): // a fence opens: the rest is code
			return len(t) - trailingBackticks(t)
		case end == i+n: // not closed yet
			return i
		}
		from = end
	}
}

// openFence returns the backtick run of a fenced block t leaves open, or "".
func openFence(t string) string {
	from := 0
	for {
		i := strings.IndexByte(t[from:], '`')
		if i < 0 {
			return ""
		}
		i += from
		n := 0
		for i+n < len(t) && t[i+n] == '`' {
			n++
		}
		end := skipCode(t, i)
		if end == len(t) && n >= 3 && !strings.Contains(t[i+n:], t[i:i+n]) {
			return t[i : i+n]
		}
		from = end
	}
}

func trailingBackticks(t string) int {
	return len(t) - len(strings.TrimRight(t, "`"))
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
