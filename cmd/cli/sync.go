package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/threads/syncer"
)

// syncAfterRunTimeout bounds the push after a run: the answer is already shown, and a
// slow or unreachable database must not hold the terminal for long (the next
// `threads sync` sends what this one could not).
const syncAfterRunTimeout = 20 * time.Second

// syncRemote is the --sync database, kept among the factory's closers so it is
// opened once per run and closed with the rest. Its own type tells it apart from an
// arango data source opened with --source.
type syncRemote struct{ *arango.Source }

// syncDest opens the --sync database once per run. Without --sync it is a
// configuration error (exit 2) that says how to set it.
func syncDest(ctx context.Context, f *Factory) (*arango.Source, error) {
	for _, c := range f.closers {
		if r, ok := c.(syncRemote); ok {
			return r.Source, nil
		}
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	url := strings.TrimSpace(cfg.Sync)
	if url == "" {
		return nil, &fault.Error{Code: fault.Config,
			Message: "thread sync needs --sync arango://USER:PASS@HOST:PORT/DB?workspace=W (or NODIUS_AI_SYNC, or sync in the config file)"}
	}
	if !strings.HasPrefix(url, "arango://") && !strings.HasPrefix(url, "arangos://") {
		return nil, &fault.Error{Code: fault.Config,
			Message: "--sync must be an arango:// or arangos:// URL (the database of the Nodius server), got " + redactedScheme(url)}
	}
	// The same opening as --source arango://, so the URL's ?workspace= wins over the
	// configured workspace in both places.
	src, err := openArango(ctx, cfg, url)
	if err != nil {
		return nil, err
	}
	remote, ok := src.(*arango.Source)
	if !ok { // openArango returns what arango.Open opened; this guards a future change
		if c, ok := src.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		return nil, fmt.Errorf("thread sync: the --sync URL opened a %T, not an ArangoDB database", src)
	}
	f.closers = append(f.closers, syncRemote{remote})
	return remote, nil
}

// syncEnds opens both ends of a sync: the --sync database and the threads store.
func syncEnds(ctx context.Context, f *Factory) (*threads.Store, *arango.Source, error) {
	remote, err := syncDest(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	store, err := f.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	return store, remote, nil
}

// redactedScheme names what was given without echoing credentials it may hold.
func redactedScheme(url string) string { return fault.MaskCredentials(url) }

// syncAfterRun pushes a thread to the --sync database once an ask, approve or reject
// run has ended, so the web client sees the conversation at once.
func syncAfterRun(ctx context.Context, f *Factory, threadID string) {
	if threadID == "" {
		return
	}
	pushQuietly(ctx, f, "thread "+threadID+" was", func(ctx context.Context, store *threads.Store, remote *arango.Source) error {
		_, err := syncer.PushOne(ctx, store, remote, remote.Workspace(), threadID)
		return err
	})
}

// syncAfterChat pushes the threads a chat session changed (everything changed since
// the last push).
func syncAfterChat(ctx context.Context, f *Factory) {
	pushQuietly(ctx, f, "threads were", func(ctx context.Context, store *threads.Store, remote *arango.Source) error {
		rep, err := syncer.Sync(ctx, store, remote, syncer.Options{Push: true, Workspace: remote.Workspace(), RemoteID: remote.Describe()})
		if err == nil && rep.Failed > 0 && len(rep.Errors) > 0 {
			err = rep.Errors[0]
		}
		return err
	})
}

// pushQuietly runs a push after local work when --sync is set. Sync never blocks
// local work: without --sync it does nothing, an interrupted run is left to the next
// sync, and a failure is logged and shown as one warning line on stderr, never
// changing the exit code; what failed stays newer than the push watermark, so the
// next `threads sync` retries it.
func pushQuietly(ctx context.Context, f *Factory, what string, push func(context.Context, *threads.Store, *arango.Source) error) {
	if ctx.Err() != nil {
		return
	}
	cfg, err := f.Config()
	if err != nil || strings.TrimSpace(cfg.Sync) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, syncAfterRunTimeout)
	defer cancel()
	store, remote, err := syncEnds(ctx, f)
	if err == nil {
		err = push(ctx, store, remote)
	}
	if err == nil {
		return
	}
	f.Logger().Warn("thread sync after local work failed", "what", what, "error", err.Error())
	fmt.Fprintf(f.IO.ErrOut, "nodius-ai: warning: %s not synced (%s); `nodius-ai threads sync` will retry\n",
		what, strings.TrimSuffix(oneLine(err), "."))
}

// runThreadsSync is `threads sync`: push, pull or both, then one summary line on
// stdout. Threads that failed are listed on stderr and make the exit code 1; they
// are retried by the next sync.
func runThreadsSync(ctx context.Context, f *Factory, push, pull bool) error {
	store, remote, err := syncEnds(ctx, f)
	if err != nil {
		return err
	}
	rep, err := syncer.Sync(ctx, store, remote, syncer.Options{
		Push: push, Pull: pull, Workspace: remote.Workspace(), RemoteID: remote.Describe(),
	})
	fmt.Fprintln(f.IO.Out, syncSummary(rep, remote.Describe(), push, pull))
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		for _, e := range rep.Errors {
			fmt.Fprintf(f.IO.ErrOut, "nodius-ai: threads sync: %s\n", oneLine(e))
		}
		if more := rep.Failed - len(rep.Errors); more > 0 {
			fmt.Fprintf(f.IO.ErrOut, "nodius-ai: threads sync: … and %d more failure(s)\n", more)
		}
		fmt.Fprintln(f.IO.ErrOut, "nodius-ai: run `nodius-ai threads sync` again to retry the failed threads")
		return &ExitError{Code: ExitRuntime}
	}
	return nil
}

// syncSummary is the one line `threads sync` prints:
// "synced with arango://root@host:8529/nodius (workspace acme): pushed 2, pulled 1, skipped 3, failed 0".
func syncSummary(rep syncer.Report, dest string, push, pull bool) string {
	var parts []string
	if push || !pull {
		parts = append(parts, fmt.Sprintf("pushed %d", rep.Pushed))
	}
	if pull || !push {
		parts = append(parts, fmt.Sprintf("pulled %d", rep.Pulled))
	}
	parts = append(parts, fmt.Sprintf("skipped %d", rep.Skipped), fmt.Sprintf("failed %d", rep.Failed))
	line := "synced with " + dest + ": " + strings.Join(parts, ", ")
	if rep.OtherWorkspace > 0 {
		line += fmt.Sprintf("; %d thread(s) of other workspaces not pushed", rep.OtherWorkspace)
	}
	return line
}
