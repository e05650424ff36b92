package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

func startQuestion(t *testing.T, m *Model, q string) {
	t.Helper()
	typeText(m, q)
	press(m, "enter")
	if m.run == nil {
		t.Fatalf("enter did not start a run; view:\n%s", view(m))
	}
}

func TestTokensCoalesceAndRender(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", Dark: true})
	startQuestion(t, m, "what does fetch-api do?")
	m.Update(runBatchMsg{runID: m.run.id, items: []runItem{{ev: convo.Event{Type: convo.EventThread, ThreadID: "t1"}}, {ev: tok("It **fetches** ")}}})
	if strings.Contains(view(m), "fetches") {
		t.Fatal("tokens shown before the frame tick: they should be coalesced")
	}
	m.Update(frameMsg{})
	if !strings.Contains(view(m), "fetches") {
		t.Fatalf("token not rendered after a frame:\n%s", view(m))
	}
	feed(m, tok("the games.\n\nSecond paragraph."), convo.Event{Type: convo.EventComplete, ThreadID: "t1", Text: "x"})
	end(m, agent.Result{ThreadID: "t1"}, nil)
	v := view(m)
	for _, want := range []string{"You", "what does fetch-api do?", "Nodius", "It fetches the games.", "Second paragraph.", "idle"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "**") {
		t.Errorf("markdown not rendered:\n%s", v)
	}
	if m.threadID != "t1" {
		t.Errorf("thread id = %q", m.threadID)
	}
}

func TestBadgeStates(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "look")
	call := convo.ToolCall{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}
	feed(m, convo.Event{Type: convo.EventToolStart, ToolCall: call})
	v := view(m)
	if !strings.Contains(v, "● read_node_detail nodeKey=fetch-api") {
		t.Fatalf("running badge missing:\n%s", v)
	}
	long := strings.Repeat("line\n", 25)
	feed(m, convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: long, Duration: 12 * time.Millisecond},
		convo.Event{Type: convo.EventToolStart, ToolCall: convo.ToolCall{ID: "c2", Name: "search_nodes", Arguments: `{"query":"x"}`}},
		convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "c2", Name: "search_nodes"}, ToolErr: "index unavailable"})
	v = view(m)
	if !strings.Contains(v, "✓ read_node_detail nodeKey=fetch-api 12 ms") {
		t.Errorf("done badge missing:\n%s", v)
	}
	if !strings.Contains(v, "× search_nodes") || !strings.Contains(v, "index unavailable") {
		t.Errorf("error badge missing:\n%s", v)
	}
	end(m, agent.Result{}, nil)
	press(m, "tab", "tab") // newest badge first, then the older one
	v = view(m)
	if !strings.Contains(v, "arguments:") || !strings.Contains(v, "15 more lines") {
		t.Errorf("focused badge should expand to 10 lines + N more:\n%s", v)
	}
	press(m, "esc")
	if strings.Contains(view(m), "arguments:") {
		t.Error("esc should collapse the focused badge")
	}
}

func openProposal(t *testing.T, clk *fakeClock) (*Model, *fakeRunner) {
	t.Helper()
	fr := &fakeRunner{}
	opts := Options{Runner: fr, GraphKey: "demo", NoColor: true, Now: clk.Now}
	m := newTestModel(t, opts)
	m.Sheets(map[string]string{"0": "main"})
	startQuestion(t, m, "remove fetch-api")
	feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, convo.Event{Type: convo.EventProposal, Proposal: sampleProposal()})
	end(m, agent.Result{ThreadID: "t1", Proposal: sampleProposal()}, nil)
	if m.dlg == nil {
		t.Fatal("dialog did not open on the proposal")
	}
	view(m) // drawn, as the program draws it before any key
	return m, fr
}

func TestProposalDialogKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		keys  []string
		typed string
		want  convo.Decision
	}{
		{"approve", []string{"a"}, "", convo.Decision{Approved: true, ProposalID: "call_9"}},
		{"always", []string{"A"}, "", convo.Decision{Approved: true, AlwaysForThread: true, ProposalID: "call_9"}},
		{"reject", []string{"r"}, "", convo.Decision{ProposalID: "call_9"}},
		{"feedback", []string{"f"}, "keep it", convo.Decision{Feedback: "keep it", ProposalID: "call_9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			m, fr := openProposal(t, clk)
			v := view(m)
			for _, want := range []string{"Proposed change", "− node fetch-api", "− edge e1: root:0 → fetch-api:0", "− edge e2", "fetch-api is unused", "a approve"} {
				if !strings.Contains(v, want) {
					t.Errorf("dialog lacks %q:\n%s", want, v)
				}
			}
			// within the guard: ignored
			clk.Advance(100 * time.Millisecond)
			if cmd := press(m, tc.keys...); cmd != nil || m.dlg == nil {
				t.Fatal("a key inside the 400 ms guard was not ignored")
			}
			clk.Advance(400 * time.Millisecond)
			cmd := press(m, tc.keys...)
			if tc.typed != "" {
				typeText(m, tc.typed)
				cmd = press(m, "enter")
			}
			pumpRun(m, cmd) // decisionMsg → Resume runs to its end
			if _, res := fr.calls(); len(res) != 1 || res[0] != tc.want {
				t.Fatalf("resumed with %+v, want %+v", res, tc.want)
			}
			if m.pending != nil || m.dlg != nil {
				t.Error("proposal should no longer be pending")
			}
			v = view(m)
			if tc.want.Approved && !strings.Contains(v, "approved delete node") {
				t.Errorf("decision not in transcript:\n%s", v)
			}
			if !tc.want.Approved && !strings.Contains(v, "rejected delete node"+map[bool]string{true: ": keep it", false: ""}[tc.typed != ""]) {
				t.Errorf("rejection not in transcript:\n%s", v)
			}
		})
	}
}

func TestProposalResumeCallsRunner(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, fr := openProposal(t, clk)
	clk.Advance(time.Second)
	fr.resume = func(_ context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
		p := sampleProposal()
		p.Decision, p.Outcome = convo.Approved, convo.Applied
		emit(convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "call_9", Name: "propose_delete_node"},
			Result: `{"status":"approved","created":{"nodes":[],"edges":[]}}`, Proposal: p})
		emit(tok("Deleted."))
		return agent.Result{ThreadID: "t1", Text: "Deleted."}, nil
	}
	_, cmd := m.Update(keyMsg("A"))
	_, cmd = m.Update(cmd()) // decisionMsg → the run's start command (and a tick)
	pumpRun(m, cmd)
	_, res := fr.calls()
	if len(res) != 1 || !res[0].Approved || !res[0].AlwaysForThread {
		t.Fatalf("resume decisions = %+v", res)
	}
	v := view(m)
	for _, want := range []string{"✓ propose_delete_node", "Deleted.", "✓ approved and applied: delete node (and every delete node in this thread)"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestProposalEscLeavesPending(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, _ := openProposal(t, clk)
	clk.Advance(time.Second)
	runCmd(m, press(m, "esc"))
	if m.dlg != nil || m.pending == nil {
		t.Fatal("esc should close the dialog and keep the proposal pending")
	}
	if !strings.Contains(view(m), "press ctrl+p to review") {
		t.Errorf("no banner:\n%s", view(m))
	}
	press(m, "p")
	if m.dlg != nil || m.in.value() != "p" {
		t.Fatal("p is a letter: it must not reopen the dialog")
	}
	press(m, "esc")
	press(m, "ctrl+p")
	if _, ok := m.dlg.(*proposalDialog); !ok {
		t.Fatal("ctrl+p did not reopen the dialog")
	}
	// sending while pending is refused with a hint
	runCmd(m, press(m, "esc"))
	typeText(m, "hello")
	press(m, "enter")
	if m.run != nil {
		t.Error("a question was sent while a proposal is pending")
	}
}

func TestStopKeepsPartial(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "long answer please")
	feed(m, tok("The first half"))
	r := m.run
	press(m, "esc")
	if r.ctx.Err() == nil {
		t.Fatal("esc did not cancel the run")
	}
	end(m, agent.Result{}, context.Canceled)
	v := view(m)
	if !strings.Contains(v, "The first half") || !strings.Contains(v, "stopped") {
		t.Errorf("partial answer not kept/marked:\n%s", v)
	}
	if m.run != nil || m.st.state != phaseIdle {
		t.Errorf("state after stop = %v", m.st.state)
	}
}

