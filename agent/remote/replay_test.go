package remote_test

// Replay tests: the transcripts recorded from the real Nodius server (testdata,
// copied from the shared fixtures) are played back to the client and the runner.
// The replay server answers each frame the client sends with the frames the real
// server sent after the recorded frame at the same place, with the client's _id;
// it checks that the client's frames have exactly the recorded frames' fields.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/changetext"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

type record struct {
	Dir    string          `json:"dir"`
	Conn   string          `json:"conn"`
	Frame  json.RawMessage `json:"frame"`
	Code   int             `json:"code"`
	Reason string          `json:"reason"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

func loadRecords(t *testing.T, name string) []record {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, r)
	}
	return out
}

// step is a frame the client sent and what the server answered until the next.
type step struct {
	send  map[string]json.RawMessage
	recv  []json.RawMessage
	close *record
}

func (s step) typ() string {
	var t string
	_ = json.Unmarshal(s.send["type"], &t)
	return t
}

func stepsOf(recs []record, conn string) []step {
	var out []step
	for i := range recs {
		r := recs[i]
		if r.Conn != conn {
			continue
		}
		switch r.Dir {
		case "send":
			var m map[string]json.RawMessage
			if json.Unmarshal(r.Frame, &m) != nil {
				m = map[string]json.RawMessage{"type": json.RawMessage(`"(not json)"`)}
			}
			out = append(out, step{send: m})
		case "recv":
			if len(out) > 0 {
				out[len(out)-1].recv = append(out[len(out)-1].recv, r.Frame)
			}
		case "close":
			if len(out) > 0 {
				out[len(out)-1].close = &recs[i]
			}
		}
	}
	return out
}

// replay serves one recorded connection's answers, over as many sockets as the
// client opens (each run authenticates its own).
type replay struct {
	t      *testing.T
	WSURL  string
	URL    string
	mu     sync.Mutex
	auth   step
	steps  []step
	next   int
	sent   []string // types of the frames received, in order
	errs   []string
	conns  int
	syncs  []string // the instance ids /api/sync was asked about, in order
	closed chan struct{}
}

// newReplay plays conn's steps of the transcript; keep (nil: all) chooses the
// steps after authentication the test's client will send, by index.
func newReplay(t *testing.T, file, conn string, keep func(i int, s step) bool) *replay {
	t.Helper()
	all := stepsOf(loadRecords(t, file), conn)
	r := &replay{t: t, closed: make(chan struct{}, 16)}
	i := 0
	for _, s := range all {
		if s.typ() == "authenticate" {
			if r.auth.send == nil {
				r.auth = s
			}
			continue
		}
		if keep == nil || keep(i, s) {
			r.steps = append(r.steps, s)
		}
		i++
	}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	r.WSURL = "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
	return r
}

func keys(m map[string]json.RawMessage) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func (r *replay) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *replay) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.URL.Path == "/api/sync" {
		// As recorded in 09: the graph is claimed, and the answer says where the
		// socket is (the transcripts 01–08 were recorded once it was claimed).
		var body struct {
			InstanceID string `json:"instanceId"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		r.mu.Lock()
		r.syncs = append(r.syncs, body.InstanceID)
		r.mu.Unlock()
		if req.Header.Get("Authorization") != "Bearer "+testToken {
			r.fail("/api/sync without the bearer token")
		}
		host, port, _ := net.SplitHostPort(req.Host)
		p, _ := strconv.Atoi(port)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"host": host, "port": p, "secure": false, "path": "/ws"})
		return
	}
	if !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		http.NotFound(w, req) // the recordings of 01–08 hold no other HTTP call
		return
	}
	r.mu.Lock()
	if len(r.syncs) <= r.conns {
		r.errs = append(r.errs, "a socket was opened without asking /api/sync first")
	}
	r.mu.Unlock()
	c, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	defer func() { r.closed <- struct{}{} }()
	defer c.CloseNow()
	r.mu.Lock()
	r.conns++
	r.mu.Unlock()
	ctx := req.Context()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			r.fail("the client sent a frame that is not JSON: %s", data)
			return
		}
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		r.mu.Lock()
		r.sent = append(r.sent, typ)
		var st step
		ok := true
		if typ == "authenticate" {
			st = r.auth
		} else if r.next < len(r.steps) {
			st = r.steps[r.next]
			r.next++
		} else {
			ok = false
		}
		r.mu.Unlock()
		if !ok {
			r.fail("the client sent %s beyond the transcript", data)
			return
		}
		if _, recorded := st.send["contextType"]; !recorded && typ == "ai:chat" && string(m["contextType"]) == `"home"` {
			// The recording's driver sent no contextType; the web client sends
			// "home" with no graph open (AIChatFloating), as this client does, and
			// the server's schema takes it.
			delete(m, "contextType")
		}
		if st.typ() != typ || keys(st.send) != keys(m) {
			r.fail("the client sent %s where the real client sent fields %s of %s", data, keys(st.send), st.typ())
		}
		for _, f := range st.recv {
			var fm map[string]json.RawMessage
			if json.Unmarshal(f, &fm) == nil {
				if id, ok := fm["_id"]; ok && len(id) > 0 && id[0] != '"' && string(id) != "0" {
					fm["_id"] = m["_id"]
					f, _ = json.Marshal(fm)
				}
			}
			if err := c.Write(ctx, websocket.MessageText, f); err != nil {
				return
			}
		}
		if st.close != nil {
			c.Close(websocket.StatusCode(st.close.Code), st.close.Reason)
			return
		}
	}
}

