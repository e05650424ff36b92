package cli

import (
	"strings"

	"github.com/nodius/nodius-ai/internal/termtext"
)

// stripStream strips terminal control sequences from text that arrives in pieces: a
// sequence split across two tokens ("\x1b]0;ti" + "tle\x07") is held back until it is
// complete, then dropped whole, so no half of it ever reaches the terminal.
type stripStream struct {
	carry string
}

// maxCarry bounds what is held back: an "unterminated" sequence longer than this is
// released (and stripped) rather than buffering a whole answer.
const maxCarry = 4096

func (s *stripStream) Write(chunk string) string {
	text := s.carry + chunk
	s.carry = ""
	if j := lastIntroducer(text); j >= 0 && !sequenceComplete(text[j:]) && len(text)-j < maxCarry {
		s.carry = text[j:]
		text = text[:j]
	}
	return termtext.Strip(text)
}

// lastIntroducer is the index of the last ESC or C1 CSI/OSC/DCS introducer, or -1.
func lastIntroducer(s string) int {
	j := strings.LastIndexByte(s, 0x1b)
	for _, c1 := range []string{"\u009b", "\u009d", "\u0090", "\u0098", "\u009e", "\u009f"} {
		if k := strings.LastIndex(s, c1); k > j {
			j = k
		}
	}
	return j
}

// sequenceComplete reports whether the escape sequence at the start of s has ended.
func sequenceComplete(s string) bool {
	var body string
	var osc bool
	switch {
	case strings.HasPrefix(s, "\x1b["):
		body = s[2:]
	case strings.HasPrefix(s, "\u009b"):
		body = s[len("\u009b"):]
	case strings.HasPrefix(s, "\x1b]"), strings.HasPrefix(s, "\x1bP"), strings.HasPrefix(s, "\x1bX"),
		strings.HasPrefix(s, "\x1b^"), strings.HasPrefix(s, "\x1b_"):
		return strings.ContainsRune(s[2:], 0x07) || strings.Contains(s[2:], "\x1b\\") || strings.Contains(s[2:], "\u009c")
	case strings.HasPrefix(s, "\x1b"):
		return len(s) >= 2
	default: // C1 string introducers
		osc = true
	}
	if osc {
		return strings.ContainsRune(s, 0x07) || strings.Contains(s, "\x1b\\") || strings.Contains(s, "\u009c")
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; c >= 0x40 && c <= 0x7e {
			return true
		}
	}
	return false
}
