package threads

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads/threaddoc"
)

// Kinds of failure, for errors.Is. Every error the Store returns about the database
// itself is an *Error of one of these kinds, built once here with a sentence that says
// what to do; callers only print it.
var (
	// ErrNotFound: no thread (or proposal) with that id.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: an id prefix matches several threads (see *AmbiguousError).
	ErrAmbiguous = errors.New("ambiguous thread id")
	// ErrExists: a thread with that id is already stored.
	ErrExists = errors.New("thread already exists")
	// ErrDecided: the proposal was already decided (or is being applied) by someone else.
	ErrDecided = convo.ErrDecided
	// ErrInvalid: the caller passed something the store cannot keep (the same error
	// as threaddoc.ErrInvalid, which a document that cannot become a thread wraps).
	ErrInvalid = threaddoc.ErrInvalid
	// ErrNewerSchema: the database was written by a newer nodius-ai.
	ErrNewerSchema = errors.New("database schema is newer than this program")
	// ErrNotDatabase: the file is not a SQLite database, or is corrupted.
	ErrNotDatabase = errors.New("not a threads database")
	// ErrReadOnly: the file or its directory cannot be written.
	ErrReadOnly = errors.New("database is read-only")
	// ErrDiskFull: no space left for the database.
	ErrDiskFull = errors.New("disk full")
	// ErrBusy: another process held the database longer than the busy timeout.
	ErrBusy = errors.New("database busy")
	// ErrIO: any other storage failure.
	ErrIO = errors.New("storage error")
)

// Error is a classified storage failure. Error() is one sentence naming the file
// and what to do; the SQLite error stays reachable through errors.As/Unwrap for logs.
type Error struct {
	Kind error
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes the kind (for errors.Is), the cause and, for a disk that refused
// the write (full, quota, file size limit, read-only), a fault.Storage error with
// the same sentence, so that the edge classifies it as something the person must
// fix rather than as internal.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Kind == ErrDiskFull || e.Kind == ErrReadOnly {
		errs = append(errs, &fault.Error{Code: fault.Storage, Message: e.Msg})
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// AmbiguousError lists the threads an id prefix matches, so the person can pick one.
type AmbiguousError struct {
	Prefix     string
	Candidates []Candidate
	More       bool // more matched than are listed
}

// Candidate is one thread an ambiguous prefix matched.
type Candidate struct {
	ID    string
	Title string
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "thread id %q is ambiguous: it matches ", e.Prefix)
	for i, c := range e.Candidates {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.ID)
		if c.Title != "" {
			fmt.Fprintf(&b, " (%s)", c.Title)
		}
	}
	if e.More {
		b.WriteString(", and more")
	}
	b.WriteString("; give more characters")
	return b.String()
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// notFound is the error for a missing thread.
func notFound(id string) error {
	return fmt.Errorf("no thread %q in the threads database (see `nodius-ai threads list --all`): %w", id, ErrNotFound)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalid)
}

// invalidBecause is invalid with the failure that made the input unusable, kept
// reachable (errors.As finds a *json.SyntaxError, say) without changing the text.
func invalidBecause(cause error, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %w", fmt.Sprintf(format, args...), cause, ErrInvalid)
}

// SQLite primary result codes (sqlite3.h).
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteCantOpen = 14
	sqliteNotADB   = 26
	// sqliteIOErrWrite is SQLITE_IOERR_WRITE: a write refused by the system (no
	// space, a file size limit, a quota).
	sqliteIOErrWrite = 778
)

// classify turns a failure of op on the database at path into an *Error with a clear
// sentence. Errors already classified (or the caller's own: not found, invalid,
// cancelled) pass through unchanged, so classification happens exactly once.
func classify(path, op string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrAmbiguous) ||
		errors.Is(err, ErrExists) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrDecided) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	code := 0
	var le *sqlite.Error
	if errors.As(err, &le) {
		code = le.Code() & 0xff
	}
	e := &Error{Path: path, Err: err}
	switch {
	case code == sqliteNotADB || code == sqliteCorrupt:
		e.Kind = ErrNotDatabase
		e.Msg = fmt.Sprintf("%s is not a nodius-ai threads database or is corrupted: move it aside (a new one is created on the next run) or choose another file with --db or NODIUS_AI_DB", path)
	case code == sqliteReadOnly || code == sqliteCantOpen:
		e.Kind = ErrReadOnly
		e.Msg = fmt.Sprintf("cannot write the threads database %s (read-only file or directory): fix its permissions or choose another file with --db or NODIUS_AI_DB", path)
	case code == sqliteFull || isNoSpace(err) || (le != nil && le.Code() == sqliteIOErrWrite):
		e.Kind = ErrDiskFull
		e.Msg = fmt.Sprintf("the disk holding the threads database %s is full (or a file size limit or quota was hit): free some space and try again (nothing was lost before this step)", path)
	case code == sqliteBusy || code == sqliteLocked:
		e.Kind = ErrBusy
		e.Msg = fmt.Sprintf("the threads database %s stayed locked by another process for too long: find the program holding it (a stuck sqlite3 shell, a paused process) and try again", path)
	default:
		e.Kind = ErrIO
		e.Msg = fmt.Sprintf("threads database %s: %s failed: %v", path, op, err)
	}
	return e
}

// isBusy reports whether err is SQLite's "another connection holds the lock".
func isBusy(err error) bool {
	var le *sqlite.Error
	if !errors.As(err, &le) {
		return false
	}
	code := le.Code() & 0xff
	return code == sqliteBusy || code == sqliteLocked
}

// isNoSpace recognises ENOSPC coming through SQLite's I/O error text.
func isNoSpace(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "no space left") || strings.Contains(s, "disk is full") || strings.Contains(s, "database or disk is full")
}
