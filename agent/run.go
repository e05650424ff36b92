package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

// streamSaveEvery bounds how often partial assistant text is written while streaming:
// a crash loses at most this much of the answer in flight.
const streamSaveEvery = 250 * time.Millisecond

// run is the state of one Send or Resume: the thread, its history as sent to the
// model, and what the run has produced so far.
type run struct {
	a       *Agent
	ctx     context.Context
	th      convo.Thread
	emit    func(convo.Event)
	history []convo.Message
	result  Result
	tracker *llm.Tracker // tokens and cost of the thread, against the limits
	// fresh: the thread was created by this Send and holds no answer yet. A run that
	// fails then deletes it (the question with it), leaving no thread behind that
	// holds nothing but a question nobody answered.
	fresh bool
	// landed: proposals reconcile found applied by a process that died before
	// recording them, recorded by this run.
	landed []convo.Proposal
	// roundsUsed counts the tool rounds of the turn so far; extended: the person
	// chose to continue at the limit, so the turn may go on to MaxExtendedRounds and
	// then must answer; summary: the person asked for the answer now.
	roundsUsed int
	extended   bool
	summary    bool
}

// fail reports err as an error event and returns it.
func (r *run) fail(err error) (Result, error) {
	r.result.ThreadID = r.th.ID
	if r.fresh {
		r.fresh = false
		if derr := r.a.opt.Store.Delete(context.WithoutCancel(r.ctx), r.th.ID); derr != nil {
			r.a.log.Warn("could not delete the unanswered thread of a failed run", "thread", r.th.ID, "error", derr.Error())
		} else {
			r.result.ThreadID = "" // nothing is kept
		}
	}
	ce := classify(r.ctx, err)
	r.a.log.Warn("run failed", "thread", r.th.ID, "code", string(ce.Code), "error", err.Error())
	r.emit(convo.Event{Type: convo.EventError, Err: ce})
	return r.result, ce
}

// loadHistory reads the repaired history. With persistRepairs, the synthetic results
// the store made up for tool calls left unanswered (a crash, a stop) are written, so
// the thread stays valid for every provider from now on.
func (r *run) loadHistory(persistRepairs bool) error {
	h, err := r.a.opt.Store.History(r.ctx, r.th.ID)
	if err != nil {
		return err
	}
	if persistRepairs {
		for i := range h {
			m := &h[i]
			if m.Role == convo.Tool && m.ID == 0 {
				run := convo.ToolRun{ThreadID: r.th.ID, ToolCallID: m.ToolCallID, Name: m.Name, Status: convo.RunError,
					Result: m.Content, Error: "interrupted", FinishedAt: r.a.opt.Now()}
				if err := r.a.opt.Store.SaveToolResult(r.ctx, m, run); err != nil {
					return err
				}
			}
		}
	}
	r.history = h
	return nil
}

// append persists m (one transaction) and adds it to the history.
func (r *run) append(m *convo.Message) error {
	m.ThreadID = r.th.ID
	if m.CreatedAt.IsZero() {
		m.CreatedAt = r.a.opt.Now()
	}
	if err := r.a.opt.Store.SaveMessage(r.ctx, m); err != nil {
		return err
	}
	r.history = append(r.history, *m)
	return nil
}

// loop is the tool loop: stream a call; no tool calls ends the run; read tools run at
// once; a proposal stops it. After MaxToolRounds rounds with tools the person
// chooses, as on the Nodius server: the run stops with Result.ToolLimit, and
// Resume continues it (up to MaxExtendedRounds) or asks for the answer now. At the
// extended limit, or when asked for the answer, one last call is made without tools
// so the model has to answer.
func (r *run) loop() (Result, error) {
	r.result.ThreadID = r.th.ID
	defs := r.a.defs
	if tools.IsHome(r.th.GraphKey) {
		defs = r.a.homeDefs
	}
	for {
		limit := r.a.opt.MaxToolRounds
		if r.extended {
			limit = r.a.opt.MaxExtendedRounds
		}
		withTools := r.roundsUsed < limit && len(defs) > 0 && !r.summary
		if !withTools && len(defs) > 0 && !r.extended && !r.summary {
			tl := &convo.ToolLimit{RoundsUsed: r.roundsUsed, MaxExtended: r.a.opt.MaxExtendedRounds}
			r.result.ToolLimit = tl
			r.emit(convo.Event{Type: convo.EventToolLimit, ToolLimit: tl})
			return r.result, nil
		}
		var offered []convo.ToolDef
		if withTools {
			offered = defs
		}
		msg, err := r.call(offered)
		if err != nil {
			return r.fail(err)
		}
		if len(msg.ToolCalls) == 0 {
			r.result.Text = msg.Content
			r.emit(convo.Event{Type: convo.EventComplete, ThreadID: r.th.ID, Text: msg.Content})
			return r.result, nil
		}
		r.roundsUsed++
		stop, err := r.runToolCalls(msg.ToolCalls)
		if err != nil || stop {
			return r.result, err
		}
	}
}

