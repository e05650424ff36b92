// Package mdstream helps render markdown that arrives token by token: only the part
// of an answer that can no longer change how it renders is rendered for good, so a
// streaming answer costs one render of its unfinished tail per update, not of the
// whole text.
package mdstream

import "strings"

// StablePrefix returns the length of the part of s that can no longer change how it
// renders: up to (and including) the last blank line outside a code fence. A blank
// line inside a fence, or an unfinished last line, is not a boundary.
func StablePrefix(s string) int {
	inFence := false
	cut := 0
	pos := 0
	for pos < len(s) {
		nl := strings.IndexByte(s[pos:], '\n')
		if nl < 0 {
			break // the last line is unfinished
		}
		trimmed := strings.TrimSpace(s[pos : pos+nl])
		next := pos + nl + 1
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
		} else if trimmed == "" && !inFence {
			cut = next
		}
		pos = next
	}
	return cut
}
