package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// One chat per thread: a second holder is refused with a sentence naming the
// first; once it lets go, the thread can be taken.
func TestChatLockOneHolder(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "threads.db")
	a, b := newChatLock(db, ""), newChatLock(db, "")
	if err := a.hold("ai_k3m9x2q7"); err != nil {
		t.Fatal(err)
	}
	err := b.hold("ai_k3m9x2q7")
	if !isThreadHeld(err) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second holder: %v", err)
	}
	if err := b.hold("ai_other123"); err != nil { // another thread is free
		t.Fatal(err)
	}
	if err := a.hold("ai_other123"); !isThreadHeld(err) {
		t.Fatalf("a took b's thread: %v", err)
	}
	if err := a.hold("ai_k3m9x2q7"); err != nil { // still a's
		t.Fatalf("a lost its own thread: %v", err)
	}
	a.release()
	if err := b.hold("ai_k3m9x2q7"); err != nil {
		t.Fatalf("after release: %v", err)
	}
	// b switched threads: the one it left is free.
	if err := a.hold("ai_other123"); err != nil {
		t.Fatalf("the thread b left: %v", err)
	}
	b.release()
	a.release()
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(db), ".*.lock")); len(left) != 0 {
		t.Errorf("lock files left after release: %v", left)
	}
	if got := lockFile(db, `odd:id\x`); strings.ContainsAny(filepath.Base(got), `:\`) {
		t.Errorf("lock file %q holds the id's odd characters", got)
	}
}

// A chat killed with SIGKILL leaves no stuck lock: the next chat takes the thread.
func TestChatLockDiesWithItsProcess(t *testing.T) {
	if os.Getenv("NODIUS_AI_TEST_HOLD") != "" {
		l := newChatLock(os.Getenv("NODIUS_AI_TEST_HOLD"), "")
		if err := l.hold("ai_k3m9x2q7"); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		select {} // until killed
	}
	t.Parallel()
	db := filepath.Join(t.TempDir(), "threads.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChatLockDiesWithItsProcess$")
	cmd.Env = append(os.Environ(), "NODIUS_AI_TEST_HOLD="+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("the helper said %q", line)
	}
	l := newChatLock(db, "")
	if err := l.hold("ai_k3m9x2q7"); !isThreadHeld(err) || !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) {
		_ = cmd.Process.Kill()
		t.Fatalf("while the helper holds it: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := l.hold("ai_k3m9x2q7"); err != nil {
		t.Fatalf("after kill -9: %v", err)
	}
	l.release()
}
