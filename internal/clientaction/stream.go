package clientaction

import "strings"

// maxHeld bounds how far ahead a tag or an inline code span may close: both are
// short, and a stray "{{" or backtick must not stop an answer from streaming for
// long. Parse reads a whole answer with the same bound, so what a Splitter releases
// never depends on where the tokens were cut.
const maxHeld = 512

// Splitter reads the tags of an answer that arrives in pieces, exactly as Parse
// reads the whole. A token may end in the middle of "{{node:fetch_" and the next
// one finish it, and whether a tag is quoted code depends on a backtick that may
// have come many tokens earlier. So the text from the first place still undecided
// (a tag or an inline code span that may yet close, a backtick run that may go on)
// is held until the next Feed or Flush, and a fenced block left open by one piece
// makes the next ones code until it closes.
type Splitter struct {
	held  string
	fence string // the backtick run of a fenced block open where held starts
}

// Feed adds a chunk and returns the segments ready to render (possibly none).
func (s *Splitter) Feed(chunk string) []Segment {
	t := s.held + chunk
	segs, used, fence := scan(t, s.fence, false)
	s.held, s.fence = t[used:], fence
	return segs
}

// Flush returns what is held: the stream ended, an unfinished tag is text.
func (s *Splitter) Flush() []Segment {
	segs, _, _ := scan(s.held, s.fence, true)
	s.held, s.fence = "", ""
	return segs
}

// Complete returns the part of a streaming text that cannot end in an unfinished
// tag: a screen that redraws the whole text so far shows it without the tag still
// arriving, instead of its raw beginning. Unlike a Splitter it does not wait for an
// inline code span to close: the screen redraws once it does.
func Complete(s string) string {
	_, used, _ := scanWith(s, "", false, false)
	return s[:used]
}

// scan reads t, which starts inside the fenced block opened by fence ("" for none).
// It returns the segments of t[:used], the part of t whose reading more text cannot
// change, and the fence open at used. final says t is the end of the answer: then
// everything is read.
func scan(t, fence string, final bool) (segs []Segment, used int, open string) {
	return scanWith(t, fence, final, true)
}

// scanWith is scan; codeWaits false reads an inline code span not closed yet as
// plain text instead of stopping there.
func scanWith(t, fence string, final, codeWaits bool) (segs []Segment, used int, open string) {
	from, i := 0, 0 // t[from:i] is text not yet in segs
	text := func(end int) {
		if end > from {
			if n := len(segs); n > 0 && segs[n-1].Action == nil {
				segs[n-1].Text += t[from:end]
			} else {
				segs = append(segs, Segment{Text: t[from:end]})
			}
		}
		from = end
	}
	stop := func(at int, open string) ([]Segment, int, string) {
		text(at)
		return segs, at, open
	}
	if fence != "" {
		j := strings.Index(t, fence)
		if j < 0 {
			if final {
				return stop(len(t), "")
			}
			// Code to the end, but for backticks that may begin its closing run.
			return stop(len(t)-min(trailingBackticks(t), len(fence)-1), fence)
		}
		i = j + len(fence)
	}
	for i < len(t) {
		k := strings.IndexAny(t[i:], "`{")
		if k < 0 {
			break
		}
		i += k
		if t[i] == '`' {
			n := 1
			for i+n < len(t) && t[i+n] == '`' {
				n++
			}
			if i+n == len(t) && !final {
				return stop(i, "") // the run may go on
			}
			run := t[i : i+n]
			if n >= 3 { // a fence: code to its closing run, or to the end
				j := strings.Index(t[i+n:], run)
				if j < 0 {
					if final {
						return stop(len(t), "")
					}
					return stop(len(t)-min(trailingBackticks(t[i+n:]), n-1), run)
				}
				i += n + j + n
				continue
			}
			// An inline span closes within maxHeld bytes, or the backtick is a
			// plain character.
			if j := strings.Index(t[i+n:min(len(t), i+n+maxHeld)], run); j >= 0 {
				i += n + j + n
				continue
			}
			if !final && codeWaits && len(t)-(i+n) < maxHeld {
				return stop(i, "") // it may still close
			}
			i += n
			continue
		}
		n, decided := tagAt(t[i:], final)
		if !decided {
			return stop(i, "")
		}
		if n == 0 {
			i++
			continue
		}
		text(i)
		raw := t[i : i+n]
		if a, ok := read(raw); ok {
			segs = append(segs, Segment{Action: &a})
		} else {
			segs = append(segs, Segment{Text: unbraced(raw)})
		}
		i += n
		from = i
	}
	return stop(len(t), "")
}

// tagAt returns the length of the tag ({{word:params}}, no '}' in params, at most
// maxHeld bytes) s starts with, 0 when it starts with none. decided is false when
// that depends on text not arrived yet (final false and s too short to tell).
func tagAt(s string, final bool) (n int, decided bool) {
	w := s[:min(len(s), maxHeld)]
	short := func() (int, bool) { return 0, final || len(w) == maxHeld } // w ran out
	if len(w) < 2 {
		return short()
	}
	if w[1] != '{' {
		return 0, true
	}
	j := 2
	for j < len(w) && isWord(w[j]) {
		j++
	}
	if j == len(w) {
		return short()
	}
	if j == 2 || w[j] != ':' {
		return 0, true
	}
	k := strings.IndexByte(w[j+1:], '}')
	if k < 0 {
		return short()
	}
	k += j + 1
	if k+1 == len(w) {
		return short()
	}
	if w[k+1] != '}' {
		return 0, true
	}
	return k + 2, true
}

func trailingBackticks(t string) int {
	return len(t) - len(strings.TrimRight(t, "`"))
}
