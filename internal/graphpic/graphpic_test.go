package graphpic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/goldentest"
	"github.com/nodius/nodius-ai/internal/graphdraw"
)

func demoStore(t testing.TB) *memgraph.Store {
	t.Helper()
	snap, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkWidth(t *testing.T, name, s string, width int) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if width > 0 && len([]rune(line)) > width {
			t.Errorf("%s: line %d is %d wide, more than %d: %q", name, i+1, len([]rune(line)), width, line)
		}
	}
}

func TestDemoGolden(t *testing.T) {
	ctx := context.Background()
	src := demoStore(t)
	sheets, err := Sheets(ctx, src, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(sheets) != 2 || sheets[0].Name != "main" || len(sheets[0].Graph.Nodes) != 7 {
		t.Fatalf("sheets: %+v", sheets)
	}
	around, err := Around(ctx, src, "demo", "fetch-api", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{0, 100, 80, 60, 40} {
		for _, ascii := range []bool{false, true} {
			opts := graphdraw.Options{Width: width, ASCII: ascii}
			suffix := fmt.Sprintf("-w%d", width)
			if ascii {
				suffix += "-ascii"
			}
			main := graphdraw.Draw(sheets[0].Graph, opts)
			checkWidth(t, "main"+suffix, main, width)
			goldentest.Check(t, "demo-main"+suffix, main)
			pic := graphdraw.Draw(around, opts)
			checkWidth(t, "around"+suffix, pic, width)
			goldentest.Check(t, "demo-around-fetch-api"+suffix, pic)
		}
	}
}

func TestAround(t *testing.T) {
	ctx := context.Background()
	src := demoStore(t)
	g, err := Around(ctx, src, "demo", "filter-active", 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, n := range g.Nodes {
		keys = append(keys, n.Key)
		if n.Focus != (n.Key == "filter-active") {
			t.Errorf("focus on %s is %v", n.Key, n.Focus)
		}
	}
	if got := strings.Join(keys, ","); got != "filter-active,display-html,fetch-api" {
		t.Errorf("nodes %s", got)
	}
	// Every edge between two drawn nodes is drawn, rim to rim included.
	g, _ = Around(ctx, src, "demo", "fetch-api", 2)
	if len(g.Edges) != 5 {
		t.Errorf("depth 2 around fetch-api: %d edges, want 5: %+v", len(g.Edges), g.Edges)
	}
	if _, err := Around(ctx, src, "demo", "nope", 1); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := Around(ctx, src, "demo", "root", MaxDepth+1); err == nil {
		t.Error("depth beyond MaxDepth accepted")
	}
}

func action(t *testing.T, js string) datasource.Action {
	t.Helper()
	var a datasource.Action
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProposedChange draws each kind of action on the demo graph; the goldens
// show what a person approving it sees.
func TestProposedChange(t *testing.T) {
	cases := []struct{ name, action, mustHave string }{
		{"create-node-and-edge", `{"type":"batch","payload":{"actions":[
			{"type":"create_node","payload":{"nodeKey":"sort-players","typeKey":"transform","sheet":"0","posX":1000,"posY":0,"data":{"label":"sort by pts"}}},
			{"type":"delete_edge","payload":{"edgeKey":"e5"}},
			{"type":"create_edge","payload":{"sourceKey":"filter-active","sourceHandle":"0","targetKey":"sort-players","targetHandle":"0","sheet":"0"}},
			{"type":"create_edge","payload":{"sourceKey":"sort-players","sourceHandle":"0","targetKey":"display-html","targetHandle":"1","sheet":"0"}}]}}`, "+ sort-players"},
		{"delete-node", `{"type":"delete_node","payload":{"nodeKey":"filter-active"}}`, "− filter-active"},
		{"update-node", `{"type":"update_node","payload":{"nodeKey":"fetch-api","changes":{"data.retries":5}}}`, "~ fetch-api"},
		{"lone-node", `{"type":"create_node","payload":{"nodeKey":"audit","typeKey":"log-node","sheet":"0","posX":920,"posY":200}}`, "+ audit"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := demoStore(t)
			c, err := ProposedChange(ctx, src, "demo", action(t, tc.action), 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, width := range []int{0, 80, 50} {
				opts := graphdraw.Options{Width: width}
				uni := c.Draw(Unified, opts)
				checkWidth(t, tc.name, uni, width)
				if width == 0 && !strings.Contains(uni, tc.mustHave) {
					t.Errorf("unified picture lacks %q:\n%s", tc.mustHave, uni)
				}
				goldentest.Check(t, fmt.Sprintf("change-%s-w%d", tc.name, width), uni)
			}
			goldentest.Check(t, "change-"+tc.name+"-before-after", c.Draw(BeforeAfter, graphdraw.Options{}))
			// The source itself is untouched.
			if n, _ := src.Nodes(ctx, "demo", ""); len(n) != 9 {
				t.Errorf("the source changed: %d nodes", len(n))
			}
		})
	}
}

func TestProposedChangeThatCannotApply(t *testing.T) {
	src := demoStore(t)
	_, err := ProposedChange(context.Background(), src, "demo", action(t, `{"type":"delete_node","payload":{"nodeKey":"ghost"}}`), 1)
	if err == nil || !strings.Contains(err.Error(), "cannot be applied") {
		t.Fatalf("err = %v", err)
	}
}

// TestApplied pictures a change after it was applied, and says when the graph
// does not show it.
func TestApplied(t *testing.T) {
	ctx := context.Background()
	a := action(t, `{"type":"batch","payload":{"actions":[
		{"type":"create_node","payload":{"nodeKey":"audit","typeKey":"log-node","sheet":"0","posX":0,"posY":0}},
		{"type":"create_edge","payload":{"edgeKey":"e9","sourceKey":"fetch-api","sourceHandle":"0","targetKey":"audit","targetHandle":"0","sheet":"0"}},
		{"type":"delete_node","payload":{"nodeKey":"error-handler"}}]}}`)
	src := demoStore(t)
	res, err := src.ApplyAction(ctx, "demo", a)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := Applied(ctx, src, "demo", a, res.Created, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ap.Unseen {
		t.Error("an applied change reported as not shown")
	}
	if got := strings.Join(ap.Removed, ","); got != "node error-handler" {
		t.Errorf("removed %q", got)
	}
	pic := graphdraw.Draw(ap.Graph, graphdraw.Options{})
	for _, want := range []string{"+ audit", "─+──", "fetch-api"} {
		if !strings.Contains(pic, want) {
			t.Errorf("picture lacks %q:\n%s", want, pic)
		}
	}
	if strings.Contains(pic, "error-handler") {
		t.Errorf("a deleted node is drawn:\n%s", pic)
	}
	// Against a graph the change never reached.
	ap, err = Applied(ctx, demoStore(t), "demo", a, res.Created, 1)
	if err != nil || !ap.Unseen {
		t.Errorf("unapplied change: unseen=%v err=%v", ap.Unseen, err)
	}
}
