// Package syncer moves threads between the local thread store and the server's
// nodius_ai_threads collection, so a conversation started in the web client can be
// continued in the terminal and back.
//
// Both ways are last-writer-wins on lastUpdatedTime (Unix ms): a push never
// overwrites a newer remote copy (the remote enforces it), and a pull replaces a
// local thread only with a strictly newer document. Repeating a sync changes nothing.
//
// Each direction keeps a watermark, so a sync only looks at what changed since the
// last one: the push watermark over local UpdatedAt, the pull watermark over remote
// lastUpdatedTime. A thread that fails holds its direction's watermark below itself,
// so it is retried on the next sync while the others go on now. Watermarks live in a
// small JSON file next to the database (see State), one pair per remote and
// workspace, so two remotes never share one.
package syncer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/threads"
)

// Remote is where threads go: the arango source's thread primitives
// (*arango.Source satisfies it). PushThread must be a no-op when the stored copy is
// as new or newer; PullThreads returns the workspace's documents updated strictly
// after since, in any order.
type Remote interface {
	PushThread(ctx context.Context, doc json.RawMessage) (arango.PushResult, error)
	PullThreads(ctx context.Context, since int64) ([]json.RawMessage, error)
}

// Options say what to sync. Neither Push nor Pull means both.
type Options struct {
	Push bool
	Pull bool
	// Workspace of the remote. Local threads of another workspace are not pushed (the
	// remote would file them under its own). "" pushes every thread.
	Workspace string
	// RemoteID names the remote in the state file ("arango://host/db"); threads of
	// different remotes keep separate watermarks. Empty: "default".
	RemoteID string
	// StatePath is the watermark file; default StatePath(store).
	StatePath string
	// PullOverlap re-reads remote documents this much older than the pull watermark,
	// so a document written by a machine whose clock is a little behind is not
	// missed. Re-read documents that are not newer are skipped. Default 5 minutes;
	// negative for none.
	PullOverlap time.Duration
}

// DefaultPullOverlap is the default of Options.PullOverlap.
const DefaultPullOverlap = 5 * time.Minute

// maxErrors bounds Report.Errors; Failed counts all failures.
const maxErrors = 20

// Report counts what a sync did. Skipped threads were already in sync (a push the
// remote found no newer, a pulled document no newer than the local copy).
// OtherWorkspace counts local threads not pushed because they belong to another
// workspace. Errors holds the first failures, one per thread.
type Report struct {
	Pushed, Pulled, Skipped, Failed int
	OtherWorkspace                  int
	Errors                          []error
}

func (r *Report) fail(err error) {
	r.Failed++
	if len(r.Errors) < maxErrors {
		r.Errors = append(r.Errors, err)
	}
}

// ThreadError is the failure of one thread, in Report.Errors.
type ThreadError struct {
	ThreadID string
	Op       string // "push" or "pull"
	Err      error
}

func (e *ThreadError) Error() string { return e.Op + " thread " + e.ThreadID + ": " + e.Err.Error() }
func (e *ThreadError) Unwrap() error { return e.Err }

