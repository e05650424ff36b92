package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
)

var _ agent.Store = (*threads.Store)(nil)

// turn is one scripted LLM call: it streams text then returns tool calls.
type turn struct {
	text  string
	calls []convo.ToolCall
	err   error
	// block, when set, waits for ctx cancellation after streaming text.
	block bool
	// failAfter, when set, is returned after the text streamed (a limit hit mid-way).
	failAfter error
}

// scripted is an in-process llm.Provider that plays turns in order and records every
// request it receives.
type scripted struct {
	mu    sync.Mutex
	turns []turn
	reqs  []llm.Request
}

func (s *scripted) Name() string  { return "fake" }
func (s *scripted) Model() string { return "fake-model" }

func (s *scripted) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Reply, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	if len(s.turns) == 0 {
		s.mu.Unlock()
		return llm.Reply{}, errors.New("scripted provider: no turn left")
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	s.mu.Unlock()
	if t.err != nil {
		return llm.Reply{}, t.err
	}
	for _, w := range strings.SplitAfter(t.text, " ") {
		if w != "" {
			onDelta(llm.Delta{Kind: llm.DeltaText, Text: w})
		}
	}
	if t.failAfter != nil {
		return llm.Reply{Content: t.text}, t.failAfter
	}
	if t.block {
		<-ctx.Done()
		return llm.Reply{Content: t.text}, &fault.Error{Code: fault.Interrupted, Message: "stopped", Err: ctx.Err()}
	}
	return llm.Reply{Content: t.text, ToolCalls: t.calls, Usage: convo.Usage{PromptTokens: 100, CompletionTokens: 10, CachedTokens: 40}}, nil
}

func (s *scripted) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

type fixture struct {
	agent *agent.Agent
	llm   *scripted
	store *threads.Store
	src   *memgraph.Store
}

func newFixture(t testing.TB, opts agent.Options, turns ...turn) *fixture {
	t.Helper()
	ctx := context.Background()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	store, err := threads.Open(ctx, filepath.Join(t.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := &scripted{turns: turns}
	opts.Provider = p
	opts.Source = src
	opts.Store = store
	opts.Retriever = retrieverNoCache(src)
	opts.Pricing = config.Pricing{InputPerMillion: 1, CachedInputPerMillion: 0.1, OutputPerMillion: 2}
	return &fixture{agent: agent.New(opts), llm: p, store: store, src: src}
}

func retrieverNoCache(src datasource.Source) *rag.Retriever {
	o := rag.DefaultOptions()
	o.CacheTTL = 0
	return rag.New(src, o, nil)
}

// recorder collects events.
type recorder struct{ events []convo.Event }

func (r *recorder) emit(e convo.Event) { r.events = append(r.events, e) }

// types lists the public event types, in order.
func (r *recorder) types() []string {
	var out []string
	for _, e := range r.events {
		if e.Public() {
			out = append(out, string(e.Type))
		}
	}
	return out
}

func call(id, name, args string) convo.ToolCall {
	return convo.ToolCall{ID: id, Name: name, Arguments: args}
}

func toolNames(defs []convo.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func TestDirectAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{}, turn{text: "fetch-api calls the NBA stats API."})
	rec := &recorder{}
	res, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "Que fait le node fetch-api ?"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "fetch-api calls the NBA stats API." || res.Proposal != nil {
		t.Fatalf("result = %+v", res)
	}
	got := strings.Join(rec.types(), ",")
	want := "thread,token,token,token,token,token,token,usage,complete"
	if got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	// cost: 60 uncached * 1 + 40 cached * 0.1 + 10 out * 2 per million
	if u := res.Usage; u.PromptTokens != 100 || u.CostUSD < 8.3e-5 || u.CostUSD > 8.5e-5 {
		t.Fatalf("usage = %+v", u)
	}
	h, err := f.store.History(context.Background(), res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range h {
		roles = append(roles, string(m.Role)+"/"+string(m.Kind))
	}
	if strings.Join(roles, ",") != "system/prompt,system/context,user/,assistant/" {
		t.Fatalf("history = %v", roles)
	}
	if !strings.Contains(h[1].Content, "fetch-api") {
		t.Fatalf("retrieval context lacks fetch-api:\n%s", h[1].Content)
	}
	// The request carried the same three messages and the tools of an editor.
	req := f.llm.requests()[0]
	if len(req.Messages) != 3 || !strings.Contains(strings.Join(toolNames(req.Tools), ","), "propose_create_node") {
		t.Fatalf("request: %d messages, tools %v", len(req.Messages), toolNames(req.Tools))
	}
}

func TestSecondQuestionKeepsPrefixAndAddsContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{}, turn{text: "one"}, turn{text: "two"})
	ctx := context.Background()
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "fetch api"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.agent.Send(ctx, agent.SendRequest{ThreadID: res.ThreadID, Text: "and filter-active?"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.llm.requests()
	first, second := reqs[0].Messages, reqs[1].Messages
	if len(second) != len(first)+1+2 {
		t.Fatalf("second request has %d messages, first %d", len(second), len(first))
	}
	for i := range first {
		if first[i].Content != second[i].Content || first[i].Role != second[i].Role {
			t.Fatalf("message %d changed between turns: prefix caches would miss", i)
		}
	}
	prompts := 0
	for _, m := range second {
		if m.Kind == convo.KindPrompt {
			prompts++
		}
	}
	if prompts != 1 {
		t.Fatalf("%d system prompts, want 1", prompts)
	}
}

func TestReadToolThenAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("c1", "read_node_detail", `{"nodeKey":"fetch-api"}`)}},
		turn{text: "It fetches stats."})
	rec := &recorder{}
	res, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "details of fetch-api"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.types(), ","); got != "thread,usage,tool_start,tool_result,token,token,token,usage,complete" {
		t.Fatalf("events = %s", got)
	}
	var result convo.Event
	for _, e := range rec.events {
		if e.Type == convo.EventToolResult {
			result = e
		}
	}
	if result.ToolErr != "" || !strings.Contains(result.Result, "fetch") {
		t.Fatalf("tool result = %+v", result)
	}
	second := f.llm.requests()[1].Messages
	last := second[len(second)-1]
	if last.Role != convo.Tool || last.ToolCallID != "c1" || second[len(second)-2].ToolCalls[0].ID != "c1" {
		t.Fatalf("second request does not end with the call and its result: %+v", last)
	}
	if res.Text != "It fetches stats." {
		t.Fatalf("text = %q", res.Text)
	}
}

