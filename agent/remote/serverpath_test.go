package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

// The whole path of an approval of the server's assistant, over the stand-ins of
// the real protocol: the assistant (remotetest) and the editing side of the same
// server (servertest), routed by POST /api/sync, applied by the server: data
// source's editing socket, as `nodius-ai --agent server:URL` wires it.

const deleteErrorHandler = `{"type":"delete_node","payload":{"nodeKey":"error_handler"}}`

// applyOf is an ai:apply_action's action deleting nodes.
func applyOf(instructions string, nodes ...string) string {
	keys, _ := json.Marshal(nodes)
	if instructions == "" {
		instructions = "[]"
	}
	return `{"instructions":` + instructions + `,"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":` + string(keys) + `,"edgeKeysToDelete":[],"sheetId":"0"}`
}

type instance struct {
	ai    *remotetest.Server
	graph *servertest.Server
}

func newInstance(t *testing.T) instance {
	t.Helper()
	g, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return instance{ai: remotetest.New(t, func(s *remotetest.Server) { s.Editing = g }), graph: g}
}

// pathEnv is a runner wired to the server at url as the CLI wires it: the
// server's assistant, and the server: source of the same server as the applier.
type pathEnv struct {
	run   *remote.Runner
	store *threads.Store
	src   *server.Source
}

