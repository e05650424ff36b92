// Package threads is nodius-ai's conversation store: every thread, message, tool run,
// proposal and decision lives in one local SQLite database (modernc.org/sqlite, no
// cgo), so a conversation survives crashes, can be continued later and inspected
// offline.
//
// Every agent step is one transaction (see agent.Store): a crash at any instant loses
// at most the step in flight and never corrupts a thread. Every read is scoped by
// thread id, so no message of one thread can reach another's prompt. The database runs
// in WAL mode with synchronous=NORMAL: a killed process loses nothing committed, and
// readers never wait for the writer.
package threads

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultBusyTimeout is how long a write waits, at most, for other processes'
// transactions. Each of them lasts milliseconds (one agent step), so ordinary
// contention — a few terminals, an approval and a sync on the same file, on a loaded
// machine — is waited out well inside it; only a process that holds the lock for
// a minute (a stopped debugger, a stuck sqlite3 shell) makes a write fail.
const DefaultBusyTimeout = time.Minute

// sqliteBusyWait is the busy_timeout given to SQLite itself. Past it, the store backs
// off with jitter and tries again (see retryBusy) until BusyTimeout: SQLite's own
// handler polls on a fixed schedule, and under load one process can keep missing the
// moment the lock is free; random waits give every process its turn.
const sqliteBusyWait = 200 * time.Millisecond

// Options tune Open. The zero value is what the program uses.
type Options struct {
	// BusyTimeout bounds the wait for a lock held by another process (default one minute).
	BusyTimeout time.Duration
	// Now is the clock (tests pin it); default time.Now.
	Now func() time.Time
	// ReadOnly opens an existing database for reading only (a read-only file or
	// directory): nothing is created or migrated, and every write fails as ErrReadOnly.
	ReadOnly bool
}

// readConns is the size of the reader pool: one process makes only a few reads at
// once, and in WAL mode none of them waits for the writer.
const readConns = 4

// Store is the thread database. It is safe for concurrent use by one process, and
// several processes may use the same file at once.
type Store struct {
	path string
	// w is the one writer connection: SQLite allows one writer at a time anyway, and
	// a single connection makes every write transaction BEGIN IMMEDIATE without
	// queueing on the file lock inside the process.
	w *sql.DB
	// r is a pool of read-only connections; in WAL mode they never block on w.
	r   *sql.DB
	now func() time.Time
	// busyTimeout bounds the wait for other processes' locks (see retryBusy).
	busyTimeout time.Duration
	// readOnly: opened with Options.ReadOnly; w is nil.
	readOnly bool
}

// Open opens (creating when needed) the database at path and applies the embedded
// migrations. A new directory is made 0700 and a new file 0600, since threads hold
// everything said about a graph.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, invalid("no threads database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, invalidBecause(err, "threads database path %q", path)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReadOnly {
		return openReadOnly(ctx, abs, opts)
	}
	if err := prepareFile(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs, now: opts.Now, busyTimeout: opts.BusyTimeout}
	ms := strconv.FormatInt(min(opts.BusyTimeout, sqliteBusyWait).Milliseconds(), 10)
	base := "file:" + (&url.URL{Path: abs}).EscapedPath() +
		"?_pragma=busy_timeout(" + ms + ")&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	s.w, err = sql.Open("sqlite", base+"&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, classify(abs, "open", err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := s.retryBusy(ctx, func() error { return s.init(ctx) }); err != nil {
		_ = s.w.Close()
		return nil, err
	}
	s.r, err = sql.Open("sqlite", base+"&_pragma=query_only(1)&_pragma=mmap_size(268435456)")
	if err != nil {
		_ = s.w.Close()
		return nil, classify(abs, "open", err)
	}
	s.r.SetMaxOpenConns(readConns)
	s.r.SetMaxIdleConns(readConns)
	if err := s.r.PingContext(ctx); err != nil {
		_ = s.Close()
		return nil, classify(abs, "open", err)
	}
	return s, nil
}