func TestMalformedAndUnknownToolsAreErrorsTheModelSees(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{
			call("c1", "read_node_detail", `{"nodeKey": fetch-api}`),
			call("c2", "drop_database", `{}`),
			call("c3", "propose_create_node", `{"typeKey":"filter","sheet":"0","posX":1,"posY":2,"reason":"x","color":"red"}`),
		}},
		turn{text: "Sorry."})
	rec := &recorder{}
	if _, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "hi"}, rec.emit); err != nil {
		t.Fatal(err)
	}
	errs := 0
	for _, e := range rec.events {
		if e.Type == convo.EventToolResult && e.ToolErr != "" {
			errs++
		}
		if e.Type == convo.EventProposal {
			t.Fatal("an invalid proposal must not become a proposal")
		}
	}
	if errs != 3 {
		t.Fatalf("%d error results, want 3", errs)
	}
	msgs := f.llm.requests()[1].Messages
	n := len(msgs)
	for i, id := range []string{"c1", "c2", "c3"} {
		m := msgs[n-3+i]
		if m.Role != convo.Tool || m.ToolCallID != id || !strings.Contains(m.Content, "error") {
			t.Fatalf("result %d = %+v", i, m)
		}
	}
}

func TestProposalStopsThenApproveAppliesAndContinues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{text: "I propose a node.", calls: []convo.ToolCall{
			call("p1", "propose_create_node", `{"nodeKey":"log-result","typeKey":"log-node","sheet":"0","posX":600,"posY":300,"reason":"log what was displayed"}`),
			call("r1", "read_graph_overview", `{"graphKey":"demo"}`),
		}},
		turn{text: "Done: log-result was created."})
	ctx := context.Background()
	rec := &recorder{}
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add a log node"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Proposal == nil || res.Proposal.Action.Type != datasource.CreateNodeAction {
		t.Fatalf("result = %+v", res)
	}
	types := rec.types()
	if types[len(types)-1] != "proposal" {
		t.Fatalf("run must end with the proposal event: %v", types)
	}
	if _, err := f.src.Node(ctx, "demo", "log-result"); !errors.Is(err, datasource.ErrNotFound) {
		t.Fatal("the node exists before approval")
	}
	// Sending on a thread with a pending proposal is refused.
	if _, err := f.agent.Send(ctx, agent.SendRequest{ThreadID: res.ThreadID, Text: "hello?"}, nil); err == nil {
		t.Fatal("send on a pending thread must fail")
	}

	rec = &recorder{}
	res2, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.types(), ","); !strings.HasPrefix(got, "thread,tool_result,tool_start,tool_result,") || !strings.HasSuffix(got, "complete") {
		t.Fatalf("resume events = %s", got)
	}
	if _, err := f.src.Node(ctx, "demo", "log-result"); err != nil {
		t.Fatalf("approved node not applied: %v", err)
	}
	if res2.Text != "Done: log-result was created." {
		t.Fatalf("text = %q", res2.Text)
	}
	// The model got the decision, then the remaining call's result, in call order.
	msgs := f.llm.requests()[1].Messages
	n := len(msgs)
	if msgs[n-2].ToolCallID != "p1" || !strings.Contains(msgs[n-2].Content, `"approved"`) || !strings.Contains(msgs[n-2].Content, "log-result") {
		t.Fatalf("decision result = %+v", msgs[n-2])
	}
	if msgs[n-1].ToolCallID != "r1" || strings.Contains(msgs[n-1].Content, "interrupted") {
		t.Fatalf("remaining call result = %+v", msgs[n-1])
	}
	if p, _ := f.store.PendingProposal(ctx, res.ThreadID); p != nil {
		t.Fatal("proposal still pending after approval")
	}
}

