//go:build !windows

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// TestReadOnlyDatabase runs the built binary on a database it cannot write: the
// read commands (threads list, show, check, export) work, opened read-only, and
// ask fails with one sentence, exit 1, leaving the file as it was (bytes and
// permissions). Root writes read-only files anyway, so as root every command runs
// as nobody, who owns the files, as a person owns their own database.
func TestReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		dirMode os.FileMode
	}{
		{"file 0444 in a 0555 directory", 0o555},
		{"file 0444 in a writable directory", 0o755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := readOnlyEnv(t)
			data := filepath.Join(e.dir, "data")
			db := filepath.Join(data, "threads.db")
			if r := e.run("", "ask", "--graph", "demo", "what does fetch-api do?"); r.code != 0 {
				t.Fatalf("first ask: exit %d: %s", r.code, r.stderr)
			}
			r := e.run("", "threads", "list", "--format", "json")
			var list []struct{ ID string }
			if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
				t.Fatalf("threads list: %s %s", r.stdout, r.stderr)
			}
			id := list[0].ID
			if err := os.Chmod(db, 0o444); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(data, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(data, 0o755) })
			before, _ := os.ReadFile(db)

			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"threads", "list"}, "what does fetch-api do?"},
				{[]string{"threads", "show", id}, "fetch-api calls the NBA stats API."},
				{[]string{"threads", "check"}, "ok:"},
				{[]string{"threads", "export", id}, `"_key": "` + id + `"`},
			} {
				r := e.run("", c.args...)
				if r.code != 0 || !strings.Contains(r.stdout, c.want) {
					t.Errorf("%v on a read-only database: exit %d, stdout %q, stderr %q", c.args, r.code, r.stdout, r.stderr)
				}
			}
			for _, args := range [][]string{
				{"ask", "--thread", id, "and then?"},
				{"ask", "--graph", "demo", "a new question"},
			} {
				r := e.run("", args...)
				msg := strings.TrimSpace(r.stderr)
				if r.code != 1 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "cannot write the threads database "+db) ||
					!strings.Contains(msg, "--db") {
					t.Errorf("%v on a read-only database: exit %d (want 1), stderr %q (want one sentence naming the file and what to do)", args, r.code, r.stderr)
				}
			}
			after, _ := os.ReadFile(db)
			if !bytes.Equal(before, after) {
				t.Errorf("the read-only database was written to")
			}
			// Others' read bits may be taken away (the store keeps threads private);
			// the owner's write bit must not come back.
			if fi, err := os.Stat(db); err != nil || fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("the database was made writable again: %v %v", fi.Mode(), err)
			}
		})
	}
}

// readOnlyEnv is an env whose files a non-root user owns: as root, a copy of the
// binary runs as nobody (uid 65534) in a directory nobody owns.
func readOnlyEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, llmtest.Turn{Text: "fetch-api calls the NBA stats API."})
	if os.Geteuid() != 0 {
		e.vars = append(e.vars, "NODIUS_AI_DB="+filepath.Join(e.dir, "data", "threads.db"))
		return e
	}
	// t.TempDir's parents are closed to others: a directory of our own, open to nobody.
	base, err := os.MkdirTemp("", "nodius-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	e.bin = filepath.Join(base, "nodius-ai")
	if err := os.WriteFile(e.bin, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	for _, d := range []string{home, filepath.Join(home, "data")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Skipf("cannot give a directory to nobody (%v): no real read-only condition as root", err)
		}
	}
	e.dir = home
	e.vars = append(e.vars, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_DATA_HOME="+filepath.Join(home, "xdg"),
		"NODIUS_AI_DB="+filepath.Join(home, "data", "threads.db"), "NODIUS_AI_SOURCE=demo")
	e.sys = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	// A process forked by a parallel test while the copy was open for writing
	// holds it open a moment longer: exec fails with ETXTBSY until it execs too.
	for i := 0; i < 100; i++ {
		err := exec.Command(e.bin, "version").Run()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := e.run("", "version"); r.code != 0 {
		t.Skipf("cannot run the binary as nobody (exit %d: %s): no real read-only condition as root", r.code, r.stderr)
	}
	return e
}
