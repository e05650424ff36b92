package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Threads driven from outside: an agent other than ours (an MCP client) reads the
// graph with the same tools and proposes changes with the same propose_* tools. Its
// proposals are kept in a thread of their own, validated, policed and applied exactly
// as a model's would be, and decided by a person the same way (nodius-ai approve, the
// TUI). No model of ours takes part: after a decision the run ends instead of calling
// one.

// Tools returns the tools this agent offers: the read tools, and for an editor or an
// admin the write tools the policy does not deny. An outside client is offered the
// same list, with the same schemas.
func (a *Agent) Tools() []convo.ToolDef { return slices.Clone(a.defs) }

// ExternalThread starts a thread for an outside client on graphKey. client is the
// client's name as it gave it (recorded as the thread's model); title names the
// thread in lists.
func (a *Agent) ExternalThread(ctx context.Context, graphKey, client, title string) (convo.Thread, error) {
	if graphKey == "" {
		return convo.Thread{}, &fault.Error{Code: fault.Config, Message: "no graph given — pass --graph KEY"}
	}
	if _, err := a.opt.Source.Graph(ctx, graphKey); err != nil && !tools.IsHome(graphKey) {
		return convo.Thread{}, err // home mode opens no graph
	}
	now := a.opt.Now()
	return a.opt.Store.CreateThread(ctx, convo.Thread{
		GraphKey: graphKey, Workspace: a.opt.Workspace, UserID: a.opt.UserID,
		Title: title, Provider: convo.ProviderMCP, Model: client, Source: a.opt.SourceSpec,
		Status: convo.Active, CreatedAt: now, UpdatedAt: now,
	})
}

// ProposeResult is how an outside client's proposal ended: exactly one of Pending,
// Decided or Refused is set.
type ProposeResult struct {
	ThreadID string
	CallID   string
	// Pending is the proposal now waiting for a person's decision.
	Pending *convo.Proposal
	// Decided is the tool result of a proposal the policy approved at once (auto),
	// as a model would read it: {"status":"approved","created":...}. DecidedErr is
	// set when applying it failed.
	Decided    string
	DecidedErr string
	// Refused says why the call was not accepted (bad arguments, an unknown node, a
	// type the policy denies), in a sentence the client can act on. It is recorded in
	// the thread as the call's error result, as it would be for a model.
	Refused string
}

// callSeq tells apart the call ids made within one nanosecond.
var callSeq atomic.Uint64

// Propose records call, a propose_* call an outside client made on an external
// thread, as the model's call would be: the assistant message carrying it, then the
// strict validation against the graph and the approval policy. An invalid call is
// refused with a sentence; a call the policy auto-approves is applied at once through
// the same path as an approval; any other becomes the thread's pending proposal,
// decided later with Resume. A thread may hold one pending proposal at a time.
func (a *Agent) Propose(ctx context.Context, threadID string, call convo.ToolCall) (ProposeResult, error) {
	th, err := a.opt.Store.Thread(ctx, threadID)
	if err != nil {
		return ProposeResult{}, err
	}
	if th.Provider != convo.ProviderMCP {
		return ProposeResult{}, &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s is a conversation with the assistant, not an outside client's thread", th.ID)}
	}
	if !tools.IsWriteTool(call.Name) {
		return ProposeResult{}, &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf("%q is not a propose_* tool", call.Name)}
	}
	if p, err := a.opt.Store.PendingProposal(ctx, th.ID); err != nil {
		return ProposeResult{}, err
	} else if p != nil {
		return ProposeResult{}, &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
			"thread %s already has a proposal waiting for a decision (%s); it must be approved or rejected before the next one — or put several changes in one propose_batch",
			th.ID, p.Tool)}
	}
	if call.ID == "" {
		call.ID = fmt.Sprintf("mcp_%d_%d", time.Now().UnixNano(), callSeq.Add(1))
	}
	out := ProposeResult{ThreadID: th.ID, CallID: call.ID}
	emit := func(e convo.Event) {
		if e.Type == convo.EventToolResult && e.ToolCall.ID == call.ID {
			out.Decided, out.DecidedErr = e.Result, e.ToolErr
		}
	}
	r := &run{a: a, ctx: ctx, th: th, emit: emit}
	if err := r.append(&convo.Message{Role: convo.Assistant, ToolCalls: []convo.ToolCall{call},
		Status: convo.Complete, Model: th.Model}); err != nil {
		return out, err
	}
	stop, err := r.propose(call)
	if err != nil {
		return out, err
	}
	if stop {
		out.Pending, out.Decided, out.DecidedErr = r.result.Proposal, "", ""
		return out, nil
	}
	if isRefusal(out.Decided) {
		out.Refused, out.Decided, out.DecidedErr = out.DecidedErr, "", ""
	}
	return out, nil
}

// isRefusal tells a refused call's error result ({"error": ...}) from a decision's.
func isRefusal(result string) bool { return strings.HasPrefix(result, `{"error":`) }

// endExternal ends a Resume on an outside client's thread: no model of ours continues
// it, so the run's answer says what the decision did.
func (r *run) endExternal(p *convo.Proposal) (Result, error) {
	var text string
	switch p.State() {
	case "rejected":
		text = fmt.Sprintf("Rejected the %s proposal of %s; nothing was changed.", p.Tool, r.th.Model)
	case "applied":
		text = fmt.Sprintf("Approved and applied the %s proposal of %s to graph %s%s.", p.Tool, r.th.Model, r.th.GraphKey, createdText(p))
		if p.Result != nil && p.Result.Graph != nil {
			// Home mode: a new graph, said with where it is and how to open it.
			text = fmt.Sprintf("Approved and applied the %s proposal of %s: %s.", p.Tool, r.th.Model, p.Result.Graph.Sentence())
		} else if p.Result != nil && p.Result.Note != "" {
			text += " " + p.Result.Note
		}
	default:
		text = fmt.Sprintf("Approved the %s proposal of %s, but it was not applied to graph %s.", p.Tool, r.th.Model, r.th.GraphKey)
	}
	text += "\n"
	r.result.ThreadID = r.th.ID
	r.result.Text = text
	r.emit(convo.Event{Type: convo.EventToken, Text: text})
	r.emit(convo.Event{Type: convo.EventComplete, ThreadID: r.th.ID, Text: text})
	return r.result, nil
}

func createdText(p *convo.Proposal) string {
	if p.Result == nil {
		return ""
	}
	c := p.Result.Created
	var parts []string
	if len(c.Nodes) > 0 {
		parts = append(parts, "created node "+strings.Join(c.Nodes, ", "))
	}
	if len(c.Edges) > 0 {
		parts = append(parts, "created edge "+strings.Join(c.Edges, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