// openReadOnly opens the reader pool alone, with SQLite's read-only mode; when even
// the WAL index cannot be made (a read-only directory), as an immutable file.
func openReadOnly(ctx context.Context, abs string, opts Options) (*Store, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, &Error{Kind: ErrReadOnly, Path: abs, Err: err,
			Msg: fmt.Sprintf("cannot read the threads database %s: %v; fix its permissions or choose another file with --db or NODIUS_AI_DB", abs, errors.Unwrap(err))}
	}
	head := make([]byte, len(sqliteHeader))
	_, herr := io.ReadFull(f, head)
	_ = f.Close()
	if herr != nil || string(head) != sqliteHeader {
		return nil, &Error{Kind: ErrNotDatabase, Path: abs,
			Msg: fmt.Sprintf("%s is not a SQLite database (is --db pointing at the wrong file?): move it aside or choose another file with --db or NODIUS_AI_DB", abs)}
	}
	s := &Store{path: abs, now: opts.Now, busyTimeout: opts.BusyTimeout, readOnly: true}
	base := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?_pragma=busy_timeout(" +
		strconv.FormatInt(min(opts.BusyTimeout, sqliteBusyWait).Milliseconds(), 10) + ")&_pragma=query_only(1)"
	var lastErr error
	for _, mode := range []string{"&mode=ro", "&mode=ro&immutable=1"} {
		r, err := sql.Open("sqlite", base+mode)
		if err == nil {
			r.SetMaxOpenConns(readConns)
			var n int
			if err = r.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err == nil {
				s.r = r
				return s, nil
			}
			_ = r.Close()
		}
		lastErr = err
	}
	return nil, classify(abs, "open read-only", lastErr)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database. Committed data is safe whether or not Close runs.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// sqliteHeader starts every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// prepareFile makes the directory (0700) and an empty file (0600) when they do not
// exist, and rejects an existing file that is not SQLite before SQLite touches it.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &Error{Kind: ErrReadOnly, Path: path, Err: err,
			Msg: fmt.Sprintf("cannot create the directory %s for the threads database: %v; choose another file with --db or NODIUS_AI_DB", dir, errors.Unwrap(err))}
	}
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		nf, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if cerr != nil && !errors.Is(cerr, fs.ErrExist) {
			return &Error{Kind: ErrReadOnly, Path: path, Err: cerr,
				Msg: fmt.Sprintf("cannot create the threads database %s: %v; fix the directory's permissions or choose another file with --db or NODIUS_AI_DB", path, errors.Unwrap(cerr))}
		}
		if nf != nil {
			return nf.Close()
		}
		return nil
	case err != nil:
		return &Error{Kind: ErrReadOnly, Path: path, Err: err,
			Msg: fmt.Sprintf("cannot read the threads database %s: %v; fix its permissions or choose another file with --db or NODIUS_AI_DB", path, errors.Unwrap(err))}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return classify(path, "stat", err)
	}
	if st.IsDir() {
		return &Error{Kind: ErrNotDatabase, Path: path,
			Msg: fmt.Sprintf("%s is a directory, not a threads database: choose a file with --db or NODIUS_AI_DB", path)}
	}
	if st.Mode().Perm()&0o077 != 0 {
		// Tighten what an older version or a copy left open to others, but never
		// give the owner a write permission they took away: a database made
		// read-only stays read-only.
		_ = os.Chmod(path, st.Mode().Perm()&0o700)
	}
	if st.Size() == 0 {
		return nil
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteHeader {
		return &Error{Kind: ErrNotDatabase, Path: path, Err: err,
			Msg: fmt.Sprintf("%s is not a SQLite database (is --db pointing at the wrong file?): move it aside or choose another file with --db or NODIUS_AI_DB", path)}
	}
	return nil
}

// init checks the connection, WAL mode and the schema version, then migrates.
func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return classify(s.path, "open", err)
	}
	if mode != "wal" {
		return &Error{Kind: ErrIO, Path: s.path,
			Msg: fmt.Sprintf("the threads database %s cannot use WAL journaling (journal mode %q; network file systems do not support it): choose a local file with --db or NODIUS_AI_DB", s.path, mode)}
	}
	return s.migrate(ctx)
}

// gooseTable is where goose records applied schema versions.
const gooseTable = "goose_db_version"

// SchemaVersion is the newest schema this program knows.
func SchemaVersion() int64 {
	ents, _ := fs.ReadDir(migrations, "migrations")
	var v int64
	for _, e := range ents {
		if n, err := goose.NumericComponent(e.Name()); err == nil && n > v {
			v = n
		}
	}
	return v
}

// migrate applies pending migrations. A database whose schema is newer than the
// program is refused: downgrading would drop what the newer version keeps.
func (s *Store) migrate(ctx context.Context) error {
	known := SchemaVersion()
	var exists int
	err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", gooseTable).Scan(&exists)
	if err != nil {
		return classify(s.path, "read the schema", err)
	}
	if exists > 0 {
		var cur sql.NullInt64
		err := s.w.QueryRowContext(ctx, "SELECT max(version_id) FROM "+gooseTable+" WHERE is_applied").Scan(&cur)
		if err != nil {
			return classify(s.path, "read the schema version", err)
		}
		if cur.Int64 > known {
			return &Error{Kind: ErrNewerSchema, Path: s.path,
				Msg: fmt.Sprintf("the threads database %s has schema version %d, newer than this nodius-ai knows (%d): upgrade nodius-ai, or choose another file with --db", s.path, cur.Int64, known)}
		}
		if cur.Int64 == known {
			return nil
		}
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("threads: embedded migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.w, sub,
		goose.WithDisableGlobalRegistry(true), goose.WithTableName(gooseTable))
	if err != nil {
		return fmt.Errorf("threads: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		// Another process opening the same new file may have migrated it first.
		if v, verr := p.GetDBVersion(ctx); verr == nil && v == known {
			return nil
		}
		return classify(s.path, "migrate the schema", err)
	}
	return nil
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE: it takes the write lock at
// once, so a busy database waits on busy_timeout instead of failing mid-way).
func (s *Store) tx(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	if s.readOnly {
		return &Error{Kind: ErrReadOnly, Path: s.path,
			Msg: fmt.Sprintf("cannot %s: the threads database %s is open read-only (its file or directory cannot be written); fix its permissions or choose another file with --db or NODIUS_AI_DB", op, s.path)}
	}
	var tx *sql.Tx
	err := s.retryBusy(ctx, func() (err error) {
		tx, err = s.w.BeginTx(ctx, nil)
		return err
	})
	if err != nil {
		return classify(s.path, op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return classify(s.path, op, err)
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return classify(s.path, op, err)
	}
	return nil
}

// retryBusy runs fn until it does not fail on a lock held by another process, backing
// off with jitter between tries (from 5 ms, doubling up to 250 ms), for at most
// s.busyTimeout. Only what fails before it changed anything is retried: opening and
// BEGIN IMMEDIATE.
func (s *Store) retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(s.busyTimeout)
	wait := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		d := wait/2 + rand.N(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// querier is what read helpers need: the reader pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ms converts a time to Unix milliseconds (0 for the zero time).
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts Unix milliseconds back (zero time for 0).
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}