func TestRejectWithFeedback(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_delete_node", `{"nodeKey":"error-handler","reason":"unused"}`)}},
		turn{text: "OK, I keep it."})
	ctx := context.Background()
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "clean up"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if len(res.Proposal.Action.DeleteNode.RemovedEdges) != 1 {
		t.Fatalf("a deleted node's edges must be part of the action: %+v", res.Proposal.Action.DeleteNode)
	}
	if _, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Feedback: "it is needed for errors"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.src.Node(ctx, "demo", "error-handler"); err != nil {
		t.Fatal("rejected deletion was applied")
	}
	msgs := f.llm.requests()[1].Messages
	last := msgs[len(msgs)-1]
	if !strings.Contains(last.Content, "rejected") || !strings.Contains(last.Content, "it is needed for errors") {
		t.Fatalf("decision result = %s", last.Content)
	}
}

func TestAlwaysForThreadAutoApprovesThatKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_move_node", `{"nodeKey":"root","posX":10,"posY":20,"reason":"tidy"}`)}},
		turn{calls: []convo.ToolCall{call("p2", "propose_move_node", `{"nodeKey":"return","posX":30,"posY":40,"reason":"tidy"}`)}},
		turn{text: "Both moved."})
	ctx := context.Background()
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "tidy"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	res2, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, AlwaysForThread: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Proposal != nil || res2.Text != "Both moved." {
		t.Fatalf("second move should be auto-approved: %+v", res2)
	}
	n, _ := f.src.Node(ctx, "demo", "return")
	if n.PosX != 30 || n.PosY != 40 {
		t.Fatalf("return not moved: %v,%v", n.PosX, n.PosY)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	t.Run("deny hides the tool", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, agent.Options{Policy: map[datasource.ActionType]config.Policy{datasource.DeleteNodeAction: config.PolicyDeny}}, turn{text: "ok"})
		if _, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, nil); err != nil {
			t.Fatal(err)
		}
		names := strings.Join(toolNames(f.llm.requests()[0].Tools), ",")
		if strings.Contains(names, "propose_delete_node") || !strings.Contains(names, "propose_create_node") {
			t.Fatalf("tools = %s", names)
		}
	})
	t.Run("auto applies without stopping", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, agent.Options{Policy: map[datasource.ActionType]config.Policy{datasource.MoveNodeAction: config.PolicyAuto}},
			turn{calls: []convo.ToolCall{call("p1", "propose_move_node", `{"nodeKey":"root","posX":5,"posY":6,"reason":"r"}`)}},
			turn{text: "moved"})
		res, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, nil)
		if err != nil || res.Proposal != nil || res.Text != "moved" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
	})
	t.Run("viewer gets read tools only", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, agent.Options{Role: "viewer"},
			turn{calls: []convo.ToolCall{call("p1", "propose_delete_node", `{"nodeKey":"root","reason":"r"}`)}},
			turn{text: "I cannot."})
		res, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, nil)
		if err != nil || res.Proposal != nil {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		for _, name := range toolNames(f.llm.requests()[0].Tools) {
			if strings.HasPrefix(name, "propose_") {
				t.Fatalf("viewer offered %s", name)
			}
		}
		if _, err := f.src.Node(context.Background(), "demo", "root"); err != nil {
			t.Fatal("viewer deleted a node")
		}
	})
}