// Sync pushes local changes, then pulls remote ones (one direction with Push or Pull
// only). Per-thread failures are counted in the report and do not stop the others;
// the error is non-nil only when a direction could not run at all (the local list or
// the remote query failed, the state could not be saved) or ctx ended. What was done
// before such an error is in the report and its watermark saved.
func Sync(ctx context.Context, store *threads.Store, remote Remote, o Options) (Report, error) {
	var rep Report
	if store == nil || remote == nil {
		return rep, errors.New("thread sync: no store or no remote")
	}
	if !o.Push && !o.Pull {
		o.Push, o.Pull = true, true
	}
	statePath := o.StatePath
	if statePath == "" {
		statePath = StatePath(store)
	}
	st, err := LoadState(statePath)
	if err != nil {
		return rep, err
	}
	key := stateKey(o)
	marks := st.Remotes[key]
	var errs []error
	if o.Push {
		mark, err := push(ctx, store, remote, o, marks.LastPush, &rep)
		if err != nil {
			errs = append(errs, err)
		}
		marks.LastPush = max(marks.LastPush, mark)
	}
	if o.Pull && ctx.Err() == nil {
		mark, err := pull(ctx, store, remote, o, marks.LastPull, &rep)
		if err != nil {
			errs = append(errs, err)
		}
		marks.LastPull = max(marks.LastPull, mark)
	}
	if marks != st.Remotes[key] {
		st.Remotes[key] = marks
		if err := st.Save(statePath); err != nil {
			errs = append(errs, err)
		}
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// PushOne pushes one thread now, whatever the watermark says: the terminal does it
// after each run when sync is configured. It reports whether the remote took it
// (false when its copy was as new, or the thread belongs to another workspace).
// A failure leaves the thread for the next Sync, which still finds it changed.
func PushOne(ctx context.Context, store *threads.Store, remote Remote, workspace, id string) (bool, error) {
	// A copy of a Nodius server's thread (--agent server:) is the server's to keep:
	// pushing the copy would overwrite its own, fuller, document.
	if _, ok, err := store.RemoteOf(ctx, id); err != nil {
		return false, &ThreadError{ThreadID: id, Op: "push", Err: err}
	} else if ok {
		return false, nil
	}
	doc, err := store.Export(ctx, id)
	if err != nil {
		return false, &ThreadError{ThreadID: id, Op: "push", Err: err}
	}
	if !sameWorkspace(workspace, doc.Workspace) {
		return false, nil
	}
	return pushDoc(ctx, remote, doc)
}

func pushDoc(ctx context.Context, remote Remote, doc threads.Document) (bool, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return false, &ThreadError{ThreadID: doc.Key, Op: "push", Err: fmt.Errorf("encode: %w", err)}
	}
	res, err := remote.PushThread(ctx, raw)
	if err != nil {
		return false, &ThreadError{ThreadID: doc.Key, Op: "push", Err: err}
	}
	return res.Written, nil
}

// sameWorkspace: a thread without a workspace goes anywhere; "" as the remote's
// workspace accepts every thread.
func sameWorkspace(remote, local string) bool {
	return remote == "" || local == "" || remote == local
}

// push sends the local threads updated at or after since (ms; "at", so a thread
// written in the same millisecond as the last push is not missed: the remote turns
// the repeat into a no-op). It returns the new watermark: the newest UpdatedAt such
// that every thread before it went through. Threads after a failure are still pushed
// now, but the watermark stops at the failed one, so it is tried again next time.
func push(ctx context.Context, store *threads.Store, remote Remote, o Options, since int64, rep *Report) (int64, error) {
	list, err := store.List(ctx, threads.ListOptions{All: true})
	if err != nil {
		return since, fmt.Errorf("thread sync: list local threads: %w", err)
	}
	slices.SortStableFunc(list, func(a, b convo.Thread) int {
		return cmp.Compare(a.UpdatedAt.UnixMilli(), b.UpdatedAt.UnixMilli())
	})
	mark, held := since, false
	for _, t := range list {
		ts := t.UpdatedAt.UnixMilli()
		if ts < since {
			continue
		}
		if ctx.Err() != nil {
			break // Sync reports ctx; the watermark stays before this thread
		}
		if !sameWorkspace(o.Workspace, t.Workspace) {
			rep.OtherWorkspace++
		} else {
			written, err := PushOne(ctx, store, remote, o.Workspace, t.ID)
			switch {
			case err != nil:
				rep.fail(err)
				held = true
			case written:
				rep.Pushed++
			default:
				rep.Skipped++
			}
		}
		if !held {
			mark = ts
		}
	}
	return mark, nil
}

// pull fetches the remote documents updated after since (less the overlap) and
// imports each one newer than its local copy. It returns the new watermark: the
// newest lastUpdatedTime such that every document up to it went through.
func pull(ctx context.Context, store *threads.Store, remote Remote, o Options, since int64, rep *Report) (int64, error) {
	overlap := o.PullOverlap
	if overlap == 0 {
		overlap = DefaultPullOverlap
	}
	from := since
	if overlap > 0 && since > 0 {
		from = max(0, since-overlap.Milliseconds())
	}
	raws, err := remote.PullThreads(ctx, from)
	if err != nil {
		return since, fmt.Errorf("thread sync: pull threads: %w", err)
	}
	type item struct {
		doc threads.Document
		err error
	}
	items := make([]item, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &items[i].doc); err != nil {
			items[i].err = fmt.Errorf("decode the document: %w", err)
			// Keep what can be read of it, for the id and time in the report.
			var head struct {
				Key string `json:"_key"`
				TS  int64  `json:"lastUpdatedTime"`
			}
			_ = json.Unmarshal(raw, &head)
			items[i].doc = threads.Document{Key: head.Key, LastUpdatedTime: head.TS}
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.doc.LastUpdatedTime, b.doc.LastUpdatedTime) })
	mark, held := since, false
	for _, it := range items {
		if ctx.Err() != nil {
			break // Sync reports ctx; the watermark stays before this document
		}
		ts := it.doc.LastUpdatedTime
		err := it.err
		imported := false
		if err == nil {
			imported, err = pullDoc(ctx, store, it.doc)
		}
		switch {
		case err != nil:
			rep.fail(&ThreadError{ThreadID: it.doc.Key, Op: "pull", Err: err})
			if !held {
				held = true
				mark = min(mark, ts-1) // PullThreads is "after": ts itself comes back
			}
		case imported:
			rep.Pulled++
		default:
			rep.Skipped++
		}
		if !held {
			mark = max(mark, ts)
		}
	}
	return mark, nil
}

// pullDoc imports doc when no local thread has its id or the local copy is older.
func pullDoc(ctx context.Context, store *threads.Store, doc threads.Document) (bool, error) {
	local, err := store.Thread(ctx, doc.Key)
	switch {
	case errors.Is(err, threads.ErrNotFound):
	case err != nil:
		return false, err
	case doc.LastUpdatedTime <= local.UpdatedAt.UnixMilli():
		return false, nil // ours is as new or newer: last writer wins, and a push will send it
	}
	if _, err := store.Import(ctx, doc, threads.ImportOptions{Replace: true}); err != nil {
		return false, err
	}
	return true, nil
}
