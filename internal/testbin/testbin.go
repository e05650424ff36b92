// Package testbin gives end-to-end tests a nodius-ai binary built from this source
// tree. Three packages' tests drive the real binary (cmd/nodius-ai, cmd/cli,
// mcpserver); each used to build and link its own, about 6 CPU-seconds and
// a 130 MB file apiece. CI builds it once and names it in NODIUS_AI_TEST_BINARY;
// without that variable each test process builds its own, as before.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Env names the environment variable of a binary built once for a whole test run.
// Whoever sets it must build it from the same tree (.ci/run does, just before the
// tests), in a directory of its own: tests put that directory on PATH.
const Env = "NODIUS_AI_TEST_BINARY"

// Build returns the path of the nodius-ai binary and a function that removes what
// Build made (never nil): the binary named by NODIUS_AI_TEST_BINARY when it is set
// (and then removes nothing: other packages' tests use it too), otherwise one built
// now in a new temporary directory.
func Build() (path string, cleanup func(), err error) {
	if p := os.Getenv(Env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", func() {}, fmt.Errorf("%s: %w", Env, err)
		}
		return p, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "nodius-ai-test")
	if err != nil {
		return "", func() {}, err
	}
	path = filepath.Join(dir, "nodius-ai")
	out, err := exec.Command("go", "build", "-o", path, "github.com/nodius/nodius-ai/cmd/nodius-ai").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", func() {}, fmt.Errorf("go build: %w\n%s", err, out)
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}
