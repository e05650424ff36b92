package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// fullCheckMax is the size up to which opening a database runs SQLite's full
// integrity_check rather than quick_check: the full check is the one that sees an
// index that no longer matches its table (quick_check does not), and below this
// size it costs a few milliseconds (measured: 7.5 MB takes 16 ms in C SQLite,
// quick_check 7 ms; the pure-Go driver is slower).
const fullCheckMax = 2 << 20

// Check runs SQLite's integrity check over the database and returns what it found
// wrong (nil when the file is sound). full picks integrity_check, which also
// compares every index with its table; otherwise quick_check, which is linear in the
// file's size and skips that comparison. At most max problems are returned.
func (s *Store) Check(ctx context.Context, full bool, max int) ([]string, error) {
	if max <= 0 {
		max = 100
	}
	pragma := "quick_check"
	if full {
		pragma = "integrity_check"
	}
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", pragma, max))
	if err != nil {
		return nil, classify(s.path, pragma, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, classify(s.path, pragma, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return problems, classify(s.path, pragma, err)
	}
	return problems, nil
}

// CheckOnOpen is the check a command runs before it uses the database: the full
// integrity check for a database of ordinary size, quick_check for a large one. It
// returns the problems found (nil when sound); the caller warns.
//
// A sound result is remembered next to the database (DB.checked) with the file's
// size and modification time taken before the check began; a later command that
// finds the file unchanged, with nothing in its write-ahead log, skips the check.
// Whatever changes the file (a write, a checkpoint, a copy over it) changes its
// modification time, and a damaged result is never remembered, so the warning
// shows on every command until the file is mended.
func (s *Store) CheckOnOpen(ctx context.Context) ([]string, error) {
	stamp, stable := stampOf(s.path)
	if stable && readStamp(s.path) == stamp {
		return nil, nil
	}
	problems, err := s.Check(ctx, stamp.Size <= fullCheckMax, 20)
	if err == nil && len(problems) == 0 && stable {
		writeStamp(s.path, stamp) // best effort: a read-only directory keeps checking
	}
	return problems, err
}

// checkStamp identifies the state of a database file that was found sound.
type checkStamp struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

// stampOf stats the database; stable is false when it cannot be stat'ed or its
// write-ahead log holds frames (another process is writing, or one died mid-way):
// the file alone does not then say what a reader sees, so the check runs.
func stampOf(path string) (st checkStamp, stable bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return checkStamp{}, false
	}
	st = checkStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return st, false
	}
	return st, true
}

func stampPath(path string) string { return path + ".checked" }

func readStamp(path string) checkStamp {
	var st checkStamp
	b, err := os.ReadFile(stampPath(path))
	if err != nil || json.Unmarshal(b, &st) != nil {
		return checkStamp{}
	}
	return st
}

// writeStamp records a sound check. One small write: a reader racing with it sees
// the old stamp, the new one or an empty file (which means "check").
func writeStamp(path string, st checkStamp) {
	b, _ := json.Marshal(st)
	_ = os.WriteFile(stampPath(path), b, 0o600)
}
