package cli

import (
	"database/sql"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// corruptAnIndex makes one index of the messages table disagree with its table, the
// index-level damage quick_check does not see and integrity_check does: the index's
// recorded definition is rewritten to cover another column.
func corruptAnIndex(t *testing.T, db string) {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var name, def string
	if err := d.QueryRow(`SELECT name, sql FROM sqlite_master WHERE type='index' AND tbl_name='messages' AND sql IS NOT NULL LIMIT 1`).Scan(&name, &def); err != nil {
		t.Fatalf("no index on messages to corrupt: %v", err)
	}
	bad := regexp.MustCompile(`\(.*\)`).ReplaceAllString(def, "(role, content)")
	for _, q := range []string{"PRAGMA writable_schema=ON", "UPDATE sqlite_master SET sql=? WHERE name=?", "PRAGMA writable_schema=OFF"} {
		args := []any{}
		if strings.HasPrefix(q, "UPDATE") {
			args = []any{bad, name}
		}
		if _, err := d.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestThreadsCheck(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	e.seed(threadDoc("ai_1700000000000_1", "demo", "what does fetch-api do?", "It fetches.", time.Hour))

	out, stderr, code := e.run("", "threads", "check")
	if code != 0 || !strings.Contains(out, "ok:") {
		t.Fatalf("sound database: exit %d, out %q, err %q", code, out, stderr)
	}
	if _, stderr, _ := e.run("", "threads", "list"); strings.Contains(stderr, "damaged") {
		t.Fatalf("a sound database was reported damaged: %q", stderr)
	}

	// A sound check is remembered with the file's size and time: a command on the
	// unchanged file does not check again. Shown by damaging the file behind the
	// stamp's back (its size and time put back): no warning, while threads check,
	// never remembered, still sees it; once the time moves, the warning is back.
	e.run("", "threads", "list")
	fi, err := os.Stat(e.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.db + ".checked"); err != nil {
		t.Fatalf("no check stamp after two commands: %v", err)
	}
	corruptAnIndex(t, e.db)
	if fi2, _ := os.Stat(e.db); fi2.Size() != fi.Size() {
		t.Fatalf("the damage changed the size (%d → %d): the stamp cannot be fooled", fi.Size(), fi2.Size())
	}
	if err := os.Chtimes(e.db, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if _, stderr, _ := e.run("", "threads", "list"); strings.Contains(stderr, "damaged") {
		t.Fatalf("an unchanged file was checked again: %q", stderr)
	}
	out, _, code = e.run("", "threads", "check")
	if code != ExitRuntime || !strings.Contains(out, "damaged") {
		t.Fatalf("threads check trusted the stamp: exit %d, out:\n%s", code, out)
	}
	now := time.Now()
	if err := os.Chtimes(e.db, now, now); err != nil {
		t.Fatal(err)
	}

	out, _, code = e.run("", "threads", "check")
	if code != ExitRuntime || !strings.Contains(out, "damaged") || !strings.Contains(out, "threads export") || !strings.Contains(out, "threads import") {
		t.Fatalf("damaged database: exit %d, out:\n%s", code, out)
	}
	// Any command that opens the database says so before it writes to it.
	for _, args := range [][]string{{"threads", "list"}, {"threads", "rename", "ai_1700000000000_1", "renamed"}} {
		_, stderr, _ := e.run("", args...)
		if !strings.Contains(stderr, "warning: the threads database") || !strings.Contains(stderr, "threads check") {
			t.Errorf("%v on a damaged database gave no warning: %q", args, stderr)
		}
	}
}