func (r *replay) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		t.Error(e)
	}
}

func (r *replay) sentTypes() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.sent, ",")
}

type replayEnv struct {
	rp    *replay
	store *threads.Store
	run   *remote.Runner
	db    string
}

func newReplayEnv(t *testing.T, file, conn string, keep func(int, step) bool) *replayEnv {
	t.Helper()
	rp := newReplay(t, file, conn, keep)
	st, db := openStore(t)
	// No --ws-url: the socket goes where /api/sync says.
	c, err := remote.New(remote.Options{BaseURL: rp.URL, Token: testToken, StallTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &replayEnv{rp: rp, store: st, db: db, run: remote.NewRunner(c, st, nil, slog.New(slog.DiscardHandler))}
}

// recorded returns the first recorded server frame of a type, decoded.
func recorded(t *testing.T, file, typ string) map[string]any {
	t.Helper()
	for _, r := range loadRecords(t, file) {
		var m map[string]any
		if r.Dir == "recv" && json.Unmarshal(r.Frame, &m) == nil && m["type"] == typ {
			return m
		}
	}
	return nil
}

func TestReplayChatPlain(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "02-chat-plain.jsonl", "a", func(i int, _ step) bool { return i < 2 })
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "What does this graph do?"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := recorded(t, "02-chat-plain.jsonl", "ai:complete")["fullText"].(string)
	if res.Text != want || !strings.HasSuffix(c.types(), ",usage,complete") || !strings.HasPrefix(c.types(), "thread,token,") {
		t.Fatalf("events %s, text %q", c.types(), res.Text)
	}
	if res.Usage.PromptTokens != 1518 || res.Usage.CompletionTokens != 61 {
		t.Fatalf("usage %+v", res.Usage)
	}
	rem, _, _ := e.store.RemoteOf(context.Background(), res.ThreadID)
	if rem.ID != "a85b9b6b9b129c3343e76a5d5a8f69294f82b651f8abc5ef935e419ec8637a84" {
		t.Fatalf("server thread %q", rem.ID)
	}
	res2, err := e.run.Send(context.Background(), agent.SendRequest{ThreadID: res.ThreadID, Text: "And the second sheet?"}, nil)
	if err != nil || res2.Text != "La sheet data-processing trie les joueurs par points." {
		t.Fatalf("%+v %v", res2, err)
	}
	th, _ := e.store.Thread(context.Background(), res.ThreadID)
	if th.Usage.PromptTokens != 1518+1535 {
		t.Fatalf("thread usage %+v", th.Usage)
	}
	e.rp.check(t)
	if got := e.rp.sentTypes(); got != "authenticate,ai:chat,authenticate,ai:chat" {
		t.Fatalf("sent %s", got)
	}
}

func TestReplayReadTools(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "03-read-tools.jsonl", "a", nil)
	var c collect
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "What does fetch_api do? read its detail"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.types(); got != "thread,token,token,token,token,tool_start,usage,tool_result,token,token,token,token,token,token,token,token,usage,complete" {
		t.Fatalf("events %s", got)
	}
	// The second turn's call has the same server id as the first's: both are kept.
	if _, err := e.run.Send(context.Background(), agent.SendRequest{ThreadID: res.ThreadID, Text: "Read the subgraph of fetch_api and filter_active"}, nil); err != nil {
		t.Fatal(err)
	}
	tr, err := e.store.Transcript(context.Background(), res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range tr.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant user assistant tool assistant" {
		t.Fatalf("stored %s", got)
	}
	e.rp.check(t)
}

