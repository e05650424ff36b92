package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/threads"
)

const testToken = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXVzZXI.s3cr3t-signature"

type env struct {
	srv    *remotetest.Server
	store  *threads.Store
	dbPath string
	run    *remote.Runner
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T, tune func(*remote.Options)) *env {
	t.Helper()
	srv := remotetest.New(t, func(s *remotetest.Server) { s.Token = testToken })
	e := &env{srv: srv, logs: &syncBuffer{}}
	e.store, e.dbPath = openStore(t)
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opt := remote.Options{BaseURL: srv.URL, WSURL: srv.WSURL, Token: testToken, Logger: log,
		PingInterval: 50 * time.Millisecond, StallTimeout: 5 * time.Second}
	if tune != nil {
		tune(&opt)
	}
	c, err := remote.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	e.run = remote.NewRunner(c, e.store, src, log)
	return e
}

// openStore opens a thread store in a fresh SQLite file, closed with the test.
func openStore(t *testing.T) (*threads.Store, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "threads.db")
	st, err := threads.Open(context.Background(), db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, db
}

// collect gathers a run's public events.
type collect struct {
	mu     sync.Mutex
	events []convo.Event
}

func (c *collect) emit(ev convo.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Public() {
		c.events = append(c.events, ev)
	}
}

func (c *collect) types() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.events {
		out = append(out, string(ev.Type))
	}
	return strings.Join(out, ",")
}

func (c *collect) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, ev := range c.events {
		if ev.Type == convo.EventToken {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func (c *collect) tokens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ev := range c.events {
		if ev.Type == convo.EventToken {
			n++
		}
	}
	return n
}

func (e *env) noViolations(t *testing.T) {
	t.Helper()
	if v := e.srv.Violations(); len(v) > 0 {
		t.Fatalf("the server refused what the client sent: %v", v)
	}
}

// noSecret checks the token never reached the logs or the database.
func (e *env) noSecret(t *testing.T) {
	t.Helper()
	if strings.Contains(e.logs.String(), "s3cr3t") {
		t.Fatalf("the token is in the logs: %s", e.logs.String())
	}
	for _, p := range []string{e.dbPath, e.dbPath + "-wal"} {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("s3cr3t")) {
			t.Fatalf("the token is in %s", p)
		}
	}
}

func TestAnswerWithTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Token("Let me ")
		s.Token("look. ")
		s.ToolStart("tc_1", "read_node_detail")
		s.ToolResult("tc_1", `{"_key":"fetch-api","type":"api-call"}`)
		s.ToolStart("tc_2", "list_node_edges")
		s.ToolResult("tc_2", `[]`)
		s.Token("fetch-api ")
		s.Token("calls the NBA API.")
		s.Complete("fetch-api calls the NBA API.")
	})
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "what does fetch-api do?"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.types(), "thread,token,token,tool_start,tool_result,tool_start,tool_result,token,token,complete"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if res.Text != "fetch-api calls the NBA API." || res.Proposal != nil {
		t.Fatalf("result %+v", res)
	}
	if c.events[0].ThreadID != res.ThreadID || c.events[len(c.events)-1].ThreadID != res.ThreadID {
		t.Fatalf("thread ids differ: %+v", c.events)
	}
	reqs := e.srv.Received()
	if len(reqs) != 1 || reqs[0].Type != "ai:chat" || reqs[0].GraphKey != "demo" || reqs[0].ThreadID != "" || strings.Contains(reqs[0].Raw, "token") || reqs[0].ID < 1<<40 {
		t.Fatalf("server received %+v", reqs)
	}
	e.noViolations(t)

	// The exchange is kept locally, marked with the server and its thread id.
	rem, ok, err := e.store.RemoteOf(context.Background(), res.ThreadID)
	if err != nil || !ok || rem.Server != e.srv.URL || len(rem.ID) != 64 {
		t.Fatalf("remote mark %+v %v %v", rem, ok, err)
	}
	msgs, err := e.store.Messages(context.Background(), res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role)+":"+string(m.Status))
	}
	if got := strings.Join(roles, " "); got != "user:complete assistant:complete tool:complete tool:complete assistant:complete" {
		t.Fatalf("stored %s", got)
	}
	if msgs[1].Content != "Let me look. " || len(msgs[1].ToolCalls) != 2 || msgs[4].Content != "fetch-api calls the NBA API." {
		t.Fatalf("stored messages %+v", msgs)
	}
	// Offline search finds it.
	hits, err := e.store.Search(context.Background(), "NBA", 10)
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %v %v", hits, err)
	}

	// A follow-up goes to the same server thread, on a new connection.
	e.srv.SetChat(func(s *remotetest.Session) { s.Token("yes"); s.Complete("yes") })
	res2, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", ThreadID: res.ThreadID, Text: "sure?"}, nil)
	if err != nil || res2.ThreadID != res.ThreadID {
		t.Fatalf("follow-up: %+v %v", res2, err)
	}
	reqs = e.srv.Received()
	if reqs[1].ThreadID != rem.ID || reqs[1].ID == reqs[0].ID {
		t.Fatalf("follow-up request %+v (server thread %s)", reqs[1], rem.ID)
	}
	if e.srv.Conns() != 2 {
		t.Fatalf("%d connections, want one per run", e.srv.Conns())
	}
	e.noSecret(t)
}

func TestAnswerNotStreamedComesWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) { s.Complete("whole answer") })
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, c.emit)
	if err != nil || res.Text != "whole answer" || c.text() != "whole answer" {
		t.Fatalf("%+v %v %q", res, err, c.text())
	}
}

const deleteAction = `{"type":"delete_node","payload":{"nodeKey":"fetch-api"}}`

// deleteApply is the server's ai:apply_action for deleteAction.
const deleteApply = `{"instructions":[],"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":["fetch-api"],"edgeKeysToDelete":[],"sheetId":"0"}`

func propose(s *remotetest.Session) {
	s.Token("I will remove it.")
	s.ProposeFull("call_9", "propose_delete_node", map[string]any{"nodeKey": "fetch-api", "reason": "unused"}, deleteAction, "", deleteApply)
}

// fakeApplier records what it is asked to apply and answers report (or, with
// fail set, refuses the first step).
type fakeApplier struct {
	mu       sync.Mutex
	calls    []nodiusapi.ApplyAction
	graph    string
	fail     string
	refuse   string // PrepareServerApply fails with this
	prepared int
	released int
	types    []datasource.ConfigureNodeTypePayload // nodetype_test.go
}

func (f *fakeApplier) PrepareServerApply(_ context.Context, graphKey string) (nodiusapi.Prepared, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != "" {
		return nil, &fault.Error{Code: fault.ServerError, Message: f.refuse}
	}
	f.prepared++
	return &fakePrepared{f: f, graph: graphKey}, nil
}

type fakePrepared struct {
	f     *fakeApplier
	graph string
	once  sync.Once
}

func (p *fakePrepared) Apply(ctx context.Context, a nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error) {
	return p.f.ApplyServerAction(ctx, p.graph, a)
}

func (p *fakePrepared) Release() {
	p.once.Do(func() { p.f.mu.Lock(); p.f.released++; p.f.mu.Unlock() })
}

func (f *fakeApplier) ApplyServerAction(_ context.Context, graphKey string, a nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, a)
	f.graph = graphKey
	if f.fail != "" {
		return nodiusapi.ApplyReport{Instructions: len(a.Instructions), Failed: "batchDeleteElements", Reason: f.fail}, errors.New(f.fail)
	}
	return nodiusapi.ApplyReport{Instructions: len(a.Instructions), NodesDeleted: a.NodeKeysToDelete, EdgesDeleted: a.EdgeKeysToDelete}, nil
}

func TestProposalThenApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(propose)
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "remove fetch-api"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.types(); got != "thread,token,tool_start,proposal" {
		t.Fatalf("events %s", got)
	}
	p := res.Proposal
	if p == nil || !strings.HasPrefix(p.ID, "call_9@") || p.Tool != "propose_delete_node" || p.Reason != "unused" || p.Action.Type != datasource.DeleteNodeAction {
		t.Fatalf("proposal %+v", p)
	}
	// The action is completed from the graph: the edges fetch-api takes with it.
	if n := len(p.Action.DeleteNode.RemovedEdges); n == 0 {
		t.Fatalf("no removed edges read from the source: %+v", p.Action.DeleteNode)
	}
	stored, err := e.store.PendingProposal(context.Background(), res.ThreadID)
	if err != nil || stored == nil || stored.ID != p.ID {
		t.Fatalf("pending %+v %v", stored, err)
	}
	// Asking again while a proposal waits is refused, as locally.
	if _, err := e.run.Send(context.Background(), agent.SendRequest{ThreadID: res.ThreadID, Text: "and?"}, nil); err == nil {
		t.Fatal("send with a pending proposal accepted")
	}

	e.srv.SetResume(func(s *remotetest.Session) {
		if s.Decided == nil || !s.Req.Approved {
			s.Error("bad resume")
			return
		}
		s.Token("Done.")
		s.Complete("Done.")
	})
	ap := &fakeApplier{}
	e.run.SetApplier(ap)
	var c2 collect
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, c2.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.types(); got != "thread,tool_result,token,complete" || res2.Text != "Done." {
		t.Fatalf("events %s result %+v", got, res2)
	}
	if len(ap.calls) != 1 || ap.graph != "demo" || ap.calls[0].NodeKeysToDelete[0] != "fetch-api" {
		t.Fatalf("applied %+v on %q", ap.calls, ap.graph)
	}
	if d := res2.Decided; d == nil || d.Outcome != convo.Applied {
		t.Fatalf("decided %+v", res2.Decided)
	}
	rem, _, _ := e.store.RemoteOf(context.Background(), res.ThreadID)
	last := e.srv.Received()[1]
	if last.Type != "ai:resume" || !last.Approved || last.ThreadID != rem.ID || last.Feedback != "" {
		t.Fatalf("resume sent %+v", last)
	}
	if p, _ := e.store.PendingProposal(context.Background(), res.ThreadID); p != nil {
		t.Fatalf("still pending after approval: %+v", p)
	}
	e.noViolations(t)
	e.noSecret(t)
}

// "Always for this thread" on an approval the server took is kept with the thread.
func TestApproveAlwaysForThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(propose)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "remove fetch-api"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	always := convo.Decision{Approved: true, AlwaysForThread: true}
	e.srv.SetResume(nil)
	e.run.SetApplier(&fakeApplier{})
	if res2, err := e.run.Resume(context.Background(), res.ThreadID, always, nil); err != nil || res2.Decided == nil {
		t.Fatalf("%+v %v", res2, err)
	}
	th, err := e.store.Thread(context.Background(), res.ThreadID)
	if err != nil || len(th.AutoApprove) != 1 || th.AutoApprove[0] != datasource.DeleteNodeAction {
		t.Fatalf("auto-approve %v %v", th.AutoApprove, err)
	}
}

func TestRejectWithFeedback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(propose)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "remove fetch-api"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.SetResume(func(s *remotetest.Session) {
		s.Token("Kept it: " + s.Req.Feedback)
		s.Complete("Kept it: " + s.Req.Feedback)
	})
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Feedback: "keep it"}, nil)
	if err != nil || res2.Text != "Kept it: keep it" {
		t.Fatalf("%+v %v", res2, err)
	}
	last := e.srv.Received()[1]
	if last.Approved || last.Feedback != "keep it" {
		t.Fatalf("resume sent %+v", last)
	}
	tr, err := e.store.Transcript(context.Background(), res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Proposals) != 1 || tr.Proposals[0].Decision != convo.Rejected || tr.Proposals[0].Feedback != "keep it" {
		t.Fatalf("proposals %+v", tr.Proposals)
	}
}

func TestRefusedResumeLeavesProposalPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Propose("call_9", "propose_delete_node", map[string]any{"nodeKey": "fetch-api"}, deleteAction)
	})
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "remove fetch-api"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.SetResume(func(s *remotetest.Session) {
		s.Raw(`{"type":"ai:error","_id":` + jsonInt(s.Req.ID) + `,"error":"Le service IA est temporairement surchargé","code":"rate_limit","retryable":true}`)
	})
	e.run.SetApplier(&fakeApplier{})
	_, err = e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	ce, ok := fault.As(err)
	if !ok || ce.Code != fault.RateLimit || !ce.Retryable {
		t.Fatalf("error %v", err)
	}
	if p, _ := e.store.PendingProposal(context.Background(), res.ThreadID); p == nil {
		t.Fatal("a refused decision was recorded")
	}
}

func TestServerErrorsMapToClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code      string
		retryable bool
		want      fault.Code
	}{
		{"rate_limit", true, fault.RateLimit},
		{"server_error", true, fault.ServerError},
		{"auth_error", false, fault.Auth},
		{"timeout", true, fault.Timeout},
		{"network", true, fault.Network},
		{"content_filter", false, fault.ContentFilter},
		{"context_length", false, fault.ContextLength},
		{"internal", false, fault.Internal},
		{"", false, fault.Internal},
		{"something_new", false, fault.Internal},
	}
	e := newEnv(t, nil)
	for _, tc := range cases {
		t.Run("code="+tc.code, func(t *testing.T) {
			e.srv.SetChat(nil)
			srv := remotetest.New(t)
			srv.SetChat(func(s *remotetest.Session) {
				s.Token("partial ")
				b, _ := json.Marshal(map[string]any{"type": "ai:error", "_id": s.Req.ID, "error": "Erreur \x1b[31mserveur\x1b[0m", "code": tc.code, "retryable": tc.retryable})
				s.Raw(string(b))
			})
			c, _ := remote.New(remote.Options{BaseURL: srv.URL, WSURL: srv.WSURL, Token: "t"})
			r := remote.NewRunner(c, e.store, nil, nil)
			var col collect
			res, err := r.Send(context.Background(), agent.SendRequest{GraphKey: "g", Text: "q"}, col.emit)
			ce, ok := fault.As(err)
			if !ok || ce.Code != tc.want || ce.Retryable != tc.retryable {
				t.Fatalf("error %#v, want %s retryable=%v", err, tc.want, tc.retryable)
			}
			if got := col.types(); got != "thread,token,error" {
				t.Fatalf("events %s", got)
			}
			// auth_error is the model provider refusing the server's key: the user's
			// token (already accepted by authResult) is not to blame.
			if tc.code == "auth_error" && (strings.Contains(ce.Message, "--token") || !strings.Contains(ce.Message, "administrator")) {
				t.Fatalf("auth_error message %q", ce.Message)
			}
			msgs, _ := e.store.Messages(context.Background(), res.ThreadID)
			if len(msgs) != 2 || msgs[1].Content != "partial " || msgs[1].Status != convo.Interrupted {
				t.Fatalf("partial answer not kept: %+v", msgs)
			}
		})
	}
}

func TestBadTokenIsAuthError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c, _ := remote.New(remote.Options{BaseURL: e.srv.URL, WSURL: e.srv.WSURL, Token: "wrong"})
	r := remote.NewRunner(c, e.store, nil, nil)
	_, err := r.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Auth || ce.Retryable || !strings.Contains(ce.Message, "refused the token") {
		t.Fatalf("error %v", err)
	}
	// POST /api/sync, asked before the socket is opened, refuses it first.
	if e.srv.AuthFailures() > 1 || len(e.srv.Received()) != 0 || len(e.srv.Syncs()) > 1 {
		t.Fatalf("%d refused sockets, %d requests, %d syncs: want one refusal and no retry", e.srv.AuthFailures(), len(e.srv.Received()), len(e.srv.Syncs()))
	}
	_, err = c.Threads(context.Background(), "demo")
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Auth || ce.Status != 401 {
		t.Fatalf("threads error %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("the token is in the message: %v", err)
	}
}

