package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// sourceSpec names a data source without credentials, as a thread records it: a
// file path made absolute, an arango URL without its password, a server URL without
// user info, and neither with a query parameter that may hold a secret (a token, a
// key, a password) nor a fragment. A URL that does not parse keeps only what follows
// its last '@', up to its query. Two specs are the same source when they are equal.
func sourceSpec(spec string) string {
	switch {
	case spec == "" || spec == "demo":
		return "demo"
	case strings.HasPrefix(spec, "file:"):
		p := strings.TrimPrefix(spec, "file:")
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return "file:" + p
	case strings.HasPrefix(spec, "arango://"), strings.HasPrefix(spec, "arangos://"):
		u, err := url.Parse(spec)
		if !parsedWhole(u, err, spec) {
			return withoutUserinfo("", spec)
		}
		if u.User != nil {
			if name := u.User.Username(); name != "" {
				u.User = url.User(name)
			} else {
				u.User = nil
			}
		}
		return withoutSecretParams(u).String()
	case strings.HasPrefix(spec, "server:"):
		raw := strings.TrimPrefix(spec, "server:")
		u, err := url.Parse(raw)
		if !parsedWhole(u, err, raw) {
			return withoutUserinfo("server:", raw)
		}
		u.User = nil
		return "server:" + withoutSecretParams(u).String()
	}
	return spec
}

// parsedWhole reports whether raw parsed as a URL with a host, its user info (if
// any) where a URL has it: a '@' read as part of a port, query or fragment
// ("arango://u:1?w@host") means a password was cut where it should not be.
func parsedWhole(u *url.URL, err error, raw string) bool {
	return err == nil && u.Host != "" && (u.User != nil || !strings.Contains(raw, "@"))
}

// withoutSecretParams drops the query parameters that may hold a credential, and
// the fragment.
func withoutSecretParams(u *url.URL) *url.URL {
	q := u.Query()
	for k := range q {
		if fault.SecretParam(k) {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", ""
	return u
}

// withoutUserinfo is what is kept of a URL that does not parse: its scheme, then
// what follows its last '@' (a password may hold '/', '?' or '@'), up to its query
// or fragment.
func withoutUserinfo(prefix, raw string) string {
	lead := ""
	if i := strings.Index(raw, "://"); i >= 0 {
		lead, raw = raw[:i+3], raw[i+3:]
	}
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		raw = raw[at+1:]
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	return prefix + lead + raw
}

// sourceChosen reports whether --source was typed on this command line.
func (f *Factory) sourceChosen() bool {
	if f.flags == nil {
		return false
	}
	fl := f.flags.Lookup("source")
	return fl != nil && fl.Changed
}

// adoptThreadSource makes the thread's recorded source the one in effect when none
// was typed on the command line (see useThreadSource), and returns the thread's full
// id. It must run before the runtime is built.
func (f *Factory) adoptThreadSource(ctx context.Context, threadArg string, strict bool) (string, error) {
	store, err := f.Store(ctx)
	if err != nil {
		return "", err
	}
	id, err := threadsResolve(ctx, store, threadArg)
	if err != nil {
		return "", err
	}
	th, err := store.Thread(ctx, id)
	if err != nil {
		return "", err
	}
	if err := f.useThreadLLM(ctx, th); err != nil {
		return "", err
	}
	_, err = f.useThreadSource(ctx, th, strict)
	return id, err
}

// untrustedSourceError is why a thread's recorded source was not used: the thread
// came from a document (threads import, threads sync --pull), so its source was
// written by someone else.
type untrustedSourceError struct{ msg string }

func (e *untrustedSourceError) Error() string { return e.msg }

// isUntrustedSource reports whether err is an untrustedSourceError.
func isUntrustedSource(err error) bool {
	var u *untrustedSourceError
	return errors.As(err, &u)
}

// useThreadSource makes th's recorded source the one in effect when none was typed
// on the command line: a thread is continued, decided, undone and drawn where it
// happened. Credentials still come from the flags, environment or config (the
// database never holds them): when the configured source is the recorded one, its
// URL, password included, is kept. A configured source (NODIUS_AI_SOURCE, the config
// file) that differs from the thread's is, with strict (approve, reject, undo), a
// usage error naming both; without, the thread's wins and overridden is that
// configured source (for the caller to say so). Threads that recorded no source keep
// the source in effect. It must run before the source is opened.
//
// A source adopted this way is marked config.OriginThread: the configured token is
// never sent to it (only a token auth login stored for exactly its host is, see
// config.ServerToken).
//
// A thread imported or pulled from a document (threads.Store.Imported) is not
// trusted: its recorded source, which someone else wrote, is used only when the
// user names it — typed as --source, or the configured source itself. Otherwise this
// is a usage error (an untrustedSourceError) that says how, and nothing has been
// sent anywhere.
func (f *Factory) useThreadSource(ctx context.Context, th convo.Thread, strict bool) (overridden string, err error) {
	cfg, err := f.Config()
	if err != nil {
		return "", err
	}
	if th.Source == "" || f.sourceChosen() {
		return "", nil
	}
	// The built-in default (the demo graph) is no choice: the thread's source wins.
	// So is the default server of auth login.
	configured := cfg.Source != "" && (cfg.Source != config.DefaultSource || f.IO.Getenv("NODIUS_AI_SOURCE") != "") &&
		cfg.Origins["source"] != config.OriginLogin
	if configured && sourceSpec(cfg.Source) == th.Source {
		return "", nil // the user's own configuration names it
	}
	if th.Source != "demo" {
		store, err := f.Store(ctx)
		if err != nil {
			return "", err
		}
		imported, err := store.Imported(ctx, th.ID)
		if err != nil {
			return "", err
		}
		if imported {
			return "", &ExitError{Code: ExitUsage, Err: &untrustedSourceError{fmt.Sprintf(
				"thread %s was imported (threads import or threads sync --pull), so its recorded source %s is not trusted and nothing was sent there; "+
					"to use it, name it yourself with --source %s",
				th.ID, termtext.OneLine(th.Source), termtext.OneLine(th.Source))}}
		}
	}
	if configured {
		if strict {
			return "", &ExitError{Code: ExitUsage, Err: fmt.Errorf(
				"thread %s works on %s, but the source in effect is %s (from NODIUS_AI_SOURCE or the config file); pass --source to choose one",
				th.ID, th.Source, sourceSpec(cfg.Source))}
		}
		overridden = sourceSpec(cfg.Source)
	}
	cfg.Source = th.Source
	cfg.Origins["source"] = config.OriginThread
	return overridden, nil
}

// demoNote is what a change applied to the embedded demo graph means.
const demoNote = "the demo graph lives in this process's memory: the change is not saved and is gone when nodius-ai exits"

// isDemo reports whether the source in effect is the embedded demo graph.
func isDemo(spec string) bool { return sourceSpec(spec) == "demo" }
