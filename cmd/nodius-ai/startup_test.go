package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Nothing of the project's own is built at start-up that a command may not need:
// the initializers of its packages together allocate little (the search lexicon,
// parsed eagerly, allocated 547 KB in 9,000 allocations for every command). Bytes,
// not time, are checked: they do not depend on the machine's load.
func TestStartupAllocatesLittle(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	const ours, limit = "github.com/nodius/nodius-ai/", 160 << 10
	total, seen := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// init PKG @T ms, D ms clock, B bytes, N allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], ours) {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read %q", sc.Text())
		}
		total += b
		seen++
		if b > limit/2 {
			t.Errorf("%s allocates %d bytes at start-up", f[1], b)
		}
	}
	if seen == 0 {
		t.Fatalf("no init trace of the project's packages in:\n%s", out)
	}
	if total > limit {
		t.Errorf("the project's packages allocate %d bytes at start-up, more than %d", total, limit)
	}
}
