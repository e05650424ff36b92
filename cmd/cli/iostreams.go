package cli

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// IOStreams is where a command reads and writes, and whether each end is a terminal.
// Commands never touch os.Stdin/os.Stdout directly, so every command can be tested as
// a terminal or as a pipe (the gh CLI's pattern).
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY  bool
	OutTTY bool
	ErrTTY bool

	// Getenv reads the environment (os.Getenv in the binary, a map in tests).
	Getenv func(string) string

	// TermSize gives the terminal's columns and rows when Out is a terminal (0, 0
	// otherwise or when unknown); nil means unknown.
	TermSize func() (width, height int)
}

// Size returns Out's terminal size, or (0, 0) when it is not a terminal.
func (s *IOStreams) Size() (width, height int) {
	if !s.OutTTY || s.TermSize == nil {
		return 0, 0
	}
	return s.TermSize()
}

// System returns the process's standard streams.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
		TermSize: func() (int, int) {
			w, h, err := term.GetSize(os.Stdout.Fd())
			if err != nil {
				return 0, 0
			}
			return w, h
		},
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// ColorEnabled reports whether styled output may be written to Out: a terminal and
// no NO_COLOR.
func (s *IOStreams) ColorEnabled() bool {
	return s.OutTTY && s.Getenv("NO_COLOR") == "" && s.Getenv("TERM") != "dumb"
}
