package agent

import (
	"fmt"
	"slices"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/datasource"
)

// sendHome asks a question in home mode (graph key "home", no graph open): no
// retrieval, the home prompt once, and the home tools (list the user's graphs,
// propose a new one).
func (r *run) sendHome(text string) (Result, error) {
	if len(r.history) == 0 {
		if err := r.append(&convo.Message{Role: convo.System, Kind: convo.KindPrompt, Content: prompt.HomePrompt(r.a.opt.Role), Status: convo.Complete}); err != nil {
			return r.fail(err)
		}
	}
	if err := r.append(&convo.Message{Role: convo.User, Content: text, Status: convo.Complete}); err != nil {
		return r.fail(err)
	}
	return r.loop()
}

// ToolsFor is Tools for an outside client working on graphKey: home mode's tools
// (list the graphs, propose a new one) for "home", the graph tools otherwise.
func (a *Agent) ToolsFor(graphKey string) []convo.ToolDef {
	if tools.IsHome(graphKey) {
		return slices.Clone(a.homeDefs)
	}
	return a.Tools()
}

// cannotCreate is the reason an approved create_graph is recorded as not applied,
// in words for the person who approved it; "" for any other proposal, and for a
// source that makes graphs (datasource.GraphCreator: the demo, file:, ArangoDB).
func (r *run) cannotCreate(p *convo.Proposal) string {
	if p.Action.Type != datasource.CreateGraphAction || p.Action.CreateGraph == nil {
		return ""
	}
	what := "graph"
	if p.Action.CreateGraph.Type == "htmlClass" {
		what = "HTML class"
	}
	src := "this source"
	if d, ok := r.a.opt.Source.(datasource.Describer); ok {
		src = "the source " + d.Describe()
	}
	if gc, ok := r.a.opt.Source.(datasource.GraphCreator); ok {
		err := gc.CanCreateGraph(r.ctx)
		if err == nil {
			return ""
		}
		return fmt.Sprintf("%s cannot create a %s now, so %q was not created: %v", src, what, p.Action.CreateGraph.Name, err)
	}
	return fmt.Sprintf("%s cannot create a %s, so %q was not created — create it in the Nodius web client", src, what, p.Action.CreateGraph.Name)
}