func TestRetryAfterError(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "why?")
	ce := &fault.Error{Code: fault.RateLimit, Message: "The provider is rate limiting requests; wait a minute.", Retryable: true}
	feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t9"}, convo.Event{Type: convo.EventError, Err: ce})
	end(m, agent.Result{ThreadID: "t9"}, ce)
	v := view(m)
	if !strings.Contains(v, "rate_limit") || !strings.Contains(v, "ctrl+r retries") {
		t.Fatalf("inline error missing:\n%s", v)
	}
	first := m.runSeq
	press(m, "ctrl+r")
	if m.run == nil || m.runSeq == first {
		t.Fatal("ctrl+r did not retry")
	}
	if m.lastReq.Text != "why?" {
		t.Errorf("retried %q", m.lastReq.Text)
	}
}

func TestNoteIsShown(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "why?")
	feed(m, convo.Event{Type: convo.EventNote, Text: "the question was searched without expansion: timeout\x1b[31m"}, tok("Because."))
	v := view(m)
	if !strings.Contains(v, "! the question was searched without expansion: timeout") {
		t.Fatalf("note not shown:\n%s", v)
	}
	if strings.Contains(v, "\x1b[31m") || !strings.Contains(v, "Because.") {
		t.Fatalf("note not stripped or answer lost:\n%s", v)
	}
}

func TestCtrlCAsksOnceWhileStreaming(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	if cmd := press(m, "ctrl+c"); cmd == nil {
		t.Fatal("idle ctrl+c should quit at once")
	}
	m = newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "q")
	if cmd := press(m, "ctrl+c"); cmd != nil {
		t.Fatal("first ctrl+c while streaming should ask")
	}
	if !strings.Contains(view(m), "ctrl+c again") {
		t.Errorf("no confirmation:\n%s", view(m))
	}
	if cmd := press(m, "ctrl+c"); cmd == nil {
		t.Fatal("second ctrl+c should quit")
	}
}

func TestThreadPicker(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ts := &fakeThreads{
		threads: []convo.Thread{
			{ID: "ai_1_aaaa", GraphKey: "demo", Title: "Fetch questions", MessageCount: 2, UpdatedAt: now.Add(-time.Hour)},
			{ID: "ai_2_bbbb", GraphKey: "demo", Title: "Filter rewrite", MessageCount: 4, UpdatedAt: now},
			{ID: "ai_3_cccc", GraphKey: "other", Title: "Not this graph"},
		},
		history: map[string][]convo.Message{
			"ai_1_aaaa": {{Role: convo.User, Content: "what does fetch-api do?"}, {Role: convo.Assistant, Content: "It calls the NBA API."}},
			"ai_2_bbbb": {{Role: convo.User, Content: "rewrite filter"}, {Role: convo.Assistant, Content: "Done."}},
		},
	}
	m := newTestModel(t, Options{Runner: &fakeRunner{}, Threads: ts, GraphKey: "demo", NoColor: true})
	runCmd(m, press(m, "ctrl+t"))
	v := view(m)
	if !strings.Contains(v, "Fetch questions") || !strings.Contains(v, "Filter rewrite") || strings.Contains(v, "Not this graph") {
		t.Fatalf("picker list wrong:\n%s", v)
	}
	// filter as you type, preview, enter opens
	for _, r := range "fetch" {
		runCmd(m, press(m, string(r)))
	}
	v = view(m)
	if strings.Contains(v, "Filter rewrite") || !strings.Contains(v, "It calls the NBA API") {
		t.Fatalf("filter/preview wrong:\n%s", v)
	}
	runCmd(m, press(m, "enter"))
	if m.dlg != nil || m.threadID != "ai_1_aaaa" {
		t.Fatalf("enter did not open the thread (id %q)", m.threadID)
	}
	v = view(m)
	if !strings.Contains(v, "It calls the NBA API.") || !strings.Contains(v, "Fetch questions") {
		t.Errorf("opened thread not shown:\n%s", v)
	}
	// rename
	runCmd(m, press(m, "ctrl+t"))
	runCmd(m, press(m, "ctrl+r"))
	for range 20 {
		press(m, "backspace")
	}
	typeText(m, "Renamed")
	runCmd(m, press(m, "enter"))
	if ts.renamed["ai_2_bbbb"] != "Renamed" { // the newest is listed... wherever the store puts it; first row
		if ts.renamed["ai_1_aaaa"] != "Renamed" {
			t.Errorf("rename not called: %v", ts.renamed)
		}
	}
	// delete with confirmation: n cancels, y deletes
	runCmd(m, press(m, "ctrl+d"))
	runCmd(m, press(m, "n"))
	if len(ts.deleted) != 0 {
		t.Fatal("delete without confirmation")
	}
	runCmd(m, press(m, "ctrl+d"))
	runCmd(m, press(m, "y"))
	if len(ts.deleted) != 1 {
		t.Fatalf("deleted = %v", ts.deleted)
	}
	// ctrl+n starts a new thread
	runCmd(m, press(m, "ctrl+n"))
	if m.dlg != nil || m.threadID != "" || !strings.Contains(view(m), "New conversation") {
		t.Errorf("n did not start a new thread:\n%s", view(m))
	}
}

