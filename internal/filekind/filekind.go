// Package filekind names a file that is not a regular one, for the sentence that
// refuses it: every command that reads a file the user names (a graph, a thread
// document) refuses devices, pipes and sockets, which would never end or would block.
package filekind

import "io/fs"

// Name says what kind of file m is, as a noun phrase: "a named pipe", "a
// character device", … (for a mode that is not a regular file).
func Name(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a file of type " + m.Type().String()
}