// atToolLimit reports whether the thread stopped at the tool-round limit and waits
// for the person's choice: no proposal waits, the history ends on the results of
// read tools, and the turn since the last question used at least MaxToolRounds
// rounds. It returns the rounds used, and leaves the history it read in r.history
// for resumeToolLimit.
func (r *run) atToolLimit() (int, bool, error) {
	if p, err := r.a.opt.Store.PendingProposal(r.ctx, r.th.ID); err != nil || p != nil {
		return 0, false, err
	}
	if err := r.loadHistory(false); err != nil {
		return 0, false, err
	}
	h := r.history
	if len(h) == 0 || h[len(h)-1].Role != convo.Tool {
		return 0, false, nil
	}
	rounds := 0
	for i := len(h) - 1; i >= 0 && h[i].Role != convo.User; i-- {
		if h[i].Role != convo.Assistant || len(h[i].ToolCalls) == 0 {
			continue
		}
		for _, c := range h[i].ToolCalls {
			if strings.HasPrefix(c.Name, "propose_") {
				return 0, false, nil // a decided proposal, not the limit
			}
		}
		rounds++
	}
	return rounds, rounds >= r.a.opt.MaxToolRounds, nil
}

// resumeToolLimit gives the person's choice at the tool-round limit: more rounds
// (up to MaxExtendedRounds in all), or the answer now, without tools. The history
// is the one atToolLimit read.
func (r *run) resumeToolLimit(rounds int, more bool) (Result, error) {
	if r.a.opt.Provider == nil {
		return r.fail(r.a.noProvider())
	}
	r.roundsUsed, r.extended, r.summary = rounds, more, !more
	r.a.log.Info("tool limit decided", "thread", r.th.ID, "continue", more, "rounds", rounds)
	return r.loop()
}

// usage is the run's tracker of the thread's tokens and cost, made on first use
// from what the thread has spent so far.
func (r *run) usage() *llm.Tracker {
	if r.tracker == nil {
		r.tracker = llm.NewTracker(r.a.opt.Pricing, r.a.opt.Limits, r.th.Usage)
	}
	return r.tracker
}

// checkBudget refuses a call once the thread is over one of its limits.
func (r *run) checkBudget() error { return r.usage().Check() }

