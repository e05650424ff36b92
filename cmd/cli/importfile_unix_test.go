//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threads import refuses what is not a regular file at once: a named pipe nobody
// writes to does not block it.
func TestThreadsImportRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "thread.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	type res struct {
		stderr string
		code   int
	}
	done := make(chan res, 1)
	go func() {
		_, stderr, code := runCLI(t, "", map[string]string{"NODIUS_AI_DB": filepath.Join(dir, "threads.db")}, "threads", "import", fifo)
		done <- res{stderr, code}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		// Not a timing check: a writer ends the blocked open so the test can say so.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("threads import blocked on a named pipe")
	}
	if r.code != ExitUsage || !strings.Contains(r.stderr, "not a regular file (a named pipe)") {
		t.Fatalf("exit %d, want 2 naming the pipe:\n%s", r.code, r.stderr)
	}
}

// Reading standard input ends when the command is stopped (Ctrl-C, SIGTERM).
func TestThreadsImportStdinStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": dir, "XDG_DATA_HOME": dir, "XDG_CONFIG_HOME": dir, "XDG_STATE_HOME": dir, "NODIUS_AI_DB": filepath.Join(dir, "threads.db")}
	ios := &IOStreams{In: pr, Out: &out, ErrOut: &errb, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Execute(ctx, ios, []string{"threads", "import", "-"}) }()
	if _, err := pw.Write([]byte(`{"_key": `)); err != nil { // reading has begun
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d, want 130:\n%s", code, errb.String())
	}
}

// A file larger than a thread document may be is refused before it is read.
func TestThreadsImportBoundsTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(65<<20 + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	_, stderr, code := runCLI(t, "", map[string]string{"NODIUS_AI_DB": filepath.Join(dir, "threads.db")}, "threads", "import", big)
	if code != ExitUsage || !strings.Contains(stderr, "more than the") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	_, stderr, code = runCLI(t, "", map[string]string{"NODIUS_AI_DB": filepath.Join(dir, "threads.db")}, "threads", "import", dir)
	if code != ExitUsage || !strings.Contains(stderr, "is a directory") {
		t.Fatalf("a directory: exit %d:\n%s", code, stderr)
	}
}
