package cli_test

import (
	"os"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/internal/testbin"
)

// The end-to-end tests of this package share one build of the binary.
var built struct {
	once    sync.Once
	path    string
	cleanup func()
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.cleanup != nil {
		built.cleanup()
	}
	os.Exit(code)
}

// nodiusBinary builds cmd/nodius-ai once per test run (or takes the one CI built, see
// package testbin) and returns its path. It lives in a directory of its own, not
// under any test's XDG dirs ($XDG_CONFIG_HOME/nodius-ai is a directory).
func nodiusBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() { built.path, built.cleanup, built.err = testbin.Build() })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}
