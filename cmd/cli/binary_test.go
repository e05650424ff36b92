package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The end-to-end tests of this package share one build of the binary.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// nodiusBinary builds cmd/nodius-ai once per test run and returns its path. It
// lives in a directory of its own, not under any test's XDG dirs
// ($XDG_CONFIG_HOME/nodius-ai is a directory).
func nodiusBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "nodius-ai-cli-test")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "nodius-ai")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, "../nodius-ai").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}
