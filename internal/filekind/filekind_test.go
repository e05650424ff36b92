package filekind

import (
	"io/fs"
	"testing"
)

func TestName(t *testing.T) {
	t.Parallel()
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir:                        "a directory",
		fs.ModeNamedPipe:                  "a named pipe",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a device",
		fs.ModeIrregular:                  "an irregular file",
	} {
		if got := Name(m); got != want {
			t.Errorf("Name(%v) = %q, want %q", m, got, want)
		}
	}
}
