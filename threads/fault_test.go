//go:build !windows

package threads_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/threads"
)

// childEnv selects what a re-executed test binary does instead of running tests.
const childEnv = "NODIUS_THREADS_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode, os.Args[len(os.Args)-3:]))
	}
	os.Exit(m.Run())
}

// child runs in a subprocess: args are the database path, a thread id and a count.
func child(mode string, args []string) int {
	ctx := context.Background()
	path, threadID := args[0], args[1]
	n, _ := strconv.Atoi(args[2])
	if mode == "open" {
		if msg := openErr(path); msg != "" {
			fmt.Println("open error:", msg)
		}
		return 0
	}
	s, err := threads.Open(ctx, path, threads.Options{}) // what the program uses
	if err != nil {
		fmt.Println("open error:", err)
		return 3
	}
	defer s.Close()
	switch mode {
	case "append":
		// n operations on one thread, as fast as possible.
		for i := range n {
			m := &convo.Message{ThreadID: threadID, Role: convo.User, Content: fmt.Sprintf("%s op %d", threadID, i)}
			if err := s.SaveMessage(ctx, m); err != nil {
				fmt.Println("error:", err)
				return 1
			}
		}
		fmt.Println("done")
	case "steps":
		// Agent steps forever (until killed), printing each committed step's marker.
		start := time.Now().UnixNano()
		for i := 0; ; i++ {
			tag := fmt.Sprintf("%d-%d", start, i)
			u := &convo.Message{ThreadID: threadID, Role: convo.User, Content: "question " + tag}
			if err := s.SaveMessage(ctx, u); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println(u.Content)
			a := &convo.Message{ThreadID: threadID, Role: convo.Assistant, Status: convo.Streaming, Content: "ans"}
			if err := s.SaveMessage(ctx, a); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			for k := range 3 {
				a.Content += fmt.Sprintf(" part%d", k)
				if err := s.SaveMessage(ctx, a); err != nil {
					fmt.Println("error:", err)
					return 1
				}
			}
			a.Status, a.Content = convo.Complete, "answer "+tag
			a.ToolCalls = []convo.ToolCall{{ID: "call-" + tag, Name: "search_nodes", Arguments: `{"query":"x"}`}}
			a.Usage = convo.Usage{PromptTokens: 10, CompletionTokens: 5}
			if err := s.SaveMessage(ctx, a); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println(a.Content)
			r := &convo.Message{ThreadID: threadID, ToolCallID: "call-" + tag, Content: "result " + tag}
			if err := s.SaveToolResult(ctx, r, convo.ToolRun{Name: "search_nodes"}); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println(r.Content)
		}
	}
	return 0
}

func childCmd(t testing.TB, mode, path, threadID string, n int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", path, threadID, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

// TestTwoProcessesAppend: four processes (three children and this one) write the same
// database as fast as they can, with the options the program uses; none ever fails on
// the lock, and every message lands in order.
func TestTwoProcessesAppend(t *testing.T) {
	t.Parallel()
	const ops = 1000
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openAt(t, path)
	// Three writing children and this process: four processes on one file.
	ths := []convo.Thread{newThread(t, s, "demo"), newThread(t, s, "demo"), newThread(t, s, "demo")}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, th := range ths {
		cmd := childCmd(t, "append", path, th.ID, ops)
		out := new(strings.Builder)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	// This process reads (and writes a little) at the same time.
	ctx := context.Background()
	c := newThread(t, s, "demo")
	for i := range 50 {
		save(t, s, &convo.Message{ThreadID: c.ID, Role: convo.User, Content: fmt.Sprint("parent ", i)})
		if _, err := s.List(ctx, threads.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil || !strings.Contains(outs[i].String(), "done") {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	for _, th := range ths {
		msgs, err := s.Messages(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != ops {
			t.Fatalf("thread %s has %d messages, want %d", th.ID, len(msgs), ops)
		}
		for i, m := range msgs {
			if m.Seq != i+1 || m.Content != fmt.Sprintf("%s op %d", th.ID, i) {
				t.Fatalf("thread %s message %d = seq %d %q", th.ID, i, m.Seq, m.Content)
			}
		}
		if got, _ := s.Thread(ctx, th.ID); got.MessageCount != ops {
			t.Errorf("message count = %d", got.MessageCount)
		}
	}
	integrityOK(t, path)
}

// TestLockHeldIsWaitedOut holds the write lock from another connection for longer than
// SQLite's own busy wait (and than the old 5 s limit): a write with the default options
// waits it out instead of failing.
func TestLockHeldIsWaitedOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openAt(t, path)
	th := newThread(t, s, "demo")
	ctx := context.Background()
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(6 * time.Second)
		_, _ = conn.ExecContext(ctx, "COMMIT")
		close(released)
	}()
	save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "after the wait"})
	select {
	case <-released:
	default:
		t.Fatal("the write went through while another connection held the lock")
	}
}

// TestLockHeldTooLong: past the configured wait, the write fails as ErrBusy with a
// sentence that says what to do.
func TestLockHeldTooLong(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openAt(t, path)
	th := newThread(t, s, "demo")
	ctx := context.Background()
	short, err := threads.Open(ctx, path, threads.Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	err = short.SaveMessage(ctx, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: "x"})
	if !errors.Is(err, threads.ErrBusy) || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("SaveMessage under a held lock = %v, want ErrBusy", err)
	}
}

func integrityOK(t testing.TB, path string) {
	t.Helper()
	var res string
	if err := rawDB(t, path).QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
}

// TestKillDuringAppends kills a process appending agent steps at random moments, 60
// times: the database always passes integrity_check, every step the child reported
// committed is there, and the rebuilt history is valid.
func TestKillDuringAppends(t *testing.T) {
	t.Parallel()
	const runs = 60
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openAt(t, path)
	th := newThread(t, s, "demo")
	ctx := context.Background()
	committed := map[string]bool{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for run := range runs {
		cmd := childCmd(t, "steps", path, th.ID, 0)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []string, 1)
		started := make(chan struct{})
		go func() {
			var got []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if len(got) == 0 {
					close(started)
				}
				got = append(got, sc.Text())
			}
			if len(got) == 0 {
				close(started)
			}
			lines <- got
		}()
		// Kill at a random moment once the child is appending (its first step is
		// committed), so a slow machine (-race, a loaded CI) still kills mid-stream
		// rather than before the child got going.
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatalf("run %d: the child committed nothing in 60 s", run)
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		got := <-lines
		_ = cmd.Wait()
		for _, l := range got {
			if strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "open error:") {
				t.Fatalf("run %d: child failed: %s", run, l)
			}
			committed[l] = true
		}
		integrityOK(t, path)
		msgs, err := s.Messages(ctx, th.ID)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		have := map[string]bool{}
		for _, m := range msgs {
			have[m.Content] = true
		}
		for c := range committed {
			if !have[c] {
				t.Fatalf("run %d: committed step %q lost", run, c)
			}
		}
		h, err := s.History(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		assertValid(t, h)
	}
	if len(committed) < runs {
		t.Errorf("only %d steps committed over %d runs: the children hardly ran", len(committed), runs)
	}
}

func TestNotADatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(garbage, []byte("these are my notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	s := openAt(t, corrupt)
	th := newThread(t, s, "demo")
	for i := range 200 {
		save(t, s, &convo.Message{ThreadID: th.ID, Role: convo.User, Content: strings.Repeat(fmt.Sprint(i), 100)})
	}
	_ = s.Close()
	f, err := os.OpenFile(corrupt, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	if _, err := f.WriteAt(junk, 100); err != nil { // keep the 100-byte header, wreck the pages
		t.Fatal(err)
	}
	_ = f.Close()

	for _, path := range []string{garbage, corrupt, dir} {
		_, err := threads.Open(context.Background(), path, threads.Options{})
		if !errors.Is(err, threads.ErrNotDatabase) {
			t.Errorf("Open(%s): err = %v, want ErrNotDatabase", path, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "--db") {
			t.Errorf("Open(%s): message %q should name the file and say what to do", path, msg)
		}
	}
	if b, _ := os.ReadFile(garbage); string(b) != "these are my notes, not a database\n" {
		t.Error("Open modified a file that is not a database")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openAt(t, path)
	newThread(t, s, "demo")
	_ = s.Close()
	db := rawDB(t, path)
	future := threads.SchemaVersion() + 41
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, future); err != nil {
		t.Fatal(err)
	}
	_, err := threads.Open(context.Background(), path, threads.Options{})
	if !errors.Is(err, threads.ErrNewerSchema) {
		t.Fatalf("Open: err = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{path, strconv.FormatInt(future, 10), "upgrade nodius-ai"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM threads`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the newer database was touched: %d threads, %v", n, err)
	}
}

// TestReadOnlyDirectory opens databases where nothing can be written. Root ignores
// permissions, so as root the checks run in a child process as nobody.
func TestReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	base, err := os.MkdirTemp("", "nodius-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(base, 0o755); _ = os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(ro, "existing.db")
	s := openAt(t, existing)
	newThread(t, s, "demo")
	_ = s.Close()
	_ = os.Chmod(existing, 0o644)
	paths := []string{filepath.Join(ro, "sub", "threads.db"), filepath.Join(ro, "threads.db"), existing}

	if os.Geteuid() != 0 {
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(existing, 0o444)
		for _, p := range paths {
			checkReadOnlyErr(t, p, openErr(p))
		}
		return
	}
	// As root: copy this test binary where nobody can run it and run the checks as nobody.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	bin := filepath.Join(base, "threads.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		cmd := exec.Command(bin, "-test.run=^$", p, "-", "0")
		cmd.Env = append(os.Environ(), childEnv+"=open")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil && len(out) == 0 {
			t.Skipf("cannot run as nobody: %v", err)
		}
		checkReadOnlyErr(t, p, strings.TrimSpace(strings.TrimPrefix(string(out), "open error:")))
	}
}

func openErr(path string) string {
	s, err := threads.Open(context.Background(), path, threads.Options{})
	if err == nil {
		// An existing read-only file may open; the first write must fail clearly.
		defer s.Close()
		_, err = s.CreateThread(context.Background(), convo.Thread{GraphKey: "demo"})
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func checkReadOnlyErr(t *testing.T, path, msg string) {
	t.Helper()
	t.Logf("%s: %s", path, msg)
	if msg == "" {
		t.Errorf("%s: no error in a read-only directory", path)
		return
	}
	if !strings.Contains(msg, path) && !strings.Contains(msg, filepath.Dir(path)) {
		t.Errorf("%s: message %q does not name the file", path, msg)
	}
	if !strings.Contains(msg, "--db") {
		t.Errorf("%s: message %q does not say what to do", path, msg)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
