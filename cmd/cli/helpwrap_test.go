package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// Every command's --help fits the terminal (80 columns when not a terminal): no
// line is longer, unless it is one word that cannot be broken.
func TestHelpFitsTheWidth(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(NewRootCmd(NewFactory(&IOStreams{Getenv: func(string) string { return "" }})), nil)
	for _, width := range []int{0, 40, 100} {
		for _, path := range paths {
			var out bytes.Buffer
			ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Getenv: func(string) string { return "" },
				OutTTY: width > 0, TermSize: func() (int, int) { return width, 30 }}
			if code := Execute(context.Background(), ios, append(append([]string{}, path...), "--help")); code != 0 {
				t.Fatalf("%v --help: exit %d", path, code)
			}
			limit := width
			if width == 0 {
				limit = 80
			}
			for _, l := range strings.Split(out.String(), "\n") {
				// (One word too long for a line, and its " \\" if it is a command's.)
				if utf8.RuneCountInString(l) > limit && len(strings.Fields(strings.TrimSuffix(l, " \\"))) > 1 {
					t.Errorf("%v --help at %d columns: a line of %d: %q", path, limit, utf8.RuneCountInString(l), l)
				}
			}
		}
	}
}

// A wrapped example still runs as printed: its comment moves above it, and the
// command continues after " \".
func TestWrapHelpKeepsExamplesRunnable(t *testing.T) {
	t.Parallel()
	in := "Examples:\n  nodius-ai inspect context --source file:examples/nba.json --graph nba \"fetch api\"   # what retrieval finds\n\nFlags:\n"
	got := wrapHelpText(in, 40)
	want := "Examples:\n  # what retrieval finds\n  nodius-ai inspect context --source \\\n      file:examples/nba.json --graph \\\n      nba \"fetch api\"\n\nFlags:\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