// fileApply is the recorded ai:apply_action's action of a transcript, or nil.
func fileApply(t *testing.T, file string) map[string]any {
	m := recorded(t, file, "ai:apply_action")
	if m == nil {
		return nil
	}
	return m["action"].(map[string]any)
}

func TestReplayEveryProposalType(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		typ  datasource.ActionType
		show string // in the text shown to the person deciding
	}{
		{"04a-propose-create_node.jsonl", datasource.CreateNodeAction, "log-node"},
		{"04b-propose-create_node_with_edges.jsonl", datasource.CreateNodeWithEdgesAction, "filter_active:0 → (new node):0"},
		{"04c-propose-update_node-html.jsonl", datasource.UpdateNodeAction, "Top players"},
		{"04d-propose-update_node-data.jsonl", datasource.UpdateNodeAction, "example.invalid/v4"},
		{"04e-propose-delete_node.jsonl", datasource.DeleteNodeAction, "error_handler"},
		{"04f-propose-move_node.jsonl", datasource.MoveNodeAction, "(555, 333)"},
		{"04g-propose-create_edge.jsonl", datasource.CreateEdgeAction, "error_handler:0 → return:0"},
		{"04h-propose-delete_edge.jsonl", datasource.DeleteEdgeAction, "e3"},
		{"04i-propose-batch.jsonl", datasource.BatchAction, "3 changes"},
		{"04j-propose-configure_node_type-process.jsonl", datasource.ConfigureNodeTypeAction, "+ await new Promise"},
		{"04k-propose-configure_node_type-patches.jsonl", datasource.ConfigureNodeTypeAction, `+ node.data.result = players.filter(p => p.Status === "Active" || p.Status === "Injured");`},
		{"04l-propose-reorganize_layout.jsonl", datasource.ReorganizeLayoutAction, "horizontal"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			e := newReplayEnv(t, tc.file, "a", nil)
			ap := &fakeApplier{}
			e.run.SetApplier(ap)
			var c collect
			res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "propose"}, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Proposal
			if p == nil || p.Action.Type != tc.typ || !strings.HasPrefix(p.Tool, "propose_") || p.Reason == "" {
				t.Fatalf("proposal %+v", p)
			}
			if got := c.types(); got != "thread,tool_start,usage,proposal" {
				t.Fatalf("events %s", got)
			}
			// The NDJSON proposal event carries the server's action.
			line, err := json.Marshal(c.events[len(c.events)-1])
			if err != nil || !strings.Contains(string(line), `"action":{"type":"`+string(tc.typ)+`","payload":{`) {
				t.Fatalf("proposal event %s %v", line, err)
			}
			var shown strings.Builder
			changetext.Write(&shown, p.Action, "")
			if !strings.Contains(shown.String(), tc.show) {
				t.Fatalf("shown:\n%s\nwant %q", shown.String(), tc.show)
			}
			var c2 collect
			res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true, ProposalID: p.ID, Digest: p.Digest}, c2.emit)
			if err != nil {
				t.Fatal(err)
			}
			want := fileApply(t, tc.file)
			switch {
			case want == nil && len(ap.calls) != 0:
				t.Fatalf("applied %+v with no ai:apply_action", ap.calls)
			case want != nil && len(ap.calls) != 1:
				t.Fatalf("%d applies, want 1", len(ap.calls))
			case want != nil:
				got, _ := json.Marshal(ap.calls[0])
				wantJSON, _ := json.Marshal(want)
				var g, w any
				_ = json.Unmarshal(got, &g)
				_ = json.Unmarshal(wantJSON, &w)
				if gs, ws := mustJSON(g), mustJSON(w); gs != ws {
					t.Fatalf("applied %s\nwant %s", gs, ws)
				}
			}
			if res2.Decided == nil || res2.Decided.Outcome != convo.Applied || res2.Text == "" {
				t.Fatalf("after approval %+v", res2)
			}
			stored, err := e.store.Proposal(context.Background(), res.ThreadID, p.ID)
			if err != nil || stored.Outcome != convo.Applied {
				t.Fatalf("stored %+v %v", stored, err)
			}
			e.rp.check(t)
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// An apply the editing socket refuses part-way is said and recorded as such,
// and the run stops there (the continued answer would say it was done).
func TestReplayApplyFailsPartWay(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "04i-propose-batch.jsonl", "a", nil)
	ap := &fakeApplier{fail: "Edge not found"}
	e.run.SetApplier(ap)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "tidy"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	d := res2.Decided
	if d == nil || d.Outcome != convo.NotApplied || !strings.Contains(d.ApplyError, "batchDeleteElements failed (Edge not found)") ||
		!strings.Contains(d.ApplyError, "3 of 3 instruction(s)") {
		t.Fatalf("decided %+v", d)
	}
	if strings.Contains(c.types(), "complete") || res2.Text != "" {
		t.Fatalf("the continued answer was shown: %s %q", c.types(), res2.Text)
	}
	stored, _ := e.store.Proposal(context.Background(), res.ThreadID, res.Proposal.ID)
	if stored.Outcome != convo.NotApplied || stored.ApplyError != d.ApplyError {
		t.Fatalf("stored %+v", stored)
	}
	e.rp.check(t)
}

