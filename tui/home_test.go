package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// The empty editor's hint says what can be asked: about the graph on a graph, about
// the user's graphs in home mode (no graph open), at every width.
func TestPlaceholderSaysHomeMode(t *testing.T) {
	for _, tc := range []struct {
		graph, want, not string
		width            int
	}{
		{"demo", "Ask about the graph…  (@ to mention a node)", "your graphs", 80},
		{"demo", "Ask about the graph…", "your graphs", 44},
		{"home", "Ask about your graphs, or for a new one…", "Ask about the graph", 80},
		{"home", "Ask about your graphs…", "Ask about the graph", 44},
	} {
		opts := testOptions()
		opts.GraphKey = tc.graph
		m := newTestModel(t, opts)
		m.Update(tea.WindowSizeMsg{Width: tc.width, Height: 30})
		v := view(m)
		if !strings.Contains(v, tc.want) || strings.Contains(v, tc.not) {
			t.Errorf("%s at %d columns: want %q, not %q:\n%s", tc.graph, tc.width, tc.want, tc.not, v)
		}
	}
}

// A new conversation in home mode suggests questions about the user's graphs, not
// about one graph's nodes.
func TestWelcomeSaysHomeMode(t *testing.T) {
	opts := testOptions()
	opts.GraphKey = "home"
	v := view(newTestModel(t, opts))
	if !strings.Contains(v, "no graph open") || !strings.Contains(v, "Create a new graph") || strings.Contains(v, "Type @ to mention") {
		t.Errorf("home welcome:\n%s", v)
	}
	v = view(newTestModel(t, testOptions()))
	if !strings.Contains(v, "Ask anything about the graph") {
		t.Errorf("graph welcome:\n%s", v)
	}
}

// An outcome the server's assistant reports only in its result (no tool result
// event carries the proposal) still says the note recorded with it: the key of the
// graph it created.
func TestRemoteOutcomeSaysItsNote(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, fr := openProposal(t, clk)
	clk.Advance(time.Second)
	fr.resume = func(_ context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
		p := sampleProposal()
		p.Decision, p.Outcome = convo.Approved, convo.Applied
		g := datasource.CreatedGraph{Key: "5b1e0c7a9f21", Name: "Invoices", Type: "graph", Open: "--graph 5b1e0c7a9f21"}
		p.Result = &datasource.ApplyResult{Applied: true, Graph: &g, Note: g.Sentence()}
		emit(tok("Created."))
		return agent.Result{ThreadID: "t1", Text: "Created.", Decided: p}, nil
	}
	pumpRun(m, press(m, "a"))
	if v := view(m); !strings.Contains(v, "open it with --graph 5b1e0c7a9f21") {
		t.Errorf("the outcome does not say the created key:\n%s", v)
	}
}

// The dialog's header says where the change goes: into the graph's source for a
// change to it, but a proposed new graph is a new file next to a graph file (or a
// new graph beside the others on a server), never "into" the open graph.
func TestDialogHeaderSaysWhereANewGraphGoes(t *testing.T) {
	for _, tc := range []struct {
		source string
		create bool
		want   string
		not    string
	}{
		{"file:/tmp/team/graph.json", false, "into file:/tmp/team/graph.json", "new file"},
		{"file:/tmp/team/graph.json", true, "a new file next to file:/tmp/team/graph.json", "into file:"},
		{"server:https://nodius.example", true, "a new graph on server:https://nodius.example", "into server:"},
	} {
		clk := &fakeClock{t: time.Unix(1000, 0)}
		fr := &fakeRunner{}
		m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", Source: tc.source, NoColor: true, Now: clk.Now})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
		p := sampleProposal()
		if tc.create {
			p.Tool = "create_graph"
			p.Action = datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}
		}
		startQuestion(t, m, "make it")
		feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, convo.Event{Type: convo.EventProposal, Proposal: p})
		end(m, agent.Result{ThreadID: "t1", Proposal: p}, nil)
		if m.dlg == nil {
			t.Fatal("dialog did not open on the proposal")
		}
		if v := view(m); !strings.Contains(v, tc.want) || strings.Contains(v, tc.not) {
			t.Errorf("create=%v on %s: want %q, not %q:\n%s", tc.create, tc.source, tc.want, tc.not, v)
		}
	}
}

// A notice the source gives while the screen is up (a graph file parsed on first
// use) is said in the transcript, stripped of control sequences.
func TestNoteMsgIsShown(t *testing.T) {
	m := newTestModel(t, testOptions())
	m.Update(NoteMsg{Text: "node types \"api-call\" have no config here\x1b[2J"})
	if v := view(m); !strings.Contains(v, `node types "api-call" have no config here`) || strings.Contains(v, "\x1b[2J") {
		t.Errorf("the note is not shown:\n%s", v)
	}
}
