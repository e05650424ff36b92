package tui

import (
	"context"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/datasource/gen"
)

// referenceFind is completion's ranking done the plain way: score every node,
// sort them all.
func referenceFind(nodes []NodeRef, q string, limit int) []NodeRef {
	type scored struct {
		n NodeRef
		s int
	}
	q = strings.ToLower(q)
	var hits []scored
	for _, n := range nodes {
		s, ok := fuzzyScore(strings.ToLower(n.Key), q)
		if !ok {
			s2, ok2 := fuzzyScore(strings.ToLower(n.Type), q)
			if !ok2 {
				continue
			}
			s = s2 - 50
		}
		hits = append(hits, scored{n, s})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].s != hits[j].s {
			return hits[i].s > hits[j].s
		}
		return hits[i].n.Key < hits[j].n.Key
	})
	out := []NodeRef{}
	for i := 0; i < len(hits) && i < limit; i++ {
		out = append(out, hits[i].n)
	}
	return out
}

func genRefs(n int) []NodeRef {
	s := gen.Graph(1, n, 0)
	refs := make([]NodeRef, len(s.Nodes))
	for i, nd := range s.Nodes {
		refs[i] = NodeRef{Key: nd.Key, Type: nd.Type}
	}
	return refs
}

// Typing and erasing, the narrowed search ranks as scoring every node would.
func TestCompletionRanksAsAFullScan(t *testing.T) {
	t.Parallel()
	refs := genRefs(3000)
	c := newCompletion(refs)
	r := rand.New(rand.NewSource(7))
	letters := "abcdefghijklmnopqrstuvwxyz-0123456789"
	for round := 0; round < 40; round++ {
		q := ""
		for step := 0; step < 12; step++ {
			if len(q) > 0 && r.Intn(4) == 0 {
				q = q[:len(q)-1] // backspace
			} else if r.Intn(3) == 0 {
				k := refs[r.Intn(len(refs))].Key // something that matches
				q += string(k[min(len(q), len(k)-1)])
			} else {
				q += string(letters[r.Intn(len(letters))])
			}
			got, want := c.find(q, 6), referenceFind(refs, q, 6)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: %v, want %v", q, got, want)
			}
		}
	}
}

// blockingNodes answers NodeRefs when released, as a large graph does when loaded.
type blockingNodes struct {
	release chan struct{}
	refs    []NodeRef
}

func (b blockingNodes) NodeRefs(ctx context.Context, _ string) ([]NodeRef, error) {
	select {
	case <-b.release:
		return b.refs, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// While the graph loads, the status bar says so and the editor takes keys; once
// loaded, @ completion works.
func TestGraphLoadsWhileTyping(t *testing.T) {
	t.Parallel()
	nodes := blockingNodes{release: make(chan struct{}), refs: []NodeRef{{Key: "fetch-api", Type: "api-call"}, {Key: "root", Type: "starter"}}}
	m := New(Options{Runner: &fakeRunner{}, GraphKey: "big", Nodes: nodes, NoColor: true})
	msgs := make(chan tea.Msg, 8)
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		if batch, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range batch {
				go func() { msgs <- c() }()
			}
		}
	}
	run(m.Init())
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if v := view(m); !strings.Contains(v, "loading graph big…") {
		t.Fatalf("no loading line:\n%s", v)
	}
	m.Update(LoadingMsg{Stage: "indexing 100000 nodes"})
	typeText(m, "what does @fe")
	v := view(m)
	if !strings.Contains(v, "indexing 100000 nodes…") || m.in.value() != "what does @fe" {
		t.Fatalf("typing during the load: input %q\n%s", m.in.value(), v)
	}
	// A question sent now waits for the graph: the status bar says what on.
	m.st.busy = true
	m.st.setState(phaseRetrieving, time.Now())
	if v := view(m); !strings.Contains(v, "indexing 100000 nodes… · retrieving") {
		t.Fatalf("a question waiting for the load does not say so:\n%s", v)
	}
	m.st.busy = false
	m.st.setState(phaseIdle, time.Now())
	close(nodes.release)
	deadline := time.After(10 * time.Second)
	for m.in.nodes.len() == 0 {
		select {
		case msg := <-msgs:
			if _, ok := msg.(nodesLoadedMsg); ok {
				m.Update(msg)
			}
		case <-deadline:
			t.Fatal("the nodes never arrived")
		}
	}
	if v := view(m); !strings.Contains(v, "@fetch-api") {
		t.Fatalf("the mention typed during the load has no menu once loaded:\n%s", v)
	}
	typeText(m, "t")
	if v := view(m); strings.Contains(v, "indexing") || strings.Contains(v, "loading graph") || !strings.Contains(v, "@fetch-api") {
		t.Fatalf("after the load: loading line kept or no completion:\n%s", v)
	}
	m.Update(LoadingMsg{Stage: "late report"}) // a report after the load changes nothing
	if strings.Contains(view(m), "late report") {
		t.Fatal("a progress report after the load was shown")
	}
}

// A {{node:K}} tag names the node's type by its config's display name when the
// lister has it (as ask and the web client do), else by its type key; the open
// graph's tag names it.
func TestTagsNameTheNodeType(t *testing.T) {
	t.Parallel()
	nodes := blockingNodes{release: make(chan struct{}), refs: []NodeRef{
		{Key: "fetch-api", Type: "api-call", TypeName: "API Call"}, {Key: "root", Type: "starter"}}}
	close(nodes.release)
	m := New(Options{Runner: &fakeRunner{}, GraphKey: "demo", GraphName: "NBA Stats", Nodes: nodes, NoColor: true})
	loaded := false
	for _, c := range m.Init()().(tea.BatchMsg) {
		if c == nil {
			continue
		}
		if msg, ok := c().(nodesLoadedMsg); ok {
			m.Update(msg)
			loaded = true
		}
	}
	if !loaded {
		t.Fatal("Init did not load the nodes")
	}
	out := m.lk.md.Render("{{node:fetch-api}} then {{node:root}} in {{graph:demo}}", 80)
	if !strings.Contains(out, "API Call") || strings.Contains(out, "api-call") || !strings.Contains(out, "starter") ||
		!strings.Contains(out, "NBA Stats") {
		t.Fatalf("rendered %q", out)
	}
}
