package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/rag"
)

// GraphContext is the tool that returns the retrieval context of a question.
const GraphContext = "graph_context"

// Limits of graph_context's arguments.
const (
	maxQuestion = 2000
	maxMentions = 20
)

// graphContextDef is graph_context as offered to clients.
func graphContextDef() convo.ToolDef {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"question": map[string]any{"type": "string", "minLength": 1, "maxLength": maxQuestion,
				"description": "The user's question or task, in their words."},
			"mentions": map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1}, "maxItems": maxMentions,
				"description": "Node keys to include in full whatever the ranking (like @mentions in nodius-ai's chat). Optional."},
		},
		"required":             []string{"question"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(schema)
	return convo.ToolDef{Name: GraphContext, Parameters: raw,
		Description: "Get the part of the graph relevant to a question, exactly as nodius-ai's own assistant receives it before answering: the best-matching nodes (search ranking fused with embeddings when configured), their neighbours, the edges between them and the node types used, as TOON. Call it first with the user's question, then read precisely with the read tools."}
}

// addTools registers graph_context and the agent's tools (read tools always, write
// tools by role and policy), each with the schema the built-in assistant gets.
func (s *Server) addTools() {
	defs := append([]convo.ToolDef{graphContextDef()}, s.opt.Agent.Tools()...)
	if tools.IsHome(s.opt.Graph) {
		defs = s.opt.Agent.ToolsFor(s.opt.Graph) // home mode: no graph to retrieve from
	}
	for _, d := range defs {
		t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Parameters}
		var h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult
		switch {
		case d.Name == GraphContext:
			t.Annotations = &mcp.ToolAnnotations{Title: "Retrieval context for a question", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
			h = s.graphContext
		case tools.IsWriteTool(d.Name):
			// A proposal changes nothing until a person approves it (or their policy
			// says auto); the hint says what an approved one may do.
			destructive := d.Name != tools.ProposeCreateNode && d.Name != tools.ProposeCreateEdge
			t.Annotations = &mcp.ToolAnnotations{DestructiveHint: ptr(destructive), OpenWorldHint: ptr(false)}
			h = s.propose
		default:
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
			h = s.read
		}
		s.mcp.AddTool(t, s.guard(h))
	}
}

func ptr[T any](v T) *T { return &v }

// guard turns a handler into an SDK one that never fails the request and never
// crashes the server: whatever goes wrong is a tool error the client reads.
func (s *Server) guard(h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("mcp tool panicked", "tool", req.Params.Name, "panic", fmt.Sprint(v))
				res, err = toolError(fmt.Sprintf("%s failed inside nodius-ai (a bug; see the log)", req.Params.Name)), nil
			}
		}()
		return h(ctx, req), nil
	}
}

// toolError is a tool error result: one sentence the client (or its model) can act on.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// errorSentence is what a client reads of err: the tool's own message for a mistake
// it can correct, the source's failure otherwise, on one line.
func errorSentence(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "the call was cancelled"
	}
	msg := err.Error()
	if ce, ok := fault.As(err); ok {
		msg = ce.Message
	}
	return strings.Join(strings.Fields(msg), " ")
}

// read runs one of the seven read tools, validated as for the built-in assistant.
func (s *Server) read(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	out, err := s.exec.Run(ctx, req.Params.Name, string(req.Params.Arguments))
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			s.log.Warn("mcp read tool failed", "tool", req.Params.Name, "error", err.Error())
		}
		return toolError(errorSentence(ctx, err))
	}
	return textResult(out)
}

// graphContext returns the retrieval context of a question as the assistant's
// context message (TOON). The question is searched as the client's agent worded it:
// never expanded by a model call (retrieval.expand = "llm"), whose tokens no run
// here would count.
func (s *Server) graphContext(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	question, mentions, err := parseGraphContext(req.Params.Arguments)
	if err != nil {
		return toolError(GraphContext + ": " + err.Error())
	}
	rc, err := s.opt.Retriever.RetrieveRequest(ctx, rag.Request{GraphKey: s.opt.Graph, Question: question, Mentions: mentions, NoExpand: true})
	if err != nil {
		s.log.Warn("mcp graph_context failed", "error", err.Error())
		return toolError(GraphContext + ": retrieval of graph " + s.opt.Graph + " failed: " + errorSentence(ctx, err))
	}
	return textResult(prompt.ContextMessage(rc))
}

// parseGraphContext checks graph_context's arguments as strictly as the agent checks
// its tools': an object with a non-empty question, optional mentions, nothing else.
func parseGraphContext(raw json.RawMessage) (string, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, errors.New(`missing required argument "question" (a string)`)
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return "", nil, errors.New("the arguments must be a JSON object")
	}
	for k := range m {
		if k != "question" && k != "mentions" {
			return "", nil, fmt.Errorf("unknown argument %q; the accepted arguments are: question, mentions", k)
		}
	}
	var q string
	if r, ok := m["question"]; !ok || string(r) == "null" {
		return "", nil, errors.New(`missing required argument "question" (a string)`)
	} else if json.Unmarshal(r, &q) != nil {
		return "", nil, errors.New(`argument "question" must be a string`)
	}
	q = strings.TrimSpace(q)
	switch {
	case q == "":
		return "", nil, errors.New(`argument "question" must not be empty`)
	case utf8.RuneCountInString(q) > maxQuestion:
		return "", nil, fmt.Errorf(`argument "question" is too long (%d characters, at most %d)`, utf8.RuneCountInString(q), maxQuestion)
	}
	var mentions []string
	if r, ok := m["mentions"]; ok && string(r) != "null" {
		if json.Unmarshal(r, &mentions) != nil {
			return "", nil, errors.New(`argument "mentions" must be an array of node keys (strings)`)
		}
		if len(mentions) > maxMentions {
			return "", nil, fmt.Errorf(`argument "mentions" has %d node keys, at most %d`, len(mentions), maxMentions)
		}
		if slices.Contains(mentions, "") {
			return "", nil, errors.New(`argument "mentions" holds an empty node key`)
		}
	}
	return q, mentions, nil
}