func newPathEnv(t *testing.T, url string) pathEnv {
	t.Helper()
	st, _ := openStore(t)
	c, err := remote.New(remote.Options{BaseURL: url, Token: "tok-alice", StallTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src, err := server.New(server.Options{BaseURL: url, Token: "tok-alice", AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	r := remote.NewRunner(c, st, src, slog.New(slog.DiscardHandler))
	r.SetApplier(src)
	return pathEnv{run: r, store: st, src: src}
}

// proposeDelete makes the assistant propose deleting error_handler, with apply
// as the ai:apply_action sent on approval.
func proposeDelete(ai *remotetest.Server, apply string) {
	ai.SetChat(func(s *remotetest.Session) {
		s.Token("I can remove error_handler. ")
		s.ProposeFull("call_1_0", "propose_delete_node", map[string]any{"nodeKey": "error_handler", "reason": "unused"}, deleteErrorHandler, "", apply)
	})
	ai.SetResume(func(s *remotetest.Session) { s.Token("Done."); s.Complete("Done.") })
}

func (e pathEnv) ask(t *testing.T) agent.Result {
	t.Helper()
	res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: servertest.SeedGraphKey, Text: "delete error_handler"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("ask: %+v %v", res, err)
	}
	return res
}

func resumes(ai *remotetest.Server) (n int) {
	for _, r := range ai.Received() {
		if r.Type == "ai:resume" && r.Approved {
			n++
		}
	}
	return n
}

func has(g *servertest.Server, node string) bool {
	_, ok := g.Live(servertest.SeedGraphKey).NodeSheet(node)
	return ok
}

// With nobody in the web editor: the graph is claimed through /api/sync, the
// approval is applied and saved (forceSave), and the saved state shows it as soon
// as the command says done.
func TestApprovalRoutesAppliesAndSaves(t *testing.T) {
	t.Parallel()
	in := newInstance(t)
	proposeDelete(in.ai, applyOf("", "error_handler"))
	e := newPathEnv(t, in.ai.URL)
	res := e.ask(t)
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if err != nil || res2.Decided == nil || res2.Decided.Outcome != convo.Applied || res2.Text != "Done." {
		t.Fatalf("%+v %v", res2, err)
	}
	if has(in.graph, "error_handler") {
		t.Fatal("said done, but the live graph has the node")
	}
	if _, ok := in.graph.Saved(servertest.SeedGraphKey).NodeSheet("error_handler"); ok {
		t.Fatal("said done, but the saved graph (POST /api/graph/get) still has the node: no forceSave")
	}
	if c := in.graph.Counts(); c.Saves != 1 || c.Refusals != 0 {
		t.Fatalf("counts %+v", c)
	}
	if !strings.Contains(strings.Join(in.ai.Syncs(), ","), "graph-testgraph001") {
		t.Fatalf("no /api/sync for the graph: %v", in.ai.Syncs())
	}
}

// A two-instance cluster: the instance asked routes the graph to its peer; both
// the assistant's socket and the editing socket go there, and nothing registers
// on the instance that does not manage the graph.
func TestClusterBothSocketsGoToThePeer(t *testing.T) {
	t.Parallel()
	a, b := newInstance(t), newInstance(t)
	a.ai.RouteTo(servertest.SeedGraphKey, b.ai)
	a.ai.SetChat(func(s *remotetest.Session) { s.Error("asked the instance that does not manage the graph") })
	proposeDelete(b.ai, applyOf("", "error_handler"))
	e := newPathEnv(t, a.ai.URL)
	res := e.ask(t)
	if _, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil); err != nil {
		t.Fatal(err)
	}
	if len(a.ai.Received()) != 0 || a.ai.Conns() != 0 {
		t.Fatalf("the assistant of the instance that does not manage the graph was used: %d requests, %d sockets", len(a.ai.Received()), a.ai.Conns())
	}
	if c := a.graph.Counts(); c.Registrations != 0 || c.Edits != 0 {
		t.Fatalf("something registered on the instance that does not manage the graph: %+v", c)
	}
	if has(b.graph, "error_handler") || resumes(b.ai) != 1 {
		t.Fatalf("not applied on the peer (or not approved there): node %v, resumes %d", has(b.graph, "error_handler"), resumes(b.ai))
	}
	if !has(a.graph, "error_handler") {
		t.Fatal("the change went to the instance that does not manage the graph")
	}
}

// A server that refuses the registration: no ai:resume {approved:true} is sent,
// the thread stays pending (here and on the server), one sentence says why.
func TestRefusedRegistrationSendsNoApproval(t *testing.T) {
	t.Parallel()
	in := newInstance(t)
	proposeDelete(in.ai, applyOf("", "error_handler"))
	e := newPathEnv(t, in.ai.URL)
	res := e.ask(t)
	e.src.Release() // the approval registers anew, as a later approve command does
	in.graph.RefuseNext("registerUserOnGraph:0", "Access denied to this graph's workspace")
	_, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	ce, ok := fault.As(err)
	if !ok || !strings.Contains(ce.Message, "nothing was approved") || !strings.Contains(ce.Message, "Access denied") || ce.Code == fault.Config {
		t.Fatalf("error %v", err)
	}
	for _, r := range in.ai.Received() {
		if r.Type != "ai:chat" {
			t.Fatalf("sent %s (approved %v)", r.Type, r.Approved)
		}
	}
	if p, _ := e.store.PendingProposal(context.Background(), res.ThreadID); p == nil {
		t.Fatal("the proposal is no longer pending here")
	}
	rem, _, _ := e.store.RemoteOf(context.Background(), res.ThreadID)
	if th := in.ai.Thread(rem.ID); th == nil || th.Pending == nil {
		t.Fatal("the server's thread no longer waits")
	}
	if !has(in.graph, "error_handler") {
		t.Fatal("the node went")
	}
	// Once the server takes the registration, approving again applies it.
	if res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil); err != nil || res2.Decided == nil || res2.Decided.Outcome != convo.Applied {
		t.Fatalf("approve again: %+v %v", res2.Decided, err)
	}
}

// A server that sends more in ai:apply_action than the proposal shown: nothing
// is applied, the approval is recorded as not applied, and it is said.
func TestApplyBeyondTheProposalIsRefused(t *testing.T) {
	t.Parallel()
	many := make([]string, 0, 20000)
	for i := 0; i < 10000; i++ {
		many = append(many, `{"i":{"o":1,"p":["posX"],"v":`+fmt.Sprint(i)+`},"sheetId":"0","nodeId":"root"}`,
			`{"i":{"o":1,"p":["posY"],"v":`+fmt.Sprint(i)+`},"sheetId":"0","nodeId":"root"}`)
	}
	for name, tc := range map[string]struct{ action, apply, tool string }{
		"two more nodes deleted": {deleteErrorHandler, applyOf("", "error_handler", "fetch_api", "return"), "propose_delete_node"},
		"20,000 instructions for a move": {`{"type":"move_node","payload":{"nodeKey":"root","posX":1,"posY":2}}`,
			applyOf("[" + strings.Join(many, ",") + "]"), "propose_move_node"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := newInstance(t)
			in.ai.SetChat(func(s *remotetest.Session) {
				s.ProposeFull("call_1_0", tc.tool, map[string]any{"reason": "asked"}, tc.action, "", tc.apply)
			})
			in.ai.SetResume(func(s *remotetest.Session) { s.Token("Done."); s.Complete("Done.") })
			e := newPathEnv(t, in.ai.URL)
			res := e.ask(t)
			before := in.graph.Counts().Edits
			res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := res2.Decided
			if d == nil || d.Outcome != convo.NotApplied || !strings.Contains(d.ApplyError, "more than the approved proposal") {
				t.Fatalf("decided %+v", d)
			}
			if res2.Text != "" {
				t.Fatalf("the continued answer was shown: %q", res2.Text)
			}
			if in.graph.Counts().Edits != before || !has(in.graph, "fetch_api") || !has(in.graph, "error_handler") {
				t.Fatal("something was applied")
			}
		})
	}
}

// An acknowledgement lost after the server applied the change (the socket drops
// before the ack): the live graph is read again, the change is found there and
// recorded as applied, and it is not sent twice.
func TestLostAcknowledgementRecordsTheTruth(t *testing.T) {
	t.Parallel()
	in := newInstance(t)
	proposeDelete(in.ai, applyOf("", "error_handler"))
	e := newPathEnv(t, in.ai.URL)
	res := e.ask(t)
	in.graph.LoseNextAck("batchDeleteElements")
	res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
	if err != nil || res2.Decided == nil || res2.Decided.Outcome != convo.Applied {
		t.Fatalf("%+v %v", res2.Decided, err)
	}
	if has(in.graph, "error_handler") {
		t.Fatal("recorded as applied, but the node is there")
	}
	if c := in.graph.Counts(); c.Edits != 1 {
		t.Fatalf("%d edits: the change was sent again", c.Edits)
	}
}