func TestContinueOpensLatestWithPendingBanner(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ts := &fakeThreads{
		threads: []convo.Thread{{ID: "old", GraphKey: "demo", Title: "Old", UpdatedAt: now.Add(-time.Hour)}, {ID: "new", GraphKey: "demo", Title: "Newest", UpdatedAt: now}},
		history: map[string][]convo.Message{"new": {{Role: convo.User, Content: "delete it"},
			{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "call_9", Name: "propose_delete_node", Arguments: `{"nodeKey":"fetch-api"}`}}}}},
		pending: map[string]*convo.Proposal{"new": sampleProposal()},
	}
	m := New(Options{Runner: &fakeRunner{}, Threads: ts, GraphKey: "demo", NoColor: true, Continue: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	for _, c := range m.Init()().(tea.BatchMsg) {
		if c != nil {
			if _, isBG := c().(tea.BackgroundColorMsg); !isBG {
				runCmd(m, c)
			}
		}
	}
	v := view(m)
	if m.threadID != "new" || !strings.Contains(v, "Newest") || !strings.Contains(v, "press ctrl+p to review") {
		t.Fatalf("--continue did not open the latest thread with its pending proposal:\n%s", v)
	}
}

func TestMentionCompletion(t *testing.T) {
	t.Parallel()
	fr := &fakeRunner{}
	m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", NoColor: true})
	m.Update(nodesLoadedMsg{nodes: []NodeRef{{Key: "fetch-api", Type: "api-call"}, {Key: "filter-games", Type: "filter"}, {Key: "root", Type: "starter"}}})
	typeText(m, "what does @fapi")
	v := view(m)
	if !strings.Contains(v, "@fetch-api") || !strings.Contains(v, "api-call") {
		t.Fatalf("completion menu missing:\n%s", v)
	}
	press(m, "tab")
	if got := m.in.value(); got != "what does @fetch-api " {
		t.Fatalf("accepted value = %q", got)
	}
	typeText(m, "do with @root?")
	press(m, "enter")
	if m.lastReq == nil || strings.Join(m.lastReq.Mentions, ",") != "fetch-api,root" {
		t.Fatalf("mentions = %+v", m.lastReq)
	}
}

func TestHistoryRecall(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	for _, q := range []string{"first", "second"} {
		startQuestion(t, m, q)
		end(m, agent.Result{}, nil)
	}
	press(m, "up")
	if m.in.value() != "second" {
		t.Fatalf("up = %q", m.in.value())
	}
	press(m, "up")
	if m.in.value() != "first" {
		t.Fatalf("up up = %q", m.in.value())
	}
	press(m, "down", "down")
	if m.in.value() != "" {
		t.Fatalf("down down = %q", m.in.value())
	}
}

func TestNewlineKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	typeText(m, "a")
	m.Update(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
	typeText(m, "b")
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	typeText(m, "c")
	if got := m.in.value(); got != "a\nb\nc" {
		t.Fatalf("value = %q", got)
	}
}

func TestNoProviderConfigured(t *testing.T) {
	t.Parallel()
	ts := &fakeThreads{threads: []convo.Thread{{ID: "t1", GraphKey: "demo", Title: "Earlier"}}}
	m := newTestModel(t, Options{GraphKey: "demo", Threads: ts, NoColor: true,
		ConfigErr:  &fault.Error{Code: fault.Config, Message: "no LLM provider configured"},
		ConfigHelp: "Set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY (or NODIUS_AI_PROVIDER and NODIUS_AI_API_KEY)."})
	v := view(m)
	if !strings.Contains(v, "DEEPSEEK_API_KEY") || !strings.Contains(v, "no provider") {
		t.Fatalf("welcome lacks the variables:\n%s", v)
	}
	startErr := func() {
		typeText(m, "hello")
		press(m, "enter")
	}
	startErr()
	if m.run != nil || !strings.Contains(view(m), "config_error") {
		t.Fatalf("sending should show the config error inline:\n%s", view(m))
	}
	runCmd(m, press(m, "ctrl+t"))
	if !strings.Contains(view(m), "Earlier") {
		t.Errorf("threads not browsable without a provider:\n%s", view(m))
	}
}

func TestResizeAndNarrowWidth(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 60, 120} {
		clk := &fakeClock{t: time.Unix(0, 0)}
		m, _ := openProposal(t, clk)
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		check := func(stage string) {
			lines := strings.Split(m.View().Content, "\n")
			if len(lines) > 24 {
				t.Errorf("w=%d %s: %d lines for 24 rows", w, stage, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Errorf("w=%d %s: line wider than the screen (%d): %q", w, stage, ansi.StringWidth(l), ansi.Strip(l))
				}
			}
		}
		check("dialog")
		clk.Advance(time.Second)
		runCmd(m, press(m, "esc"))
		check("transcript")
		press(m, "?")
		check("help")
		press(m, "x")
		runCmd(m, press(m, "ctrl+t"))
		check("picker")
	}
}

