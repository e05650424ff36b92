package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gofrs/flock"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// A thread is worked on by one chat at a time. Two chats on one thread (two
// terminals) would each send and decide from their own picture of it: an approval
// in one was shown in the other as its own. So a chat holds a lock on the thread it
// works on, and another chat can read that thread but not send to it or decide it.
//
// The lock is an flock(2) on a file beside the threads database: the system
// releases it when the process ends however it ends (kill -9 included), so it can
// never stay stuck. The file holds the holder's pid, to name it.

// chatLock is the lock one chat process holds, on one thread at a time.
type chatLock struct {
	db    string // the threads database
	flags string // the flags a printed command needs (Factory.rerunFlags)

	mu   sync.Mutex
	id   string       // the thread held ("" for none)
	held *flock.Flock // its lock
	path string
}

func newChatLock(db, flags string) *chatLock { return &chatLock{db: db, flags: flags} }

// threadHeldError says that another chat works on the thread.
type threadHeldError struct {
	id, holder string
	flags      string // what threads show needs to run as printed (--db …)
}

func (e *threadHeldError) Error() string {
	who := "another chat"
	if e.holder != "" {
		who = "another chat (process " + e.holder + ")"
	}
	return fmt.Sprintf("thread %s is open in %s, and one chat at a time works on a thread: close that one first, or read the thread with: nodius-ai threads show %s%s", e.id, who, e.id, e.flags)
}

// lockFile is where thread id's lock lives: beside the database, named after the
// id when it is a plain one, else after its hash.
func lockFile(db, id string) string {
	name := id
	if strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) >= 0 {
		sum := sha256.Sum256([]byte(id))
		name = hex.EncodeToString(sum[:8])
	}
	return filepath.Join(filepath.Dir(db), "."+filepath.Base(db)+".chat-"+name+".lock")
}

// hold makes id the thread this chat holds, releasing the one it held before. When
// another process holds id, it returns a *threadHeldError and keeps what it held.
// A lock that cannot be taken for another reason (a read-only directory) is not
// held, and not an error: the database then refuses the writes anyway.
func (l *chatLock) hold(id string) error {
	if l == nil || id == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.id == id {
		return nil
	}
	path := lockFile(l.db, id)
	for range 5 {
		fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
		ok, err := fl.TryLock()
		if err != nil {
			return nil
		}
		if !ok {
			_ = fl.Close()
			b, _ := os.ReadFile(path)
			return &threadHeldError{id: id, holder: strings.TrimSpace(string(b)), flags: l.flags}
		}
		// The holder before may have removed the file as it let go: the lock is
		// then on a file no one else can find. Lock the one at the path.
		mine, err1 := fl.Stat()
		there, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(mine, there) {
			_ = fl.Unlock()
			continue
		}
		_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
		l.releaseLocked()
		l.id, l.held, l.path = id, fl, path
		return nil
	}
	return nil
}

// release lets the thread go (the chat ends).
func (l *chatLock) release() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked()
}

func (l *chatLock) releaseLocked() {
	if l.held == nil {
		return
	}
	// Removed while still locked, so no one locks a file about to disappear
	// without noticing (see hold).
	_ = os.Remove(l.path)
	_ = l.held.Unlock()
	l.id, l.held, l.path = "", nil, ""
}

// chatRunner is the runner the chat's screen uses: it holds the lock of the thread
// each run works on (a new thread's as soon as it exists), refuses a thread another
// chat holds, and records the model the thread runs with.
type chatRunner struct {
	rt   *Runtime
	lock *chatLock
}

func (c chatRunner) refuse(err error, id string) (agent.Result, error) {
	return agent.Result{ThreadID: id}, &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
}

func (c chatRunner) emitter(ctx context.Context, emit func(convo.Event)) func(convo.Event) {
	return recordLLM(ctx, c.rt, func(e convo.Event) {
		if e.Type == convo.EventThread {
			_ = c.lock.hold(e.ThreadID) // a new thread: no one else can have it yet
		}
		emit(e)
	})
}

func (c chatRunner) Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
	if err := c.lock.hold(req.ThreadID); err != nil {
		return c.refuse(err, req.ThreadID)
	}
	return c.rt.Runner.Send(ctx, req, c.emitter(ctx, emit))
}

func (c chatRunner) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
	if err := c.lock.hold(threadID); err != nil {
		return c.refuse(err, threadID)
	}
	return c.rt.Runner.Resume(ctx, threadID, d, c.emitter(ctx, emit))
}

// isThreadHeld reports whether err says another chat holds the thread.
func isThreadHeld(err error) bool {
	var h *threadHeldError
	return errors.As(err, &h)
}