// TestToolLimitIsAChoice: after MaxToolRounds rounds the run stops with a tool
// limit and no answer (the person chooses); resumed with "continue" it goes on with
// tools up to MaxExtendedRounds, then answers without tools; resumed with "summary"
// it answers at once, without tools.
func TestToolLimitIsAChoice(t *testing.T) {
	t.Parallel()
	rounds := func(n int, from rune) []turn {
		var ts []turn
		for i := 0; i < n; i++ {
			ts = append(ts, turn{calls: []convo.ToolCall{call("c"+string(from+rune(i)), "list_available_node_types", `{}`)}})
		}
		return ts
	}
	ctx := context.Background()

	// Summary: 3 rounds, the limit, then one call without tools.
	f := newFixture(t, agent.Options{MaxToolRounds: 3, MaxExtendedRounds: 5}, append(rounds(3, 'a'), turn{text: "final"})...)
	var evs []convo.Event
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "x"}, func(e convo.Event) { evs = append(evs, e) })
	if err != nil || res.ToolLimit == nil || res.ToolLimit.RoundsUsed != 3 || res.ToolLimit.MaxExtended != 5 || res.Text != "" {
		t.Fatalf("at the limit: res=%+v err=%v", res, err)
	}
	if last := evs[len(evs)-1]; last.Type != convo.EventToolLimit {
		t.Fatalf("last event %s, want tool_limit", last.Type)
	}
	res, err = f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: false}, nil)
	reqs := f.llm.requests()
	if err != nil || res.Text != "final" || len(reqs) != 4 || len(reqs[3].Tools) != 0 {
		t.Fatalf("summary: res=%+v err=%v, %d calls", res, err, len(reqs))
	}
	// Nothing waits any more.
	if _, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil); err == nil {
		t.Fatal("a second choice was taken")
	}

	// Continue: 3 rounds, the limit, 2 more rounds with tools (5 in all), then the
	// last call without tools.
	f = newFixture(t, agent.Options{MaxToolRounds: 3, MaxExtendedRounds: 5}, append(rounds(5, 'a'), turn{text: "after more"})...)
	res, err = f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "x"}, nil)
	if err != nil || res.ToolLimit == nil {
		t.Fatalf("at the limit: res=%+v err=%v", res, err)
	}
	res, err = f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil)
	reqs = f.llm.requests()
	if err != nil || res.Text != "after more" || res.ToolLimit != nil || len(reqs) != 6 || len(reqs[4].Tools) == 0 || len(reqs[5].Tools) != 0 {
		t.Fatalf("continue: res=%+v err=%v, %d calls", res, err, len(reqs))
	}
}

func TestCancelKeepsPartialAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{}, turn{text: "The partial answer ", block: true})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	emit := func(e convo.Event) {
		rec.emit(e)
		if e.Type == convo.EventToken {
			cancel()
		}
	}
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "x"}, emit)
	ce, ok := fault.As(err)
	if !ok || ce.Code != fault.Interrupted {
		t.Fatalf("err = %v", err)
	}
	h, err := f.store.History(context.Background(), res.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	last := h[len(h)-1]
	if last.Role != convo.Assistant || last.Status != convo.Interrupted || last.Content != "The partial answer " {
		t.Fatalf("last message = %+v", last)
	}
}

func TestProviderErrorIsClassifiedEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{}, turn{err: &fault.Error{Code: fault.RateLimit, Message: "slow down", Retryable: true}})
	rec := &recorder{}
	_, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, rec.emit)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.RateLimit {
		t.Fatalf("err = %v", err)
	}
	last := rec.events[len(rec.events)-1]
	b, _ := json.Marshal(last)
	if string(b) != `{"type":"error","code":"rate_limit","message":"slow down","retryable":true}` {
		t.Fatalf("error event = %s", b)
	}
}

func TestBudgetExceeded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{Limits: config.Limits{MaxTokensPerThread: 150}}, turn{text: "a"}, turn{text: "b"})
	ctx := context.Background()
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first call used 110 tokens; the thread is still under 150, so a new question
	// goes through, and the one after is stopped.
	res, err = f.agent.Send(ctx, agent.SendRequest{ThreadID: res.ThreadID, Text: "y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.agent.Send(ctx, agent.SendRequest{ThreadID: res.ThreadID, Text: "z"}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.BudgetExceeded {
		t.Fatalf("err = %v", err)
	}
}

func TestUnknownGraphCreatesNoThread(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{})
	_, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "nope", Text: "x"}, nil)
	if !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	list, _ := f.store.List(context.Background(), threads.ListOptions{All: true})
	if len(list) != 0 {
		t.Fatalf("%d threads created for an unknown graph", len(list))
	}
}

func TestNoProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{})
	a := agent.New(agent.Options{NoProvider: &fault.Error{Code: fault.Config, Message: "set DEEPSEEK_API_KEY"}, Store: f.store, Source: f.src})
	_, err := a.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Config {
		t.Fatalf("err = %v", err)
	}
}

