package syncer_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/threads/syncer"
	"github.com/nodius/nodius-ai/threads/threadstest"
)

// fakeRemote is nodius_ai_threads in memory with the arango source's semantics: a
// push is written only when no copy exists or the stored copy of the same workspace
// is older; the workspace is set to the remote's; a pull returns documents updated
// strictly after since. Faults are injected per thread key.
type fakeRemote struct {
	ws string

	mu        sync.Mutex
	docs      map[string]map[string]any
	failPush  map[string]error
	failPull  error
	pushes    int
	pullSince []int64
}

func newFakeRemote(ws string) *fakeRemote {
	return &fakeRemote{ws: ws, docs: map[string]map[string]any{}, failPush: map[string]error{}}
}

func (r *fakeRemote) PushThread(_ context.Context, raw json.RawMessage) (arango.PushResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pushes++
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return arango.PushResult{}, err
	}
	key, _ := doc["_key"].(string)
	if err := r.failPush[key]; err != nil {
		return arango.PushResult{}, err
	}
	ts := doc["lastUpdatedTime"].(float64)
	if old, ok := r.docs[key]; ok && (old["workspace"] != r.ws || old["lastUpdatedTime"].(float64) >= ts) {
		return arango.PushResult{Written: false, Stored: int64(old["lastUpdatedTime"].(float64))}, nil
	}
	doc["workspace"] = r.ws
	r.docs[key] = doc
	return arango.PushResult{Written: true, Stored: int64(ts)}, nil
}

func (r *fakeRemote) PullThreads(_ context.Context, since int64) ([]json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pullSince = append(r.pullSince, since)
	if r.failPull != nil {
		return nil, r.failPull
	}
	var out []json.RawMessage
	for _, d := range r.docs {
		if d["workspace"] == r.ws && int64(d["lastUpdatedTime"].(float64)) > since {
			b, _ := json.Marshal(d)
			out = append(out, b)
		}
	}
	return out, nil
}

// put stores a document as the web client would write it.
func (r *fakeRemote) put(doc map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := json.Marshal(doc)
	var d map[string]any
	_ = json.Unmarshal(b, &d)
	r.docs[d["_key"].(string)] = d
}

func (r *fakeRemote) doc(key string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.docs[key]
}

// webDoc is a thread document in the server's format (AIThreadDocument).
func webDoc(key, ws string, updated int64, question, answer string) map[string]any {
	return map[string]any{
		"_key": key, "graphKey": "demo", "workspace": ws, "userId": "admin",
		"conversationHistory": []any{
			map[string]any{"role": "system", "content": "SYSTEM PROMPT"},
			map[string]any{"role": "user", "content": question},
			map[string]any{"role": "assistant", "content": answer},
		},
		"pendingInterrupt": nil, "createdTime": 1, "lastUpdatedTime": updated,
	}
}