// call streams one LLM call and commits the assistant message it produced.
func (r *run) call(tools []convo.ToolDef) (*convo.Message, error) {
	if err := r.checkBudget(); err != nil {
		return nil, err
	}
	msgs := fitHistory(r.history, r.a.opt.ContextWindow, tools)
	if lim := r.a.opt.Limits.MaxRequestBytes; requestBytes(msgs, tools) > lim {
		return nil, fault.Limit("the request to the model", "max_request_bytes", lim)
	}
	req := llm.Request{Messages: msgs, Tools: tools, MaxTokens: r.a.opt.MaxTokens}
	if lim := r.a.opt.Limits.MaxTokensPerCall; lim > 0 {
		est := estimateMessages(msgs) + estimateTools(tools)
		if est >= lim {
			return nil, &fault.Error{Code: fault.BudgetExceeded, Message: fmt.Sprintf(
				"this call needs about %d prompt tokens, over the limit of %d tokens per call — raise max_tokens_per_call or start a new thread", est, lim)}
		}
		if rest := lim - est; req.MaxTokens == 0 || req.MaxTokens > rest {
			req.MaxTokens = rest
		}
	}

	r.emit(convo.Event{Type: convo.EventStatus, State: convo.StateWaiting})
	partial := &convo.Message{ThreadID: r.th.ID, Role: convo.Assistant, Status: convo.Streaming, Model: r.a.opt.Provider.Model()}
	var text strings.Builder
	var saveErr error
	lastSave := time.Time{}
	streaming := false
	onDelta := func(d llm.Delta) {
		switch d.Kind {
		case llm.DeltaText:
			if !streaming {
				streaming = true
				r.emit(convo.Event{Type: convo.EventStatus, State: convo.StateStreaming})
			}
			text.WriteString(d.Text)
			r.emit(convo.Event{Type: convo.EventToken, Text: d.Text})
			if now := time.Now(); now.Sub(lastSave) >= streamSaveEvery && saveErr == nil {
				lastSave = now
				partial.Content = text.String()
				if partial.CreatedAt.IsZero() {
					partial.CreatedAt = r.a.opt.Now()
				}
				saveErr = r.a.opt.Store.SaveMessage(r.ctx, partial)
				if saveErr == nil {
					r.fresh = false // an answer is kept: so is its thread
				}
			}
		case llm.DeltaReasoning:
			r.emit(convo.Event{Type: convo.EventReasoning, Text: d.Text})
		}
	}
	start := time.Now()
	reply, err := r.provider().Stream(r.ctx, req, onDelta)
	r.a.log.Debug("llm call", "thread", r.th.ID, "provider", r.a.opt.Provider.Name(), "model", r.a.opt.Provider.Model(),
		"ms", time.Since(start).Milliseconds(), "prompt_tokens", reply.Usage.PromptTokens,
		"completion_tokens", reply.Usage.CompletionTokens, "tool_calls", len(reply.ToolCalls))
	if err != nil {
		// Keep what was shown; tool calls of a broken stream are dropped (incomplete).
		if text.Len() > 0 || partial.ID != 0 {
			partial.Content = text.String()
			partial.Reasoning = reply.Reasoning
			partial.Status = convo.Interrupted
			if partial.CreatedAt.IsZero() {
				partial.CreatedAt = r.a.opt.Now()
			}
			// The run's context may be cancelled: the partial answer is still saved.
			if serr := r.a.opt.Store.SaveMessage(context.WithoutCancel(r.ctx), partial); serr == nil {
				r.history = append(r.history, *partial)
				r.fresh = false
			}
		}
		return nil, err
	}
	if saveErr != nil {
		return nil, fmt.Errorf("saving the streamed answer: %w", saveErr)
	}

	usage, overBudget := r.usage().Record(reply.Usage)
	r.emit(convo.Event{Type: convo.EventUsage, Usage: usage})
	r.result.Usage = r.result.Usage.Add(usage)

	partial.Content = reply.Content
	if partial.Content == "" {
		partial.Content = text.String()
	}
	partial.Reasoning = reply.Reasoning
	partial.ToolCalls = nil
	if len(tools) > 0 {
		partial.ToolCalls = uniqueCallIDs(reply.ToolCalls, r.usedCallIDs())
	}
	partial.Status = convo.Complete
	partial.Usage = usage
	if reply.Model != "" {
		partial.Model = reply.Model
	}
	if partial.CreatedAt.IsZero() {
		partial.CreatedAt = r.a.opt.Now()
	}
	if err := r.a.opt.Store.SaveMessage(r.ctx, partial); err != nil {
		return nil, err
	}
	r.fresh = false
	r.history = append(r.history, *partial)
	// A call that went over a limit still delivered its answer; only a call that
	// wants more rounds (tool calls) is stopped here. The next call is refused.
	if overBudget != nil && len(partial.ToolCalls) > 0 {
		return nil, overBudget
	}
	return partial, nil
}

// requestBytes is the size of what a call sends: every message's text, reasoning and
// tool-call arguments, and the tool definitions.
func requestBytes(msgs []convo.Message, tools []convo.ToolDef) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + len(m.Reasoning)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// provider is the configured provider, wrapped in the retry policy with a hook that
// tells this run's listener (and the log) about each retry.
func (r *run) provider() llm.Provider {
	if r.a.opt.Retry == nil {
		return r.a.opt.Provider
	}
	o := *r.a.opt.Retry
	o.OnRetry = func(attempt int, delay time.Duration, err *fault.Error) {
		r.a.log.Warn("llm retry", "thread", r.th.ID, "attempt", attempt, "delay_ms", delay.Milliseconds(), "code", string(err.Code))
		r.emit(convo.Event{Type: convo.EventStatus, State: convo.StateRetrying,
			Attempt: attempt + 1, Attempts: o.Attempts(), Wait: delay, Err: err})
	}
	return llm.WithRetry(r.a.opt.Provider, o)
}

