// Package tmuxtest runs a built binary in a real terminal for end-to-end tests:
// a tmux server of its own (tmux -L), keys sent with send-keys, the screen read
// with capture-pane. Tests wait for what a person would see, by polling the
// screen, never by sleeping a fixed time.
package tmuxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Timeout is how long Wait polls the screen before failing the test.
const Timeout = 20 * time.Second

// Term is one terminal running one command.
type Term struct {
	t      testing.TB
	sock   string // the tmux server's socket name (-L)
	stderr string // the command's standard error, shown when a wait fails
}

var seq atomic.Int64

// Skip skips the test with -short or when tmux is not installed (.ci/run
// installs it).
func Skip(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it); skipping the end-to-end terminal test")
	}
}

// Start runs bin with args and env in a width×height terminal; its standard error
// goes to a file in dir. The pane outlives the program (it prints "EXITED code")
// so a crash stays readable in the failure output. The tmux server is killed when
// the test ends.
func Start(t testing.TB, width, height int, dir string, env []string, bin string, args ...string) *Term {
	t.Helper()
	Skip(t)
	tm := &Term{t: t, stderr: filepath.Join(dir, "stderr"),
		sock: fmt.Sprintf("nodius-test-%d-%d", os.Getpid(), seq.Add(1))}
	shell := "env " + strings.Join(env, " ") + " " + bin + " " + strings.Join(args, " ") +
		" 2>" + tm.stderr + "; echo EXITED $?; sleep 60"
	tm.tmux("new-session", "-d", "-s", "main", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), shell)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *Term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Type sends text literally, as typed.
func (tm *Term) Type(text string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "main", "-l", text)
}

// Keys sends named keys (Enter, Escape, C-c, PPage...).
func (tm *Term) Keys(keys ...string) {
	tm.t.Helper()
	tm.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// Screen returns what the terminal shows now.
func (tm *Term) Screen() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", "main")
}

// Wait polls the screen until it shows every one of want, and returns it; after
// Timeout it fails the test with the screen and the command's standard error.
func (tm *Term) Wait(want ...string) string {
	tm.t.Helper()
	return tm.Until(fmt.Sprintf("%q", want), func(s string) bool { return containsAll(s, want) })
}

// Until polls the screen until ok accepts it, and returns it; after Timeout it
// fails the test, naming what was awaited (what), with the screen and the
// command's standard error.
func (tm *Term) Until(what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		s := tm.Screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			stderr, _ := os.ReadFile(tm.stderr)
			tm.t.Fatalf("screen never showed %s:\n%s\nstderr: %s", what, s, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Settle polls until the screen stops changing (two equal captures in a row, at
// most a second) and returns it: a frame being drawn is not checked half-way.
func (tm *Term) Settle() string {
	tm.t.Helper()
	prev := tm.Screen()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		time.Sleep(40 * time.Millisecond)
		s := tm.Screen()
		if s == prev {
			return s
		}
		prev = s
	}
	return prev
}

func containsAll(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