func openStore(t *testing.T) *threads.Store {
	t.Helper()
	s, err := threads.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// local puts a thread in the store as of updated (ms), through Import.
func local(t *testing.T, s *threads.Store, key, ws string, updated int64, text string) {
	t.Helper()
	b, _ := json.Marshal(webDoc(key, ws, updated, text, "answer to "+text))
	var doc threads.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(context.Background(), doc, threads.ImportOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
}

func question(t *testing.T, s *threads.Store, id string) string {
	t.Helper()
	msgs, err := s.Messages(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == convo.User {
			return m.Content
		}
	}
	return ""
}

func counts(r syncer.Report) [4]int { return [4]int{r.Pushed, r.Pulled, r.Skipped, r.Failed} }

func TestSyncBothWaysIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	remote := newFakeRemote("acme")
	local(t, s, "ai_1_1", "acme", 1000, "local one")
	local(t, s, "ai_2_1", "", 2000, "local two, no workspace")
	remote.put(webDoc("ai_web_1", "acme", 1500, "from the web", "web answer"))
	o := syncer.Options{Workspace: "acme", RemoteID: "fake"}

	rep, err := syncer.Sync(ctx, s, remote, o)
	if err != nil {
		t.Fatal(err)
	}
	// The two local threads go up; the web thread comes down; the pull also sees the
	// two just pushed, no newer than the local copies.
	if got, want := counts(rep), [4]int{2, 1, 2, 0}; got != want {
		t.Errorf("first sync (pushed, pulled, skipped, failed) = %v, want %v", got, want)
	}
	if q := question(t, s, "ai_web_1"); q != "from the web" {
		t.Errorf("pulled thread's question = %q", q)
	}
	if d := remote.doc("ai_2_1"); d == nil || d["workspace"] != "acme" {
		t.Errorf("pushed thread = %v, want workspace acme", d)
	}
	for i := 0; i < 2; i++ {
		rep, err = syncer.Sync(ctx, s, remote, o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Pushed != 0 || rep.Pulled != 0 || rep.Failed != 0 {
			t.Errorf("repeat sync %d = %+v, want nothing pushed or pulled", i, rep)
		}
	}
}

func TestSyncLastWriterWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	remote := newFakeRemote("acme")
	o := syncer.Options{Workspace: "acme"}
	local(t, s, "ai_a", "acme", 1000, "a v1")
	local(t, s, "ai_b", "acme", 1000, "b v1")
	if _, err := syncer.Sync(ctx, s, remote, o); err != nil {
		t.Fatal(err)
	}
	// The web client continues a; the terminal continues b.
	remote.put(webDoc("ai_a", "acme", 5000, "a v2 (web)", "x"))
	local(t, s, "ai_b", "acme", 6000, "b v2 (terminal)")

	rep, err := syncer.Sync(ctx, s, remote, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pushed != 1 || rep.Pulled != 1 || rep.Failed != 0 {
		t.Errorf("report = %+v, want b pushed and a pulled", rep)
	}
	if q := question(t, s, "ai_a"); q != "a v2 (web)" {
		t.Errorf("local a = %q, want the web's newer copy", q)
	}
	hist := remote.doc("ai_b")["conversationHistory"].([]any)
	if c := hist[1].(map[string]any)["content"]; c != "b v2 (terminal)" {
		t.Errorf("remote b = %v, want the terminal's newer copy", c)
	}
	// An older local copy never overwrites a newer remote one, even pushed directly.
	local(t, s, "ai_a", "acme", 4000, "a stale")
	if written, err := syncer.PushOne(ctx, s, remote, "acme", "ai_a"); err != nil || written {
		t.Errorf("push of an older copy: written %v, %v", written, err)
	}
}

func TestSyncFailuresAreIsolatedAndRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	remote := newFakeRemote("acme")
	o := syncer.Options{Workspace: "acme", PullOverlap: -1}
	local(t, s, "ai_1", "acme", 1000, "one")
	local(t, s, "ai_2", "acme", 2000, "two")
	local(t, s, "ai_3", "acme", 3000, "three")
	remote.failPush["ai_2"] = errors.New("network: connection reset")
	bad := webDoc("ai_bad", "acme", 1500, "broken", "x")
	delete(bad, "graphKey") // cannot become a thread
	remote.put(bad)
	remote.put(webDoc("ai_ok", "acme", 2500, "fine", "x"))

	rep, err := syncer.Sync(ctx, s, remote, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pushed != 2 || rep.Pulled != 1 || rep.Failed != 2 {
		t.Fatalf("report = %+v, want 2 pushed, 1 pulled, 2 failed", rep)
	}
	var te *syncer.ThreadError
	if len(rep.Errors) != 2 || !errors.As(rep.Errors[0], &te) || te.ThreadID != "ai_2" || te.Op != "push" ||
		!strings.Contains(rep.Errors[1].Error(), "ai_bad") {
		t.Errorf("errors = %v", rep.Errors)
	}

	// The faults go away (the web client fixes its document, keeping its time): the
	// next sync retries exactly the failed threads.
	delete(remote.failPush, "ai_2")
	remote.put(webDoc("ai_bad", "acme", 1500, "repaired", "x"))
	rep, err = syncer.Sync(ctx, s, remote, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pushed != 1 || rep.Pulled != 1 || rep.Failed != 0 {
		t.Errorf("retry = %+v, want ai_2 pushed and ai_bad pulled", rep)
	}
	if remote.doc("ai_2") == nil || question(t, s, "ai_bad") != "repaired" {
		t.Error("the failed threads were not retried")
	}
	rep, _ = syncer.Sync(ctx, s, remote, o)
	if rep.Pushed != 0 || rep.Pulled != 0 || rep.Failed != 0 {
		t.Errorf("after the retry = %+v, want nothing to do", rep)
	}
}

func TestSyncDirectionsAndErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      syncer.Options
		failPull  error
		wantErr   string
		want      [4]int
		otherWS   int
		wantMarks syncer.Marks
	}{
		{"push only", syncer.Options{Push: true, Workspace: "acme"}, nil, "", [4]int{1, 0, 0, 0}, 1, syncer.Marks{LastPush: 2000}},
		{"pull only", syncer.Options{Pull: true, Workspace: "acme"}, nil, "", [4]int{0, 1, 0, 0}, 0, syncer.Marks{LastPull: 1500}},
		{"pull fails, push still done and kept", syncer.Options{Workspace: "acme"}, errors.New("auth_error: bad password"),
			"bad password", [4]int{1, 0, 0, 0}, 1, syncer.Marks{LastPush: 2000}},
		{"no workspace: every thread pushed", syncer.Options{Push: true}, nil, "", [4]int{2, 0, 0, 0}, 0, syncer.Marks{LastPush: 2000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := openStore(t)
			remote := newFakeRemote("acme")
			remote.failPull = tc.failPull
			local(t, s, "ai_mine", "acme", 1000, "mine")
			local(t, s, "ai_theirs", "other", 2000, "another workspace")
			remote.put(webDoc("ai_web", "acme", 1500, "web", "x"))
			rep, err := syncer.Sync(ctx, s, remote, tc.opts)
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if counts(rep) != tc.want || rep.OtherWorkspace != tc.otherWS {
				t.Errorf("report = %+v, want %v and %d of other workspaces", rep, tc.want, tc.otherWS)
			}
			st, err := syncer.LoadState(syncer.StatePath(s))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Remotes["default "+tc.opts.Workspace]; got != tc.wantMarks {
				t.Errorf("marks = %+v, want %+v", got, tc.wantMarks)
			}
		})
	}
}

func TestSyncStateFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	local(t, s, "ai_x", "acme", 1000, "x")

	// Two remotes keep their own watermarks: a second database gets everything.
	one, two := newFakeRemote("acme"), newFakeRemote("acme")
	for _, r := range []struct {
		id     string
		remote *fakeRemote
	}{{"db-one", one}, {"db-two", two}} {
		rep, err := syncer.Sync(ctx, s, r.remote, syncer.Options{Workspace: "acme", RemoteID: r.id})
		if err != nil || rep.Pushed != 1 {
			t.Errorf("%s: %+v, %v", r.id, rep, err)
		}
	}
	st, err := os.Stat(syncer.StatePath(s))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v, %v", st, err)
	}

	// A damaged state file is an error naming it, and nothing is sent.
	if err := os.WriteFile(syncer.StatePath(s), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := one.pushes
	if _, err := syncer.Sync(ctx, s, one, syncer.Options{Workspace: "acme", RemoteID: "db-one"}); err == nil ||
		!strings.Contains(err.Error(), "sync state") {
		t.Errorf("damaged state: %v", err)
	}
	if one.pushes != before {
		t.Error("a sync with a damaged state pushed threads")
	}
}