// reusedPrefix marks a tool call whose id the model had already used in the
// thread (or twice in one message): the call gets a fresh id with this prefix and is
// answered with an error, never run — so a replayed or confused call can neither
// apply anything nor leave a call without its result.
const reusedPrefix = "reused_"

// uniqueCallIDs gives every call an id unique in the thread: an empty id gets a
// fresh one; an id already used in the thread (used) or earlier in the message gets
// a fresh reusedPrefix one.
func uniqueCallIDs(calls []convo.ToolCall, used map[string]bool) []convo.ToolCall {
	seen := map[string]bool{}
	out := make([]convo.ToolCall, len(calls))
	stamp := time.Now().UnixNano()
	for i, c := range calls {
		switch {
		case c.ID == "":
			c.ID = fmt.Sprintf("call_%d_%d", stamp, i)
		case seen[c.ID] || used[c.ID] || strings.HasPrefix(c.ID, reusedPrefix):
			c.ID = fmt.Sprintf("%s%d_%d", reusedPrefix, stamp, i)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// usedCallIDs lists the tool call ids of the thread so far.
func (r *run) usedCallIDs() map[string]bool {
	used := map[string]bool{}
	for _, m := range r.history {
		for _, c := range m.ToolCalls {
			used[c.ID] = true
		}
		if m.ToolCallID != "" {
			used[m.ToolCallID] = true
		}
	}
	return used
}

// runToolCalls handles the calls of one assistant message in order. It returns
// stop=true when a proposal now waits for a decision.
func (r *run) runToolCalls(calls []convo.ToolCall) (stop bool, err error) {
	exec := tools.NewExecutor(r.a.opt.Source, r.th.GraphKey)
	for _, tc := range calls {
		if err := r.ctx.Err(); err != nil {
			_, ferr := r.fail(err)
			return true, ferr
		}
		if strings.HasPrefix(tc.ID, reusedPrefix) {
			r.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
			terr := fmt.Errorf("this call reused a tool call id already used in this thread, so it was not run; call %s again with a new id", tc.Name)
			if err := r.toolResult(tc, "", terr, time.Now()); err != nil {
				_, ferr := r.fail(err)
				return true, ferr
			}
			continue
		}
		if tools.IsWriteTool(tc.Name) {
			stop, err := r.propose(tc)
			if err != nil {
				_, ferr := r.fail(err)
				return true, ferr
			}
			if stop {
				return true, nil
			}
			continue
		}
		r.emit(convo.Event{Type: convo.EventStatus, State: convo.StateTool})
		r.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
		started := time.Now()
		result, terr := exec.Run(r.ctx, tc.Name, tc.Arguments)
		if err := r.toolResult(tc, result, terr, started); err != nil {
			_, ferr := r.fail(err)
			return true, ferr
		}
	}
	return false, nil
}

// toolResult commits and emits the result of one tool call. A tool error is a
// result the model can correct, not a failure of the run. A result over
// max_tool_result_bytes is never sent: an error result takes its place (the thread
// stays valid) and the run stops with the limit.
func (r *run) toolResult(tc convo.ToolCall, result string, terr error, started time.Time) error {
	var over error
	if lim := r.a.opt.Limits.MaxToolResultBytes; terr == nil && len(result) > lim {
		over = fault.Limit("the result of "+tc.Name, "max_tool_result_bytes", lim)
		terr = fmt.Errorf("the result was %d bytes, over max_tool_result_bytes (%d): not sent", len(result), lim)
	}
	if err := r.saveToolResult(tc, result, terr, started); err != nil {
		return err
	}
	return over
}

func (r *run) saveToolResult(tc convo.ToolCall, result string, terr error, started time.Time) error {
	run := convo.ToolRun{ThreadID: r.th.ID, ToolCallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments,
		Status: convo.RunCompleted, Result: result, StartedAt: started, FinishedAt: time.Now()}
	errText := ""
	if terr != nil {
		errText = terr.Error()
		result = errorResult(errText)
		run.Status, run.Result, run.Error = convo.RunError, result, errText
		r.a.log.Warn("tool error", "thread", r.th.ID, "tool", tc.Name, "error", errText, "args", truncate(tc.Arguments, 500))
	}
	m := &convo.Message{ThreadID: r.th.ID, Role: convo.Tool, ToolCallID: tc.ID, Name: tc.Name, Content: result,
		Status: convo.Complete, CreatedAt: r.a.opt.Now()}
	if err := r.a.opt.Store.SaveToolResult(r.ctx, m, run); err != nil {
		return err
	}
	r.history = append(r.history, *m)
	r.emit(convo.Event{Type: convo.EventToolResult, ToolCall: tc, Result: result, ToolErr: errText, Duration: run.FinishedAt.Sub(started)})
	return nil
}

func errorResult(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

// truncate cuts s to about n bytes for a log line, never inside a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// propose validates a propose_* call. An invalid one is an error result the model
// can correct; an auto-approved one is applied at once; otherwise it becomes the
// thread's pending proposal and the run stops.
func (r *run) propose(tc convo.ToolCall) (stop bool, err error) {
	started := time.Now()
	if r.a.opt.Role == "viewer" {
		return false, r.toolResult(tc, "", fmt.Errorf("%s is not available: the user's role is viewer (read-only)", tc.Name), started)
	}
	action, reason, perr := tools.ParseProposal(r.ctx, r.a.opt.Source, r.th.GraphKey, tc.Name, tc.Arguments)
	if perr == nil && !r.allowedAll(action) {
		perr = fmt.Errorf("%s is not allowed by the approval policy", action.Type)
	}
	if perr == nil {
		// A graph this source cannot make now (a read-only export, a database a
		// Nodius server writes) is said to the model, not proposed to the person.
		if why := r.cannotCreate(&convo.Proposal{Action: action}); why != "" {
			perr = errors.New(why)
		}
	}
	if perr != nil {
		r.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
		return false, r.toolResult(tc, "", perr, started)
	}
	p := convo.Proposal{ID: tc.ID, ThreadID: r.th.ID, ToolCallID: tc.ID, Tool: tc.Name, Action: action,
		Digest: convo.ActionDigest(action), Reason: reason, Decision: convo.Pending, CreatedAt: r.a.opt.Now()}
	if r.autoApproved(action) {
		r.emit(convo.Event{Type: convo.EventToolStart, ToolCall: tc})
		if err := r.a.opt.Store.SaveProposal(r.ctx, p); err != nil {
			return false, err
		}
		// The same claim, apply and record as a person's approval: exactly once.
		if err := r.approve(&p, "auto-approved by policy", ""); err != nil {
			return false, err
		}
		return false, nil
	}
	if err := r.a.opt.Store.SaveProposal(r.ctx, p); err != nil {
		return false, err
	}
	r.a.log.Info("proposal", "thread", r.th.ID, "tool", tc.Name, "action", string(action.Type))
	r.result.Proposal = &p
	r.result.ThreadID = r.th.ID // also when a Resume stops at the next proposal of a batch
	r.emit(convo.Event{Type: convo.EventProposal, Proposal: &p})
	return true, nil
}

// dropPendingBatchResults removes the synthetic results the store added for the
// pending call and the calls after it in the same assistant message, and returns
// those later calls: they are processed once the decision is recorded.
func (r *run) dropPendingBatchResults(pendingID string) []convo.ToolCall {
	var batch []convo.ToolCall
	for _, m := range r.history {
		if m.Role == convo.Assistant && slices.ContainsFunc(m.ToolCalls, func(c convo.ToolCall) bool { return c.ID == pendingID }) {
			batch = m.ToolCalls
		}
	}
	answered := map[string]bool{}
	kept := r.history[:0]
	for _, m := range r.history {
		if m.Role == convo.Tool && m.ID == 0 {
			continue // synthetic: not a real answer
		}
		if m.Role == convo.Tool {
			answered[m.ToolCallID] = true
		}
		kept = append(kept, m)
	}
	r.history = kept
	var remaining []convo.ToolCall
	after := false
	for _, c := range batch {
		if c.ID == pendingID {
			after = true
			continue
		}
		if after && !answered[c.ID] {
			remaining = append(remaining, c)
		}
	}
	return remaining
}

func (r *run) allowedAll(a datasource.Action) bool {
	for _, t := range tools.ActionTypes(a) {
		if !r.a.allowed(t) {
			return false
		}
	}
	return true
}

// autoApproved: every type in the action is auto, by policy or by a "yes for this
// thread" answer.
func (r *run) autoApproved(a datasource.Action) bool {
	for _, t := range tools.ActionTypes(a) {
		if r.a.opt.Policy[t] != config.PolicyAuto && !slices.Contains(r.th.AutoApprove, t) {
			return false
		}
	}
	return true
}
