// Package fault is the error taxonomy of nodius-ai: the codes every message, exit code
// and NDJSON error event is built from, and the classified Error every layer returns
// once it understands a failure. It is a leaf (standard library only) so that the
// data sources and the configuration can classify their failures without importing
// the agent; agent/convo re-exports it under its old names.
package fault

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// Code classifies a failure; scripts read it (the NDJSON error event, the message).
type Code string

const (
	RateLimit      Code = "rate_limit"
	ServerError    Code = "server_error"
	Auth           Code = "auth_error"
	Timeout        Code = "timeout"
	Network        Code = "network"
	ContentFilter  Code = "content_filter"
	ContextLength  Code = "context_length"
	BudgetExceeded Code = "budget_exceeded"
	InvalidRequest Code = "invalid_request"
	Internal       Code = "internal"
	// Interrupted is a run stopped by the user (Esc, Ctrl-C).
	Interrupted Code = "interrupted"
	// Config is a missing or bad configuration (exit code 2).
	Config Code = "config_error"
	// Storage is a write the disk refused for a reason the person must fix, not a bug:
	// the disk is full, the quota is used up, the file system is mounted read-only, or
	// a file went over the size limit (ulimit -f). Exit code 1, like every storage
	// failure; not retryable until the person has made room.
	Storage Code = "storage_error"
	// Decision is a decision that cannot be taken as asked: nothing is pending, it
	// was already decided, the pending proposal is not the one shown, or it may not
	// be applied now (role, policy, source). Exit code 2; nothing changed.
	Decision Code = "decision_error"
)

// Error is a classified failure: Message is one clear sentence that says what to do.
// It is built once, where the failure is understood (provider, store, config, source),
// and only printed at the edge.
type Error struct {
	Code       Code
	Message    string
	Retryable  bool
	RetryAfter time.Duration // from a Retry-After header, when the provider sent one
	Status     int           // HTTP status, when there was one
	Err        error         // the underlying error, for logs (never shown raw)
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Limit is the error of a bound hit: what went over (a sentence fragment such as "the
// model's answer"), the limit and its config key. It is budget_exceeded, not retryable:
// the same request would get the same reply.
func Limit(what, key string, limit int) *Error {
	return overLimit(what, fmt.Sprint(limit), key, key)
}

// LimitSum is Limit for a bound that no one key sets: limit is the bound as it
// should read ("40960 bytes"), sum says which keys add up to it, and the person is
// told to raise those.
func LimitSum(what, limit, sum string) *Error {
	return overLimit(what, limit, sum, "those")
}

func overLimit(what, limit, made, raise string) *Error {
	return &Error{Code: BudgetExceeded, Message: fmt.Sprintf(
		"%s went over the limit of %s (%s): the run stopped, what arrived so far is kept as interrupted and nothing was applied; raise %s in the [limits] table of the config file if this was expected",
		what, limit, made, raise)}
}

// StorageRefusal tells, as the start of a sentence, why the disk refused a write
// ("the disk holding /srv/graphs is full (no space left on device)") and what the
// person can do about it ("free some space"); ok is false when err is no such
// refusal. The directory comes from the *fs.PathError in err's chain, when there is
// one. (The Go runtime ignores SIGXFSZ, so a file size limit is an EFBIG error.)
func StorageRefusal(err error) (what, fix string, ok bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "", "", false
	}
	at := "" // " holding DIR", when the path is known
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		at = " holding " + filepath.Dir(pe.Path)
	}
	switch errno {
	case syscall.ENOSPC:
		what, fix = "the disk"+at+" is full", "free some space"
	case syscall.EDQUOT:
		what, fix = "your quota on the disk"+at+" is used up", "free some space or raise the quota"
	case syscall.EROFS:
		what, fix = "the file system"+at+" is mounted read-only", "remount it read-write or use a file on another disk"
	case syscall.EFBIG:
		what, fix = "a file on the disk"+at+" went over the file size limit", "raise the limit (ulimit -f)"
	default:
		return "", "", false
	}
	return what + " (" + errno.Error() + ")", fix, true
}

// As finds a *Error in err's chain.
func As(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

// Is reports whether err's chain holds a *Error with the given code.
func Is(err error, code Code) bool {
	fe, ok := As(err)
	return ok && fe.Code == code
}