// TestStopClosesOnlyOurSocket: stopping a run closes its socket and sends no
// ai:interrupt (the real one aborts every session on the server); another client's
// run goes on to its end.
func TestStopClosesOnlyOurSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	started := make(chan struct{}, 2)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Token("Once upon ")
		started <- struct{}{}
		for i := 0; i < 15 && s.Sleep(20*time.Millisecond); i++ {
			s.Token("and on ")
		}
		s.Complete("the end")
	})
	// Another user's run, on its own connection.
	other := make(chan error, 1)
	go func() {
		c, _ := remote.New(remote.Options{BaseURL: e.srv.URL, WSURL: e.srv.WSURL, Token: testToken})
		r := remote.NewRunner(c, e.store, nil, nil)
		res, err := r.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "another story"}, nil)
		if err == nil && res.Text != "the end" {
			err = errors.New("other run ended with " + res.Text)
		}
		other <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	var c collect
	done := make(chan struct{})
	var res agent.Result
	var err error
	first := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		res, err = e.run.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "tell a long story"}, func(ev convo.Event) {
			c.emit(ev)
			if ev.Type == convo.EventToken {
				once.Do(func() { close(first) })
			}
		})
	}()
	<-first
	cancel()
	<-done
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Interrupted {
		t.Fatalf("error %v", err)
	}
	if n := len(e.srv.Interrupts()); n != 0 {
		t.Fatalf("%d ai:interrupt sent: it would stop every user's run", n)
	}
	if err := <-other; err != nil {
		t.Fatalf("the other client's run was stopped too: %v", err)
	}
	msgs, _ := e.store.Messages(context.Background(), res.ThreadID)
	last := msgs[len(msgs)-1]
	if last.Role != convo.Assistant || last.Status != convo.Interrupted || !strings.HasPrefix(last.Content, "Once upon ") || last.Content != c.text() {
		t.Fatalf("partial %+v (shown %q)", last, c.text())
	}
	e.noViolations(t)
}

func TestDroppedConnectionKeepsWhatArrived(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Token("half an ")
		s.Token("answer")
		s.Sleep(30 * time.Millisecond)
		s.Drop()
	})
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, c.emit)
	ce, ok := fault.As(err)
	if !ok || ce.Code != fault.Network || !ce.Retryable || !strings.Contains(ce.Message, "kept") {
		t.Fatalf("error %v", err)
	}
	msgs, _ := e.store.Messages(context.Background(), res.ThreadID)
	if last := msgs[len(msgs)-1]; last.Content != "half an answer" || last.Status != convo.Interrupted {
		t.Fatalf("kept %+v", last)
	}
	if got := c.types(); got != "thread,token,token,error" {
		t.Fatalf("events %s", got)
	}
}

// TestSlowStreamOutlivesStallTimeout checks that every message restarts the stall
// timer: a stream lasting 2.5 stall timeouts, one token every 100 ms, is never cut.
// A loaded machine can hold the process still for longer than the timeout between
// two tokens, which ends the run rightly; so a timeout is retried with the stall
// timeout doubled, never the gap. Code that does not restart the timer fails every
// attempt, since every stream outlasts its own timeout.
func TestSlowStreamOutlivesStallTimeout(t *testing.T) {
	t.Parallel()
	const gap = 100 * time.Millisecond
	stall := 300 * time.Millisecond
	for attempt := 1; ; attempt++ {
		tokens := int(5 * stall / (2 * gap))
		want := strings.Repeat("x", tokens)
		e := newEnv(t, func(o *remote.Options) { o.StallTimeout = stall })
		e.srv.SetChat(func(s *remotetest.Session) {
			for i := 0; i < tokens; i++ {
				if !s.Sleep(gap) {
					return
				}
				s.Token("x")
			}
			s.Complete(want)
		})
		start := time.Now()
		res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
		if err == nil && res.Text == want {
			return
		}
		if ce, ok := fault.As(err); !ok || ce.Code != fault.Timeout || attempt == 4 {
			t.Fatalf("attempt %d, stall timeout %s, %d tokens: %+v %v", attempt, stall, tokens, res, err)
		}
		t.Logf("attempt %d: stalled after %s with a stall timeout of %s (a loaded machine?); again with %s",
			attempt, time.Since(start).Round(time.Millisecond), stall, 2*stall)
		stall *= 2
	}
}

func TestStallEndsRunAsTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *remote.Options) { o.StallTimeout = 200 * time.Millisecond })
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Token("thinking")
		<-s.Done() // then nothing, while pongs still come back
	})
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Timeout || !ce.Retryable || !strings.Contains(ce.Message, "nothing for 200ms") {
		t.Fatalf("error %v", err)
	}
	msgs, _ := e.store.Messages(context.Background(), res.ThreadID)
	if last := msgs[len(msgs)-1]; last.Content != "thinking" || last.Status != convo.Interrupted {
		t.Fatalf("kept %+v", last)
	}
}

func TestMalformedMessagesAreInternalErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"not json":             `{"type":"ai:token",`,
		"token without token":  `{"type":"ai:token","_id":%d}`,
		"complete no threadId": `{"type":"ai:complete","_id":%d,"fullText":"x"}`,
		"token not a string":   `{"type":"ai:token","_id":%d,"token":42}`,
		"broken interrupt":     `{"type":"ai:complete","_id":%d,"threadId":"ai_1_1","fullText":"{\"type\":\"interrupt\",\"proposedAction\":{\"type\":\"explode\",\"payload\":{}},\"toolCall\":{\"id\":\"c\",\"name\":\"propose_x\",\"args\":{}}}"}`,
		"apply no action":      `{"type":"ai:apply_action","_id":%d}`,
		"usage no usage":       `{"type":"ai:usage","_id":%d}`,
		"interrupt no call":    `{"type":"ai:complete","_id":%d,"threadId":"ai_1_1","fullText":"{\"type\":\"interrupt\",\"proposedAction\":` + strings.ReplaceAll(deleteAction, `"`, `\"`) + `}"}`,
		"client message":       `{"type":"ai:chat","_id":%d,"graphKey":"g","message":"m"}`,
	}
	e := newEnv(t, nil)
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			srv := remotetest.New(t)
			srv.SetChat(func(s *remotetest.Session) {
				s.Token("before ")
				msg := raw
				if strings.Contains(raw, "%d") {
					msg = strings.Replace(raw, "%d", jsonInt(s.Req.ID), 1)
				}
				s.Raw(msg)
				s.Sleep(time.Second)
			})
			c, _ := remote.New(remote.Options{BaseURL: srv.URL, WSURL: srv.WSURL, Token: "t"})
			r := remote.NewRunner(c, e.store, nil, nil)
			_, err := r.Send(context.Background(), agent.SendRequest{GraphKey: "g", Text: "q"}, nil)
			ce, ok := fault.As(err)
			if !ok || ce.Code != fault.Internal || !strings.Contains(ce.Message, "malformed") {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestOtherRunsMessagesIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Raw(`{"type":"ai:token","_id":` + jsonInt(s.Req.ID+1000) + `,"token":"NOT MINE"}`)
		s.Raw(`{"type":"ai:complete","_id":` + jsonInt(s.Req.ID+1000) + `,"threadId":"ai_x","fullText":"NOT MINE"}`)
		s.Raw(`{"type":"sync:update","_id":` + jsonInt(s.Req.ID) + `}`)
		s.Raw(`{"type":"ai:usage","_id":` + jsonInt(s.Req.ID+1000) + `,"usage":{"promptTokens":1,"completionTokens":1,"totalTokens":2}}`)
		s.Raw(`{"error":"Invalid JSON"}`)
		s.Raw(`{"type":"applyInstructionToGraph","instructions":[]}`)
		s.Token("mine")
		s.Complete("mine")
	})
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, c.emit)
	if err != nil || res.Text != "mine" || c.text() != "mine" {
		t.Fatalf("%+v %v %q", res, err, c.text())
	}
}

func TestResumeWebClientThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	th := e.srv.NewThread("demo", &remotetest.Pending{ToolCall: map[string]any{"id": "w1", "name": "propose_delete_node", "args": map[string]any{"nodeKey": "fetch-api", "reason": "asked"}},
		Action: json.RawMessage(deleteAction), Apply: json.RawMessage(deleteApply)},
		map[string]any{"role": "user", "content": "remove fetch-api please"})
	ap := &fakeApplier{}
	e.run.SetApplier(ap)
	e.srv.SetResume(func(s *remotetest.Session) { s.Token("Removed."); s.Complete("Removed.") })
	local, err := e.run.Adopt(context.Background(), th.ID, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if local.ID != th.ID {
		t.Fatalf("adopted as %s, want the server's id %s", local.ID, th.ID)
	}
	if msgs, _ := e.store.Messages(context.Background(), local.ID); len(msgs) != 1 || msgs[0].Content != "remove fetch-api please" {
		t.Fatalf("the web client's history was not kept: %+v", msgs)
	}
	again, err := e.run.Adopt(context.Background(), th.ID, "demo")
	if err != nil || again.ID != local.ID {
		t.Fatalf("adopt twice: %+v %v", again, err)
	}
	res, err := e.run.Resume(context.Background(), local.ID, convo.Decision{Approved: true}, nil)
	if err != nil || res.Text != "Removed." {
		t.Fatalf("%+v %v", res, err)
	}
	if len(ap.calls) != 1 || res.Decided == nil || res.Decided.Outcome != convo.Applied {
		t.Fatalf("the web client's proposal was not applied here: %d calls, decided %+v", len(ap.calls), res.Decided)
	}
	if e.srv.Thread(th.ID).Pending != nil {
		t.Fatal("the server still waits")
	}
	// Deciding again: the server has nothing pending any more.
	_, err = e.run.Resume(context.Background(), local.ID, convo.Decision{Approved: true}, nil)
	if ce, ok := fault.As(err); !ok || !strings.Contains(ce.Message, "No pending action") {
		t.Fatalf("second decision: %v", err)
	}
	e.noViolations(t)
}

func TestLocalThreadRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	th, err := e.store.CreateThread(context.Background(), convo.Thread{GraphKey: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.run.Send(context.Background(), agent.SendRequest{ThreadID: th.ID, Text: "q"}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Config || !strings.Contains(ce.Message, "--agent local") {
		t.Fatalf("error %v", err)
	}
	if len(e.srv.Received()) != 0 {
		t.Fatal("a local thread was sent to the server")
	}
}

func TestThreadsAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.srv.NewThread("demo", nil, map[string]any{"role": "system", "content": "sys"},
		map[string]any{"role": "user", "content": "first question"}, map[string]any{"role": "assistant", "content": "answer"})
	b := e.srv.NewThread("demo", &remotetest.Pending{ToolCall: map[string]any{"id": "w"}, Action: json.RawMessage(deleteAction)})
	e.srv.NewThread("other", nil)
	c := e.run.Client()
	list, err := c.Threads(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != b.ID || !list[0].Pending || list[1].ID != a.ID || list[1].Pending || list[1].Messages != 2 {
		t.Fatalf("threads %+v", list)
	}
	if err := c.DeleteThread(context.Background(), a.ID); err != nil {
		t.Fatal(err)
	}
	if e.srv.Thread(a.ID) != nil {
		t.Fatal("not deleted")
	}
	err = c.DeleteThread(context.Background(), a.ID)
	if ce, ok := fault.As(err); !ok || ce.Status != 404 {
		t.Fatalf("second delete: %v", err)
	}
	e.noViolations(t)
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c, _ := remote.New(remote.Options{BaseURL: "http://127.0.0.1:1", WSURL: "ws://127.0.0.1:1/ws", Token: "t", DialTimeout: time.Second})
	r := remote.NewRunner(c, e.store, nil, nil)
	_, err := r.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
	if ce, ok := fault.As(err); !ok || (ce.Code != fault.Network && ce.Code != fault.Timeout) {
		t.Fatalf("error %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("not a cancellation")
	}
}

func TestNoPongEndsRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *remote.Options) { o.PingTimeout = 150 * time.Millisecond })
	e.srv.SetHang(10 * time.Second)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.Token("started")
		<-s.Done()
	})
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
	ce, ok := fault.As(err)
	if !ok || ce.Code != fault.Network || !strings.Contains(ce.Message, "ping") {
		t.Fatalf("error %v (want the missing pong, not the stall timeout)", err)
	}
	msgs, _ := e.store.Messages(context.Background(), res.ThreadID)
	if last := msgs[len(msgs)-1]; last.Content != "started" || last.Status != convo.Interrupted {
		t.Fatalf("kept %+v", last)
	}
}

func TestDecisionBindsToTheProposalShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.SetChat(propose)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "remove fetch-api"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]convo.Decision{
		"other proposal": {Approved: true, ProposalID: "call_other"},
		"changed action": {Approved: true, ProposalID: res.Proposal.ID, Digest: "sha256:not-this"},
	} {
		_, err := e.run.Resume(context.Background(), res.ThreadID, d, nil)
		if ce, ok := fault.As(err); !ok || ce.Code != fault.Decision {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if n := len(e.srv.Received()); n != 1 {
		t.Fatalf("a refused decision reached the server (%d requests)", n)
	}
	e.srv.SetResume(func(s *remotetest.Session) { s.Complete("ok") })
	e.run.SetApplier(&fakeApplier{})
	if _, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true, ProposalID: res.Proposal.ID, Digest: res.Proposal.Digest}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true, ProposalID: res.Proposal.ID}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Decision || !strings.Contains(ce.Message, "already decided") {
		t.Fatalf("decided twice: %v", err)
	}
}

func TestMalformedThreadList(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":     `<html>`,
		"no threads":   `{"items":[]}`,
		"entry no id":  `{"threads":[{"graphKey":"demo"}]}`,
		"wrong type":   `{"threads":"many"}`,
		"time is text": `{"threads":[{"threadId":"a","createdTime":"yesterday"}]}`,
		"a bare list":  `[{"threadId":"a"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
			defer srv.Close()
			c, _ := remote.New(remote.Options{BaseURL: srv.URL, Token: "t"})
			_, err := c.Threads(context.Background(), "demo")
			if ce, ok := fault.As(err); !ok || ce.Code != fault.Internal {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestServerURL(t *testing.T) {
	t.Parallel()
	if _, err := remote.New(remote.Options{BaseURL: "http://127.0.0.1:8426", WSURL: "ftp://proxy.example.com/nodius/ws"}); err == nil {
		t.Fatal("a WebSocket override that is not ws:// or wss:// was accepted")
	}
	for _, bad := range []string{"ftp://x", "nodius.example.com", "http://x?y=1", ""} {
		if _, err := remote.ParseServerURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// The server's URL as shown and stored keeps no password.
	if c, err := remote.New(remote.Options{BaseURL: "https://user:pw@host/x"}); err != nil {
		t.Error(err)
	} else if got := c.Server(); got != "https://user:***@host/x" {
		t.Errorf("redact: %s", got)
	}
}

// Remote output is bounded like local output, with the same limit errors.
func TestRemoteOutputIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		tune  func(*remote.Options)
		lim   config.Limits
		chat  remotetest.Script
		words string
	}{
		{"frame", func(o *remote.Options) { o.MaxFrameBytes = 4096 }, config.Limits{},
			func(s *remotetest.Session) { s.Token(strings.Repeat("x", 8000)); s.Sleep(time.Second) }, "max_stream_line_bytes"},
		{"answer", nil, config.Limits{MaxAnswerBytes: 100},
			func(s *remotetest.Session) {
				for i := 0; i < 20 && s.Token("0123456789"); i++ {
				}
				s.Sleep(time.Second)
			}, "max_answer_bytes"},
		{"tool result", nil, config.Limits{MaxToolResultBytes: 100},
			func(s *remotetest.Session) {
				s.ToolStart("c", "read_node_detail")
				s.ToolResult("c", strings.Repeat("r", 200))
				s.Sleep(time.Second)
			}, "max_tool_result_bytes"},
		{"tool calls", nil, config.Limits{MaxToolCalls: 1},
			func(s *remotetest.Session) {
				for i := 0; i < 12 && s.ToolStart(fmt.Sprint("c", i), "search_nodes"); i++ {
				}
				s.Sleep(time.Second)
			}, "max_tool_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.tune)
			e.run.SetLimits(tc.lim)
			e.srv.SetChat(tc.chat)
			_, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
			ce, ok := fault.As(err)
			if !ok || ce.Code != fault.BudgetExceeded || !strings.Contains(ce.Message, tc.words) {
				t.Fatalf("error %v", err)
			}
		})
	}
}
