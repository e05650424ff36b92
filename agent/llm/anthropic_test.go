package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/internal/fault"
)

func newAnthropic(srv *llmtest.Server, mod ...func(*llm.AnthropicOptions)) llm.Provider {
	o := llm.AnthropicOptions{Endpoint: llm.Endpoint{BaseURL: srv.AnthropicURL(), APIKey: "sk-ant-secret", Model: "claude-test"}}
	for _, m := range mod {
		m(&o)
	}
	return llm.NewAnthropic(o)
}

func TestAnthropicStream(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // must be ignored
	srv := llmtest.Start(t, llmtest.Turn{
		Reasoning: "let me think", Text: "Reading the node.", KeepAlive: true,
		ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read_node", Arguments: `{"nodeKey":"fetch-api"}`}, {ID: "toolu_2", Name: "noargs", Arguments: ""}},
		ArgsChunk: 4,
		Usage:     &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 57, CachedTokens: 1000},
	})
	var c collect
	r, err := newAnthropic(srv).Stream(context.Background(), llm.Request{
		Messages: []convo.Message{{Role: convo.System, Content: "sys"}, {Role: convo.User, Content: "what is fetch-api?"}},
		Tools:    []convo.ToolDef{{Name: "read_node", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"nodeKey":{"type":"string"}},"required":["nodeKey"],"additionalProperties":false}`)}},
	}, c.on)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "Reading the node." || r.Reasoning != "let me think" || r.FinishReason != "tool_use" || r.Model != "claude-test" {
		t.Errorf("reply %+v", r)
	}
	want := []convo.ToolCall{{ID: "toolu_1", Name: "read_node", Arguments: `{"nodeKey":"fetch-api"}`}, {ID: "toolu_2", Name: "noargs", Arguments: "{}"}}
	if !equalCalls(r.ToolCalls, want) {
		t.Errorf("calls %+v", r.ToolCalls)
	}
	if r.Usage != (convo.Usage{PromptTokens: 1200, CompletionTokens: 57, CachedTokens: 1000}) {
		t.Errorf("usage %+v", r.Usage)
	}
	if c.text.String() != r.Content || c.reason.String() != r.Reasoning || len(c.starts) != 2 {
		t.Errorf("deltas: %q %q %v", c.text.String(), c.reason.String(), c.starts)
	}
	rq := srv.Requests()[0]
	if rq.System != "sys" || rq.MaxTokens != 4096 || len(rq.Tools) != 1 || rq.Header.Get("X-Api-Key") != "sk-ant-secret" {
		t.Errorf("request: system %q max %d tools %v", rq.System, rq.MaxTokens, rq.Tools)
	}
	if !strings.Contains(string(rq.Body), `"additionalProperties":false`) || !strings.Contains(string(rq.Body), `"required":["nodeKey"]`) {
		t.Errorf("schema lost: %s", rq.Body)
	}
}

func TestAnthropicConversions(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	history := []convo.Message{
		{Role: convo.System, Content: "prompt"},
		{Role: convo.System, Kind: convo.KindContext, Content: "context"},
		{Role: convo.User, Content: "q1"},
		{Role: convo.Assistant, Content: "checking", ToolCalls: []convo.ToolCall{{ID: "t1", Name: "a", Arguments: `{"x":1}`}, {ID: "t2", Name: "b", Arguments: `{not json`}}},
		{Role: convo.Tool, ToolCallID: "t1", Content: "r1"},
		{Role: convo.Tool, ToolCallID: "t2", Content: "r2"},
		{Role: convo.Assistant, Content: "done"},
		{Role: convo.User, Content: "q2"},
	}
	if _, err := newAnthropic(srv).Stream(context.Background(), llm.Request{Messages: history, MaxTokens: 100}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newAnthropic(srv).Stream(context.Background(), llm.Request{Messages: []convo.Message{{Role: convo.User, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	rq := rs[0]
	if rq.System != "prompt\n\ncontext" || rq.MaxTokens != 100 {
		t.Errorf("system %q max %d", rq.System, rq.MaxTokens)
	}
	roles := []string{}
	for _, m := range rq.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		t.Fatalf("roles %v", roles)
	}
	a := rq.Messages[1]
	if len(a.Blocks) != 3 || a.Blocks[0].Type != "text" || a.Blocks[1].Type != "tool_use" || string(a.Blocks[1].Input) != `{"x":1}` || string(a.Blocks[2].Input) != `{}` {
		t.Errorf("assistant blocks %+v", a.Blocks)
	}
	res := rq.Messages[2]
	if len(res.Blocks) != 2 || res.Blocks[0].Type != "tool_result" || res.Blocks[0].ToolUseID != "t1" || res.Blocks[1].ToolUseID != "t2" || res.Blocks[1].Content != "r2" {
		t.Errorf("tool results not merged into one user message: %+v", res.Blocks)
	}
	if strings.Contains(string(rs[1].Body), `"system"`) || strings.Contains(string(rs[1].Body), `"tools"`) {
		t.Errorf("empty system or tools sent: %s", rs[1].Body)
	}
}

func TestAnthropicFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		turn      llmtest.Turn
		code      fault.Code
		retryable bool
		after     time.Duration
		partial   string
		msg       string
	}{
		{name: "401", turn: llmtest.Turn{Status: 401}, code: fault.Auth, msg: "set ANTHROPIC_API_KEY"},
		{name: "429", turn: llmtest.Turn{Status: 429, RetryAfter: "3"}, code: fault.RateLimit, retryable: true, after: 3 * time.Second},
		{name: "529 overloaded", turn: llmtest.Turn{Status: 529, ErrorType: "overloaded_error"}, code: fault.ServerError, retryable: true},
		{name: "400 prompt too long", turn: llmtest.Turn{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"}, code: fault.ContextLength},
		{name: "error event", turn: llmtest.Turn{Text: "one two three", ErrorAfter: 4}, code: fault.ServerError, retryable: true, partial: "one two "},
		{name: "cut", turn: llmtest.Turn{Text: "one two three", CutAfter: 4}, code: fault.Network, retryable: true, partial: "one two "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, tt.turn)
			r, err := newAnthropic(srv).Stream(context.Background(), userAsk, nil)
			ce, ok := fault.As(err)
			if !ok || ce.Code != tt.code || ce.Retryable != tt.retryable || (tt.after != 0 && ce.RetryAfter != tt.after) {
				t.Fatalf("got %v (retryable %v)", err, ok && ce.Retryable)
			}
			if !strings.Contains(ce.Message, tt.msg) || strings.Contains(ce.Error(), "sk-ant-secret") {
				t.Errorf("message %q", ce.Message)
			}
			if r.Content != tt.partial {
				t.Errorf("partial %q", r.Content)
			}
		})
	}
}

func TestAnthropicStallAndCancel(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "one two three", StallAfter: 3}, llmtest.Turn{Text: "one two three", StallAfter: 3})
	_, err := newAnthropic(srv, func(o *llm.AnthropicOptions) { o.StallTimeout = 100 * time.Millisecond }).Stream(context.Background(), userAsk, nil)
	if code(err) != fault.Timeout {
		t.Errorf("stall: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := newAnthropic(srv).Stream(ctx, userAsk, func(d llm.Delta) { cancel() })
	if code(err) != fault.Interrupted || r.Content != "one " {
		t.Errorf("cancel: %v, partial %q", err, r.Content)
	}
}