// propose stores a propose_* call as a pending proposal of the session's thread (or
// applies it at once where the policy says auto) and says what happened and how the
// person decides.
func (s *Server) propose(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	s.proposeMu.Lock()
	defer s.proposeMu.Unlock()
	threadID, err := s.threadFor(ctx, req)
	if err != nil {
		s.log.Warn("mcp thread", "error", err.Error())
		return toolError("could not open the nodius-ai thread for this session: " + errorSentence(ctx, err))
	}
	res, err := s.opt.Agent.Propose(ctx, threadID, convo.ToolCall{Name: req.Params.Name, Arguments: string(req.Params.Arguments)})
	switch {
	case err != nil:
		if _, ok := fault.As(err); !ok {
			s.log.Warn("mcp proposal failed", "thread", threadID, "tool", req.Params.Name, "error", err.Error())
		}
		return toolError(errorSentence(ctx, err))
	case res.Refused != "":
		return toolError(res.Refused)
	case res.Pending != nil:
		s.watch.pending(threadID, res.CallID)
		return s.pendingResult(threadID, res.Pending)
	default:
		s.watch.changed(ctx, s.opt.Graph)
		return s.autoResult(threadID, res)
	}
}

// pendingResult tells the client its proposal waits for a person, and how they decide.
func (s *Server) pendingResult(threadID string, p *convo.Proposal) *mcp.CallToolResult {
	// The commands pin what the client was shown: the proposal and its action.
	digest := p.Digest
	if digest == "" {
		digest = convo.ActionDigest(p.Action)
	}
	pin := " --proposal " + p.ID + " --digest " + digest
	approve := "nodius-ai approve " + threadID + pin + s.opt.DecideFlags
	reject := "nodius-ai reject " + threadID + pin + s.opt.DecideFlags + ` --feedback "..."`
	tui := "nodius-ai chat --graph " + s.opt.Graph + " --thread " + threadID + s.opt.DecideFlags
	var b strings.Builder
	fmt.Fprintf(&b, "Proposal stored, not applied: this %s on graph %s waits for the user's decision in nodius-ai thread %s. ", p.Tool, s.opt.Graph, threadID)
	b.WriteString("Nothing in the graph changes until the user approves it. ")
	fmt.Fprintf(&b, "Tell the user to decide with `%s` or `%s`, or in the nodius-ai TUI (`%s`). ", approve, reject, tui)
	b.WriteString("Do not propose the same change again; this thread accepts its next proposal once this one is decided, and the graph's resources are updated when it is approved.")
	if s.opt.SourceNote != "" {
		b.WriteString(" " + s.opt.SourceNote)
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: b.String()}},
		StructuredContent: map[string]any{
			"status": "pending", "thread": threadID, "proposal": p.ID, "tool": p.Tool, "graph": s.opt.Graph,
			"action": p.Action, "reason": p.Reason, "approve": approve, "reject": reject, "tui": tui,
		},
	}
}

// autoResult reports a proposal the person's policy approved at once.
func (s *Server) autoResult(threadID string, res agent.ProposeResult) *mcp.CallToolResult {
	var decided map[string]any
	_ = json.Unmarshal([]byte(res.Decided), &decided)
	text := fmt.Sprintf("Applied at once: the user's approval policy auto-approves this kind of change on graph %s (recorded in nodius-ai thread %s). Result: %s",
		s.opt.Graph, threadID, res.Decided)
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"status": "applied", "thread": threadID, "proposal": res.CallID, "graph": s.opt.Graph, "result": decided}}
	if res.DecidedErr != "" {
		out.IsError = true
		out.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Auto-approved by the user's policy, but %s (recorded in nodius-ai thread %s).",
			strings.TrimPrefix(res.DecidedErr, "approved, but "), threadID)}}
		out.StructuredContent.(map[string]any)["status"] = "error"
	}
	return out
}

// threadFor returns the thread of the calling session, creating it on its first
// proposal, titled with the client's name. A session is the transport's session id
// when it has one (streamable HTTP), else the client's name (stdio, where one
// process serves one client, and session-less HTTP requests).
func (s *Server) threadFor(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
	client, key := clientName(req), ""
	if req.Session != nil {
		key = req.Session.ID()
	}
	if key == "" {
		key = "client:" + client
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.threads[key]; ok {
		return id, nil
	}
	th, err := s.opt.Agent.ExternalThread(ctx, s.opt.Graph, client, client+" (MCP)")
	if err != nil {
		return "", err
	}
	s.threads[key] = th.ID
	s.log.Info("mcp thread", "thread", th.ID, "client", client, "graph", s.opt.Graph)
	return th.ID, nil
}

// clientName is the name the client gave, made safe to store and show: no control
// sequences, one line, at most 60 characters.
func clientName(req *mcp.CallToolRequest) string {
	name := ""
	if ci := req.ClientInfo(); ci != nil {
		name = ci.Title
		if name == "" {
			name = ci.Name
		}
	}
	name = strings.Join(strings.Fields(termtext.Strip(name)), " ")
	if r := []rune(name); len(r) > 60 {
		name = string(r[:60])
	}
	if name == "" {
		name = "MCP client"
	}
	return name
}