func TestScrollFollowsUnlessScrolledUp(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "many lines")
	for i := range 60 {
		feed(m, tok("paragraph "+string(rune('A'+i%26))+"\n\n"))
	}
	if !m.tr.following() {
		t.Fatal("should follow the bottom")
	}
	press(m, "pgup")
	before := view(m)
	feed(m, tok("more text arriving\n\n"))
	if after := view(m); !strings.Contains(after, strings.Split(strings.TrimSpace(before), "\n")[2]) {
		t.Errorf("view moved while scrolled up")
	}
	press(m, "end")
	if !m.tr.following() {
		t.Error("end should return to the bottom")
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.tr.following() {
		t.Error("wheel up should scroll")
	}
}

func TestControlSequencesStripped(t *testing.T) {
	t.Parallel()
	evil := "node \x1b]0;pwned\x07title \x1b[2Jcleared \x9b2J \x1bPdcs\x1b\\ ok"
	for _, noColor := range []bool{true, false} {
		clk := &fakeClock{t: time.Unix(0, 0)}
		m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: noColor, Now: clk.Now})
		startQuestion(t, m, "q "+evil)
		call := convo.ToolCall{ID: "c", Name: "read\x1b[2J", Arguments: `{"nodeKey":"` + strings.ReplaceAll(evil, "\x1b", `\u001b`) + `"}`}
		feed(m, tok(evil+"\n\n"+evil), convo.Event{Type: convo.EventToolStart, ToolCall: call},
			convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: evil},
			convo.Event{Type: convo.EventToolStart, ToolCall: convo.ToolCall{ID: "c2", Name: "search_nodes", Arguments: `{}`}},
			convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "c2", Name: "search_nodes"}, ToolErr: evil})
		p := sampleProposal()
		p.Action = datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
			NodeKey: "fetch-api", Changes: map[string]any{"process": "return 1;\n// " + evil}, Before: map[string]any{"process": evil}}}
		p.Reason = evil
		feed(m, convo.Event{Type: convo.EventProposal, Proposal: p})
		check := func(stage string) {
			c := m.View().Content
			for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\x9b", "\x07", "\x1bP"} {
				if strings.Contains(c, bad) {
					t.Errorf("noColor=%v %s: %q reached the screen", noColor, stage, bad)
				}
			}
			if noColor && strings.Contains(c, "\x1b") {
				t.Errorf("NO_COLOR output has escapes (%s): %q", stage, c)
			}
		}
		check("dialog")
		clk.Advance(time.Second)
		runCmd(m, press(m, "esc"))
		press(m, "tab")
		check("transcript")
	}
}

func TestIdleDoesNotTick(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	if m.ticking {
		t.Fatal("ticking at start")
	}
	startQuestion(t, m, "q")
	feed(m, tok("a"))
	end(m, agent.Result{}, nil)
	if _, cmd := m.Update(frameMsg{}); cmd != nil || m.ticking {
		t.Fatal("a frame after the run ended scheduled another tick")
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"}); cmd != nil {
		// typing may return a textarea command; it must not be a tick
		if _, isFrame := cmd().(frameMsg); isFrame {
			t.Fatal("typing scheduled a frame tick")
		}
	}
}