func TestRetryBeforeFirstTokenShowsRetrying(t *testing.T) {
	t.Parallel()
	noWait := func(context.Context, time.Duration) error { return nil }
	f := newFixture(t, agent.Options{Retry: &llm.RetryOptions{Sleep: noWait}},
		turn{err: &fault.Error{Code: fault.RateLimit, Message: "slow down", Retryable: true}},
		turn{text: "answer"})
	rec := &recorder{}
	res, err := f.agent.Send(context.Background(), agent.SendRequest{GraphKey: "demo", Text: "x"}, rec.emit)
	if err != nil || res.Text != "answer" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	retried := false
	for _, e := range rec.events {
		if e.Type == convo.EventStatus && e.State == convo.StateRetrying {
			retried = true
		}
	}
	if !retried || len(f.llm.requests()) != 2 {
		t.Fatalf("retried=%v, %d requests", retried, len(f.llm.requests()))
	}
}

func TestApprovedChangeReachesTheNextContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, agent.Options{},
		turn{text: "I suggest a node.", calls: []convo.ToolCall{
			call("p1", "propose_create_node", `{"nodeKey":"audit-trail","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"audit"}`),
		}},
		turn{text: "Created."},
		turn{text: "It logs."})
	ctx := context.Background()
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "what does fetch-api do?"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if _, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil); err != nil {
		t.Fatal(err)
	}
	// The retriever indexed the graph before the change; after an applied change the
	// next question must see the new node.
	if _, err := f.agent.Send(ctx, agent.SendRequest{ThreadID: res.ThreadID, Text: "what does audit-trail do?"}, nil); err != nil {
		t.Fatal(err)
	}
	msgs := f.llm.requests()[2].Messages
	context := msgs[len(msgs)-2]
	if context.Kind != convo.KindContext || !strings.Contains(context.Content, "audit-trail") {
		t.Fatalf("the context after the change lacks the new node:\n%s", context.Content)
	}
}

// releasing is a source that counts Release calls (datasource.Releaser).
type releasing struct {
	*memgraph.Store
	mu sync.Mutex
	n  int
}

func (r *releasing) Release() { r.mu.Lock(); r.n++; r.mu.Unlock() }

// TestRunEndReleasesTheSource: a source that holds something open between reads
// (the Nodius server's editing socket) is released when a run ends, whether it
// answered or stopped at a proposal, and again when the decision's run ends.
func TestRunEndReleasesTheSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("c1", "propose_move_node", `{"nodeKey":"fetch-api","posX":1,"posY":2,"reason":"tidy"}`)}},
		turn{text: "Moved."})
	src := &releasing{Store: f.src}
	a := agent.New(agent.Options{Provider: f.llm, Source: src, Store: f.store, Retriever: retrieverNoCache(src)})
	res, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "move fetch-api"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("send: %v, proposal %v", err, res.Proposal)
	}
	if src.n != 1 {
		t.Fatalf("released %d times after the run that stopped at a proposal, want 1", src.n)
	}
	if _, err := a.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, ProposalID: res.Proposal.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if src.n != 2 {
		t.Fatalf("released %d times after the decision's run, want 2", src.n)
	}
}

// refusingCreator is a source that cannot make graphs now (a read-only export).
type refusingCreator struct{ *memgraph.Store }

func (refusingCreator) CanCreateGraph(context.Context) error {
	return errors.New("the export is read-only")
}

// TestCreateGraphRefusedWhenTheSourceCannot: in home mode, a propose_create_graph
// on a source that cannot make graphs now is an error the model reads, not a
// proposal the person would approve for nothing.
func TestCreateGraphRefusedWhenTheSourceCannot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("c1", "propose_create_graph", `{"name":"Invoices","reason":"asked"}`)}},
		turn{text: "I cannot create it here."})
	src := refusingCreator{Store: f.src}
	a := agent.New(agent.Options{Provider: f.llm, Source: src, Store: f.store, Retriever: retrieverNoCache(src)})
	res, err := a.Send(ctx, agent.SendRequest{GraphKey: "home", Text: "make an invoices graph"}, nil)
	if err != nil || res.Proposal != nil {
		t.Fatalf("send: %v, proposal %+v: want no proposal", err, res.Proposal)
	}
	reqs := f.llm.requests()
	last := reqs[len(reqs)-1].Messages
	if got := last[len(last)-1].Content; !strings.Contains(got, "read-only") {
		t.Errorf("the model was told %q, want why the graph cannot be made", got)
	}
}