// Without an editing connection an approval is recorded as not applied, in words.
func TestReplayApproveWithoutApplier(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "04a-propose-create_node.jsonl", "a", nil)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "log"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is approved: the server would record the action as executed the
	// moment it sent ai:apply_action, with no editing socket here to apply it.
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code == fault.Config || !strings.Contains(ce.Message, "nothing was approved") || res2.Decided != nil {
		t.Fatalf("%+v %v", res2.Decided, err)
	}
	if strings.Contains(e.rp.sentTypes(), "ai:resume") {
		t.Fatalf("the approval was sent: %s", e.rp.sentTypes())
	}
	if p, _ := e.store.PendingProposal(context.Background(), res.ThreadID); p == nil {
		t.Fatal("the proposal is no longer pending")
	}
	e.rp.check(t)
}

func TestReplayHomeProposalIsAnError(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"04m-propose-create_graph-home.jsonl", "04n-propose-create_html_class-home.jsonl"} {
		e := newReplayEnv(t, f, "a", nil)
		var c collect
		_, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "home", Text: "new graph"}, c.emit)
		if ce, ok := fault.As(err); !ok || !strings.Contains(ce.Message, "Graph not found: home") {
			t.Fatalf("%s: %v", f, err)
		}
		if got := c.types(); got != "thread,tool_start,usage,error" {
			t.Fatalf("%s: events %s", f, got)
		}
		e.rp.check(t)
	}
}

func TestReplayRejectWithFeedback(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "05a-reject-feedback.jsonl", "a", nil)
	ap := &fakeApplier{}
	e.run.SetApplier(ap)
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "Delete the node disconnected_note"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Feedback: "garde-le, il sert de documentation"}, nil)
	if err != nil || res2.Text != "D'accord, je garde disconnected_note." || len(ap.calls) != 0 {
		t.Fatalf("%+v %v (%d applies)", res2, err, len(ap.calls))
	}
	p, _ := e.store.Proposal(context.Background(), res.ThreadID, res.Proposal.ID)
	if p.Decision != convo.Rejected || p.Feedback == "" {
		t.Fatalf("stored %+v", p)
	}
	e.rp.check(t)
}