func TestSyncPullOverlap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	remote := newFakeRemote("acme")
	remote.put(webDoc("ai_web", "acme", 10*60*1000, "web", "x"))
	if _, err := syncer.Sync(ctx, s, remote, syncer.Options{Pull: true, Workspace: "acme"}); err != nil {
		t.Fatal(err)
	}
	// A machine whose clock lags writes a document dated before the watermark: the
	// overlap still finds it.
	remote.put(webDoc("ai_late", "acme", 10*60*1000-time.Minute.Milliseconds(), "late", "x"))
	rep, err := syncer.Sync(ctx, s, remote, syncer.Options{Pull: true, Workspace: "acme"})
	if err != nil || rep.Pulled != 1 || rep.Skipped != 1 {
		t.Errorf("report = %+v, %v; want the late document pulled, the other skipped", rep, err)
	}
	if got := remote.pullSince; len(got) != 2 || got[0] != 0 || got[1] != 5*60*1000 {
		t.Errorf("pull since = %v, want [0 %d]", got, 5*60*1000)
	}
}

func TestSyncCancelled(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	local(t, s, "ai_x", "acme", 1000, "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	remote := newFakeRemote("acme")
	if _, err := syncer.Sync(ctx, s, remote, syncer.Options{Workspace: "acme"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if remote.doc("ai_x") != nil {
		t.Error("a cancelled sync pushed")
	}
}

// A thread's undo records travel with it (in the document's nodiusAi record): pushed
// from one machine and pulled on another, the undone change stays undone and the
// other can still be undone there.
func TestSyncCarriesUndoRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := openStore(t), openStore(t)
	remote := newFakeRemote("default")
	th, err := a.CreateThread(ctx, convo.Thread{GraphKey: "demo", Workspace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	threadstest.ApplyWithUndo(t, a, th, "c1", "first-node")
	threadstest.ApplyWithUndo(t, a, th, "c2", "second-node")
	threadstest.UndoLast(t, a, th, nil)
	o := syncer.Options{Workspace: "default", RemoteID: "fake"}
	if _, err := syncer.Sync(ctx, a, remote, o); err != nil {
		t.Fatal(err)
	}
	if rep, err := syncer.Sync(ctx, b, remote, o); err != nil || rep.Pulled != 1 {
		t.Fatalf("pull: %+v %v", rep, err)
	}
	want, err := a.Transcript(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Transcript(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(want.Undos)
	g, _ := json.Marshal(got.Undos)
	if len(want.Undos) != 2 || string(w) != string(g) {
		t.Fatalf("undo records after sync:\n got %s\nwant %s", g, w)
	}
	if u, err := b.LastUndoable(ctx, th.ID); err != nil || u == nil || u.ProposalID != "c1" || len(u.Reversal) == 0 {
		t.Fatalf("the pulled thread's change to undo = %+v, %v; want c1 with its reversal", u, err)
	}
}
