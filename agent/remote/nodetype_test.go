package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// ApplyNodeType makes fakeApplier a remote.NodeTypeApplier: it records the type
// change and applies it, or fails with f.fail.
func (f *fakeApplier) ApplyNodeType(_ context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (datasource.ApplyResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.types = append(f.types, p)
	f.graph = graphKey
	if f.fail != "" {
		return datasource.ApplyResult{}, errors.New(f.fail)
	}
	return datasource.ApplyResult{Applied: true, Note: "changed process of node type " + p.TypeKey + "; read back from the server"}, nil
}

// onlyGraphs applies graph changes and has no way to node types.
type onlyGraphs struct{}

func (onlyGraphs) ApplyServerAction(context.Context, string, nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error) {
	return nodiusapi.ApplyReport{}, nil
}

func proposeType(s *remotetest.Session) {
	s.Token("I propose to change the filter.")
	s.ProposeFull("call_t", "propose_configure_node_type", map[string]any{"mode": "update", "typeKey": "filter", "displayName": "Filter", "reason": "keep injured"},
		`{"type":"configure_node_type","payload":{"mode":"update","typeKey":"filter","displayName":"Filter","process":"keep(injured);\nnext();"}}`, "", "")
}

// TestRemoteNodeTypeAppliedHere: the server sends no ai:apply_action for an
// approved configure_node_type (it writes the type where its editor does not
// read it): the change shown is applied here, and only what the applier says
// it applied and read back is recorded as applied.
func TestRemoteNodeTypeAppliedHere(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		applier interface {
			ApplyServerAction(context.Context, string, nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error)
		}
		outcome convo.Outcome
		says    string
	}{
		{"applied", &fakeApplier{}, convo.Applied, "read back from the server"},
		{"refused", &fakeApplier{fail: "the Nodius server refused the change of node type filter (Invalid instruction)"}, convo.NotApplied, "the node type change was not applied: the Nodius server refused"},
		{"no way to node types", onlyGraphs{}, convo.NotApplied, "make the change in the web editor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			e.srv.SetChat(proposeType)
			e.srv.SetResume(func(s *remotetest.Session) {
				s.Token("Done.")
				s.Complete("Done.")
			})
			e.run.SetApplier(tc.applier)
			res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "keep injured players"}, nil)
			if err != nil || res.Proposal == nil {
				t.Fatalf("send: %+v %v", res, err)
			}
			res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := res2.Decided
			if d == nil || d.Outcome != tc.outcome {
				t.Fatalf("decided %+v", d)
			}
			said := d.ApplyError
			if d.Result != nil && d.Outcome == convo.Applied {
				said = d.Result.Note
			}
			if !strings.Contains(said, tc.says) {
				t.Errorf("said %q, want %q", said, tc.says)
			}
			if fa, ok := tc.applier.(*fakeApplier); ok {
				if len(fa.types) != 1 || fa.types[0].TypeKey != "filter" || fa.types[0].Process != "keep(injured);\nnext();" || fa.graph != "demo" {
					t.Errorf("applied %+v on %q", fa.types, fa.graph)
				}
			}
			if tc.outcome != convo.Applied && res2.Text == "Done." {
				t.Error("the model's \"done\" was shown for a change not applied")
			}
		})
	}
}

// preparingTypes is a remote.NodeTypePreparer: it records, when the type's
// registration is taken, how many approvals the server had received, and
// refuses the registration with refuse.
type preparingTypes struct {
	fakeApplier
	srv              *remotetest.Server
	refuse           string
	resumesAtPrepare int
	appliedPrepared  int
	releasedAfter    bool
}

func (p *preparingTypes) PrepareNodeType(_ context.Context, graphKey string, c datasource.ConfigureNodeTypePayload) (func(context.Context) (datasource.ApplyResult, error), func(), error) {
	for _, r := range p.srv.Received() {
		if r.Type == "ai:resume" {
			p.resumesAtPrepare++
		}
	}
	if p.refuse != "" {
		return nil, nil, &fault.Error{Code: fault.ServerError, Message: p.refuse}
	}
	apply := func(ctx context.Context) (datasource.ApplyResult, error) {
		p.appliedPrepared++
		return p.ApplyNodeType(ctx, graphKey, c)
	}
	return apply, func() { p.releasedAfter = p.appliedPrepared > 0 }, nil
}

// TestRemoteNodeTypeRegisteredBeforeApproving: an approved node type change
// takes the type's registration before ai:resume is sent, as a graph change
// does; a refused registration sends nothing and leaves the proposal pending.
func TestRemoteNodeTypeRegisteredBeforeApproving(t *testing.T) {
	t.Parallel()
	for _, refuse := range []string{"", "This server don't manage node config with key:filter"} {
		t.Run("refuse="+refuse, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			e.srv.SetChat(proposeType)
			e.srv.SetResume(func(s *remotetest.Session) { s.Token("Done."); s.Complete("Done.") })
			pa := &preparingTypes{srv: e.srv, refuse: refuse}
			e.run.SetApplier(pa)
			res, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "keep injured players"}, nil)
			if err != nil || res.Proposal == nil {
				t.Fatalf("send: %+v %v", res, err)
			}
			res2, err := e.run.Resume(context.Background(), res.ThreadID, convo.Decision{Approved: true}, nil)
			resumes := 0
			for _, r := range e.srv.Received() {
				if r.Type == "ai:resume" {
					resumes++
				}
			}
			if refuse != "" {
				ce, ok := fault.As(err)
				if !ok || ce.Code == fault.Config || ce.Code == fault.Decision || !strings.Contains(ce.Message, "nothing was approved") || !strings.Contains(ce.Message, "don't manage") {
					t.Fatalf("err %v", err)
				}
				if resumes != 0 || len(pa.types) != 0 {
					t.Fatalf("sent %d ai:resume, applied %+v", resumes, pa.types)
				}
				if p, _ := e.store.PendingProposal(context.Background(), res.ThreadID); p == nil {
					t.Fatal("the proposal is no longer pending")
				}
				return
			}
			if err != nil || res2.Decided == nil || res2.Decided.Outcome != convo.Applied {
				t.Fatalf("%+v %v", res2.Decided, err)
			}
			if pa.resumesAtPrepare != 0 || resumes != 1 || pa.appliedPrepared != 1 || !pa.releasedAfter {
				t.Fatalf("resumes at prepare %d, sent %d, applied through the registration %d, released after %v", pa.resumesAtPrepare, resumes, pa.appliedPrepared, pa.releasedAfter)
			}
		})
	}
}
