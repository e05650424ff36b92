package cli

import (
	"strings"
	"testing"
)

// A mistyped flag gets the nearest one of the command; a flag far from all gets none.
func TestUnknownFlagSuggests(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ask", "--graf", "demo"}, "'ask' has no flag --graf — did you mean --graph?"},
		{[]string{"ask", "--grpah", "demo"}, "did you mean --graph?"},
		{[]string{"threads", "list", "--lim", "3"}, "did you mean --limit?"},
		{[]string{"ask", "--mdel", "x"}, "did you mean --model?"}, // a global flag
		{[]string{"ask", "-G", "x"}, "'ask' has no flag -G — did you mean -g?"},
		{[]string{"ask", "--frob"}, "'ask' has no flag --frob: run 'nodius-ai ask --help' to see its flags"},
		{[]string{"threads", "list", "--limit", "many"}, `--limit takes a whole number (got "many")`},
		{[]string{"ask", "--graph"}, "--graph needs a value, as in --graph VALUE"},
	} {
		_, stderr, code := runCLI(t, "", nil, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tt.args, code, stderr, tt.want)
		}
	}
}