func TestErrorWithoutEvent(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	startQuestion(t, m, "q")
	end(m, agent.Result{}, errors.New("boom"))
	if !strings.Contains(view(m), "internal: boom") {
		t.Errorf("plain error not shown:\n%s", view(m))
	}
}

// TestControlSequencesStrippedFromStoreAndGraph covers the strings that do not come
// from a run: thread titles and stored messages in the picker, node keys in the @
// menu, and the graph's name in the header.
func TestControlSequencesStrippedFromStoreAndGraph(t *testing.T) {
	t.Parallel()
	evil := "x\x1b]0;pwned\x07\x1b[2J\x9b2J\x1bPdcs\x1b\\"
	ts := &fakeThreads{
		threads: []convo.Thread{{ID: "ai_1_aaaa", GraphKey: "demo", Title: "title " + evil}},
		history: map[string][]convo.Message{"ai_1_aaaa": {{Role: convo.User, Content: "question " + evil}, {Role: convo.Assistant, Content: "answer " + evil}}},
	}
	opts := Options{Runner: &fakeRunner{}, Threads: ts, GraphKey: "demo", GraphName: "graph " + evil, NoColor: true}
	m := newTestModel(t, opts)
	// two nodes: the selected menu row is drawn differently from the others
	m.Update(nodesLoadedMsg{nodes: []NodeRef{{Key: "key" + evil, Type: "type" + evil}, {Key: "kez" + evil, Type: "type" + evil}}})
	check := func(stage string, want ...string) {
		t.Helper()
		v := m.View()
		if strings.Contains(v.Content, "\x1b") || strings.Contains(v.Content, "\x9b") || strings.Contains(v.Content, "\x07") ||
			strings.Contains(v.WindowTitle, "\x1b") {
			t.Errorf("%s: a control sequence reached the screen: %q", stage, v.Content)
		}
		for _, w := range want {
			if !strings.Contains(v.Content, w) {
				t.Errorf("%s: view lacks %q:\n%s", stage, w, v.Content)
			}
		}
	}
	typeText(m, "@ke")
	check("mention menu", "@keyx", "@kezx", "typex")
	press(m, "tab")
	if strings.ContainsAny(m.in.value(), "\x1b\x07") {
		t.Errorf("accepting a mention inserted a control sequence: %q", m.in.value())
	}
	runCmd(m, press(m, "ctrl+t"))
	check("picker", "title x", "answer x")
	runCmd(m, press(m, "enter"))
	check("opened thread", "graph x", "title x", "question x", "answer x")
}

// TestInputRedrawsEveryChange checks the editor on screen after each kind of change
// (typing, sending, recalling): the editor's drawing is cached between changes.
func TestInputRedrawsEveryChange(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	m.Update(nodesLoadedMsg{nodes: []NodeRef{{Key: "fetch-api"}}})
	editor := func() string {
		var rows []string
		for _, l := range strings.Split(view(m), "\n") {
			if strings.HasPrefix(l, "┃") {
				rows = append(rows, strings.TrimSpace(strings.TrimPrefix(l, "┃")))
			}
		}
		return strings.Join(rows, "|")
	}
	if got := editor(); strings.Contains(got, "hello") {
		t.Fatalf("editor not empty at start: %q", got)
	}
	typeText(m, "hello @fe")
	if got := editor(); !strings.HasPrefix(got, "hello @fe") {
		t.Fatalf("typed text not drawn: %q", got)
	}
	press(m, "tab")
	if got := editor(); !strings.HasPrefix(got, "hello @fetch-api") {
		t.Fatalf("accepted mention not drawn: %q", got)
	}
	press(m, "enter")
	end(m, agent.Result{}, nil)
	if got := editor(); strings.Contains(got, "hello") {
		t.Fatalf("sent text still drawn in the editor: %q", got)
	}
	press(m, "up")
	if got := editor(); !strings.HasPrefix(got, "hello @fetch-api") {
		t.Fatalf("recalled question not drawn: %q", got)
	}
}