func TestReplayResumeNothingPending(t *testing.T) {
	t.Parallel()
	// Step 2 (a resume of an unknown thread) is not something this client sends.
	e := newReplayEnv(t, "05b-resume-nothing-pending.jsonl", "a", func(i int, _ step) bool { return i != 2 })
	e.run.SetApplier(&fakeApplier{})
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "Just answer: what is root?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if ce, ok := fault.As(err); !ok || !strings.Contains(ce.Message, "No pending action to approve/reject") || ce.Code != fault.Decision {
		t.Fatalf("resume with nothing pending: %v", err)
	}
	res, err = e.run.Send(context.Background(), agent.SendRequest{ThreadID: res.ThreadID, Text: "Move root to 10,20"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if err != nil || res2.Decided == nil || res2.Decided.Outcome != convo.Applied || res2.Text != "Deplace." {
		t.Fatalf("%+v %v", res2, err)
	}
	_, err = e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if ce, ok := fault.As(err); !ok || !strings.Contains(ce.Message, "No pending action") {
		t.Fatalf("second resume: %v", err)
	}
	e.rp.check(t)
}

// Stopping a run (05c) closes its socket and sends no ai:interrupt, which the real
// server applies to every session of every user.
func TestReplayStopSendsNoInterrupt(t *testing.T) {
	t.Parallel()
	e := newReplayEnv(t, "05c-interrupt.jsonl", "a", nil)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	_, err := e.run.Send(ctx, agent.SendRequest{GraphKey: "testgraph001", Text: "Tell me a slow story about the graph"}, func(ev convo.Event) {
		if ev.Type == convo.EventToken {
			once.Do(cancel)
		}
	})
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Interrupted {
		t.Fatalf("error %v", err)
	}
	select {
	case <-e.rp.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the socket was not closed")
	}
	if got := e.rp.sentTypes(); got != "authenticate,ai:chat" {
		t.Fatalf("sent %s", got)
	}
	e.rp.check(t)
}

func TestReplayToolLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file     string
		approved bool
		text     string
	}{
		{"05d-tool-limit-continue.jsonl", true, "Resume final apres extension."},
		{"05e-tool-limit-stop.jsonl", false, "Voici ce que j'ai trouve."},
	} {
		e := newReplayEnv(t, tc.file, "a", nil)
		var c collect
		res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "Search everything, tool limit test"}, c.emit)
		if err != nil {
			t.Fatal(err)
		}
		if tl := res.ToolLimit; tl == nil || tl.RoundsUsed != 5 || tl.MaxExtended != 10 || res.Text != "" {
			t.Fatalf("%s: %+v", tc.file, res)
		}
		if types := c.types(); !strings.HasSuffix(types, ",tool_limit") || strings.Count(types, "tool_result") != 5 || strings.Contains(c.text(), "tool_limit") {
			t.Fatalf("%s: events %s text %q", tc.file, types, c.text())
		}
		line, _ := json.Marshal(c.events[len(c.events)-1])
		if string(line) != `{"type":"tool_limit","thread_id":"`+res.ThreadID+`","rounds_used":5,"max_extended":10}` {
			t.Fatalf("NDJSON %s", line)
		}
		res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: tc.approved}, nil)
		if err != nil || res2.Text != tc.text || res2.Decided != nil {
			t.Fatalf("%s: %+v %v", tc.file, res2, err)
		}
		e.rp.check(t)
	}
}

func TestReplayInvalidFrames(t *testing.T) {
	t.Parallel()
	// Every frame the server sent parses, and none is taken for another thing.
	for _, r := range loadRecords(t, "06-invalid-frames.jsonl") {
		if r.Dir != "recv" {
			continue
		}
		if _, _, err := remote.ParseInbound(r.Frame); err != nil {
			t.Errorf("%s: %v", r.Frame, err)
		}
	}
	// The server's words and the schema's details reach the person.
	e := newReplayEnv(t, "06-invalid-frames.jsonl", "a", func(_ int, s step) bool {
		var m string
		_ = json.Unmarshal(s.send["message"], &m)
		return m == "a real question" || m == "a graph that does not exist"
	})
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "a real question"}, nil)
	if err != nil || res.Text != "Reponse." {
		t.Fatalf("%+v %v", res, err)
	}
	_, err = e.run.Send(context.Background(), agent.SendRequest{GraphKey: "nosuchgraph", Text: "a graph that does not exist"}, nil)
	if ce, ok := fault.As(err); !ok || !strings.Contains(ce.Message, "Graph not found: nosuchgraph") {
		t.Fatalf("error %v", err)
	}
	e.rp.check(t)
	in, ok, err := remote.ParseInbound([]byte(`{"type":"ai:error","_id":5,"error":"Invalid ai:chat message","details":[{"code":"unrecognized_keys","keys":["token"],"path":[],"message":"Unrecognized key: \"token\""}]}`))
	if err != nil || !ok || in.Details != `Unrecognized key: "token"` {
		t.Fatalf("%+v %v %v", in, ok, err)
	}
}

func TestReplayAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		conn string
		code fault.Code
		word string
	}{
		{"bad", fault.Auth, "refused the token (Invalid token)"},
		{"silent", fault.Timeout, "timed out waiting for authentication"},
	} {
		recs := loadRecords(t, "01-ws-auth.jsonl")
		e := newReplayEnv(t, "01-ws-auth.jsonl", tc.conn, nil)
		if tc.conn == "silent" {
			// The silent connection sent no authenticate: answer ours with what it got.
			e.rp.auth = step{send: map[string]json.RawMessage{"type": json.RawMessage(`"authenticate"`), "token": json.RawMessage(`"x"`)}}
			for _, r := range recs {
				if r.Conn == "silent" && r.Dir == "recv" {
					e.rp.auth.recv = append(e.rp.auth.recv, r.Frame)
				}
				if r.Conn == "silent" && r.Dir == "close" {
					r := r
					e.rp.auth.close = &r
				}
			}
		}
		start := time.Now()
		_, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "testgraph001", Text: "q"}, nil)
		ce, ok := fault.As(err)
		if !ok || ce.Code != tc.code || !strings.Contains(ce.Message, tc.word) || strings.Contains(ce.Message, testToken) {
			t.Fatalf("%s: %v", tc.conn, err)
		}
		if tc.conn == "bad" && (ce.Retryable || time.Since(start) > time.Second) {
			t.Fatalf("a refused token is final and quick: retryable=%v after %s", ce.Retryable, time.Since(start))
		}
		if got := e.rp.sentTypes(); got != "authenticate" {
			t.Fatalf("%s: sent %s", tc.conn, got)
		}
	}
}

// The HTTP answers of 07: the thread list with hasPendingAction, the history of a
// thread, the refusals.
func TestReplayHTTP(t *testing.T) {
	t.Parallel()
	recs := loadRecords(t, "07-http.jsonl")
	find := func(method, path string, status int) record {
		for i, r := range recs {
			if r.Dir == "resp" && r.Method == method && strings.HasPrefix(r.Path, path) && r.Status == status {
				return recs[i]
			}
		}
		t.Fatalf("no recorded %s %s %d", method, path, status)
		return record{}
	}
	var mu sync.Mutex
	var bodies []string
	serve := func(resp record) *remote.Client {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 1024)
			n, _ := r.Body.Read(b)
			mu.Lock()
			bodies = append(bodies, string(b[:n]))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(resp.Status)
			_, _ = w.Write(resp.Body)
		}))
		t.Cleanup(srv.Close)
		c, err := remote.New(remote.Options{BaseURL: srv.URL, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	list, err := serve(find("POST", "/api/ai/threads", 200)).Threads(context.Background(), "testgraph001")
	if err != nil || len(list) != 2 || !list[0].Pending || list[1].Pending || list[0].Messages != 2 || list[0].CreatedAt.IsZero() {
		t.Fatalf("threads %+v %v", list, err)
	}
	b, _ := json.Marshal(list[0])
	if !strings.Contains(string(b), `"has_pending_action":true`) {
		t.Fatalf("json %s", b)
	}
	if _, err := serve(find("POST", "/api/ai/threads", 200)).Threads(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if bodies[0] != `{"graphKey":"testgraph001"}` || bodies[1] != `{}` {
		t.Fatalf("bodies %q", bodies)
	}
	mu.Unlock()
	_, err = serve(find("POST", "/api/ai/threads", 401)).Threads(context.Background(), "g")
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Auth {
		t.Fatalf("401: %v", err)
	}
	msgs, err := serve(find("GET", "/api/ai/thread/", 200)).Messages(context.Background(), "4928cbf63c57807c6bb1d954d79b0a987d4644f1c3fdcfc2c2b8b85a4341dfe2")
	if err != nil || len(msgs) < 2 || msgs[0].Role != "system" {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	var users int
	for _, m := range msgs {
		if m.Role == "user" && m.Text() != "" {
			users++
		}
	}
	if users == 0 {
		t.Fatalf("no question in the history: %+v", msgs)
	}
	for _, st := range []int{403, 404} {
		_, err := serve(find("GET", "/api/ai/thread/", st)).Messages(context.Background(), "x")
		if ce, ok := fault.As(err); !ok || ce.Status != st {
			t.Fatalf("%d: %v", st, err)
		}
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("unexpected")
	}
}
