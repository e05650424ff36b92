package threads

import (
	"context"
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
func (s *Store) CheckOnOpen(ctx context.Context) ([]string, error) {
	full := true
	if fi, err := os.Stat(s.path); err == nil && fi.Size() > fullCheckMax {
		full = false
	}
	return s.Check(ctx, full, 20)
}