// TestStreamingAnswerPieces streams paragraphs, a fenced block holding a blank line
// and reasoning across frames: every piece is on screen once, in order, and the
// reasoning count follows the reasoning as it grows.
func TestStreamingAnswerPieces(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	startQuestion(t, m, "q")
	feed(m, convo.Event{Type: convo.EventReasoning, Text: "one two three"})
	if v := view(m); !strings.Contains(v, "thought for 3 words") {
		t.Fatalf("reasoning summary missing:\n%s", v)
	}
	feed(m, convo.Event{Type: convo.EventReasoning, Text: " four five"}, tok("alpha paragraph\n\n"))
	if v := view(m); !strings.Contains(v, "thought for 5 words") {
		t.Fatalf("reasoning summary did not follow the reasoning:\n%s", v)
	}
	feed(m, tok("```\ncode-a\n\n- code-b\n")) // not a list: still inside the fence
	feed(m, tok("```\n\nbeta "))
	feed(m, tok("paragraph\n\ngamma"))
	want := []string{"alpha paragraph", "code-a", "- code-b", "beta paragraph", "gamma"}
	check := func(stage string) {
		t.Helper()
		v := view(m)
		pos := -1
		for _, w := range want {
			if n := strings.Count(v, w); n != 1 {
				t.Errorf("%s: %q shown %d times:\n%s", stage, w, n, v)
			}
			i := strings.Index(v, w)
			if i < pos {
				t.Errorf("%s: %q out of order:\n%s", stage, w, v)
			}
			pos = i
		}
	}
	check("streaming")
	streaming := view(m)
	end(m, agent.Result{}, nil)
	check("finished")
	// the stable prefix was rendered in pieces: it must look as the whole does
	answer := func(v string) string {
		_, after, _ := strings.Cut(v, "Nodius")
		before, _, _ := strings.Cut(after, "gamma")
		lines := strings.Split(before, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ") // blank lines may or may not be padded
		}
		return strings.Join(lines, "\n")
	}
	if a, b := answer(streaming), answer(view(m)); a != b {
		t.Errorf("streamed rendering differs from the finished one:\n%s\n---\n%s", a, b)
	}
}

// Typed letters always filter the picker (a filter may start with n, r or d), the
// commands are on ctrl keys shown in its footer, and the selected row carries a
// visible marker without colour.
func TestPickerFilterAnyLetterAndMarker(t *testing.T) {
	t.Parallel()
	ts := &fakeThreads{threads: []convo.Thread{
		{ID: "ai_1_aaaa", GraphKey: "demo", Title: "stalled runend", UpdatedAt: time.Now()},
		{ID: "ai_2_bbbb", GraphKey: "demo", Title: "render the table", UpdatedAt: time.Now()},
		{ID: "ai_3_cccc", GraphKey: "demo", Title: "delete old nodes", UpdatedAt: time.Now()},
		{ID: "ai_4_dddd", GraphKey: "demo", Title: "new sheet", UpdatedAt: time.Now()},
	}}
	m := newTestModel(t, Options{Runner: &fakeRunner{}, Threads: ts, GraphKey: "demo", NoColor: true})
	runCmd(m, press(m, "ctrl+t"))
	v := view(m)
	for _, hint := range []string{"ctrl+n new", "ctrl+r rename", "ctrl+d delete"} {
		if !strings.Contains(v, hint) {
			t.Errorf("footer lacks %q:\n%s", hint, v)
		}
	}
	if !strings.Contains(v, "▸ ") {
		t.Errorf("no visible marker on the selected row with NO_COLOR:\n%s", v)
	}
	for _, filter := range []string{"rend", "delete", "new"} {
		for _, r := range filter {
			runCmd(m, press(m, string(r)))
		}
		if p, ok := m.dlg.(*picker); !ok || p.mode != pmList || p.filter != filter {
			t.Fatalf("typing %q: dialog %T, filter %q", filter, m.dlg, p.filter)
		}
		if n := len(m.dlg.(*picker).visible()); n != 1 {
			t.Errorf("filter %q shows %d threads", filter, n)
		}
		press(m, "esc") // clears the filter
	}
	if len(ts.deleted) != 0 || len(ts.renamed) != 0 || m.dlg == nil {
		t.Errorf("typing letters ran a command: deleted %v renamed %v", ts.deleted, ts.renamed)
	}
}

// A run whose last message is empty (an "answer now" left blank) says so.
func TestEmptyAnswerIsSaid(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, Options{Runner: &fakeRunner{}, GraphKey: "demo", Dark: true})
	startQuestion(t, m, "answer now")
	feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, convo.Event{Type: convo.EventComplete, ThreadID: "t1", Text: " "})
	end(m, agent.Result{ThreadID: "t1"}, nil)
	if v := view(m); !strings.Contains(strings.Join(strings.Fields(v), " "), "ended without an answer") {
		t.Errorf("an empty answer is not said:\n%s", v)
	}
}
