package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// TestLimits: a response that goes over a limit stops the call with budget_exceeded,
// a sentence naming the limit and its config key; the text that arrived before is
// kept and no tool call of the cut response is returned.
func TestLimits(t *testing.T) {
	t.Parallel()
	small := config.Limits{MaxAnswerBytes: 1000, MaxReasoningBytes: 1000, MaxToolCalls: 3, MaxToolArgsBytes: 500}
	many := make([]llmtest.ToolCall, 10)
	for i := range many {
		many[i] = llmtest.ToolCall{Name: "search_nodes", Arguments: `{"query":"x"}`}
	}
	bigLine := `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("a", 200_000) + `"}}]}` + "\n\n"
	tests := []struct {
		name      string
		turn      llmtest.Turn
		key       string
		wantText  bool // some answer text arrived before the limit
		anthropic bool
	}{
		{name: "answer", turn: llmtest.Turn{Text: strings.Repeat("word ", 1000)}, key: "max_answer_bytes", wantText: true},
		{name: "reasoning", turn: llmtest.Turn{Reasoning: strings.Repeat("think ", 1000), Text: "ok"}, key: "max_reasoning_bytes"},
		{name: "tool calls", turn: llmtest.Turn{Text: "let me look", ToolCalls: many}, key: "max_tool_calls", wantText: true},
		{name: "tool calls in one chunk", turn: llmtest.Turn{ToolCalls: many, CallsInOneChunk: true}, key: "max_tool_calls"},
		{name: "arguments", turn: llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "search_nodes", Arguments: `{"query":"` + strings.Repeat("q", 5000) + `"}`}}}, key: "max_tool_args_bytes"},
		{name: "arguments whole", turn: llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "search_nodes", Arguments: `{"query":"` + strings.Repeat("q", 5000) + `"}`}}, ArgsChunk: 100000}, key: "max_tool_args_bytes"},
		{name: "one huge line", turn: llmtest.Turn{Raw: bigLine}, key: "max_stream_line_bytes"},
		{name: "whole body", turn: llmtest.Turn{Text: strings.Repeat("word ", 1000), Whole: true}, key: "max_answer_bytes"},
		{name: "anthropic answer", turn: llmtest.Turn{Text: strings.Repeat("word ", 1000)}, key: "max_answer_bytes", wantText: true, anthropic: true},
		{name: "anthropic reasoning", turn: llmtest.Turn{Reasoning: strings.Repeat("think ", 1000)}, key: "max_reasoning_bytes", anthropic: true},
		{name: "anthropic tool calls", turn: llmtest.Turn{ToolCalls: many}, key: "max_tool_calls", anthropic: true},
		{name: "anthropic arguments", turn: llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "search_nodes", Arguments: `{"query":"` + strings.Repeat("q", 5000) + `"}`}}}, key: "max_tool_args_bytes", anthropic: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, tt.turn)
			var p llm.Provider
			if tt.anthropic {
				p = newAnthropic(srv, func(o *llm.AnthropicOptions) { o.Limits = small })
			} else {
				p = newProvider(srv, func(o *llm.OpenAIOptions) { o.Limits = small })
			}
			var c collect
			reply, err := p.Stream(context.Background(), userAsk, c.on)
			fe, ok := fault.As(err)
			if !ok || fe.Code != fault.BudgetExceeded || fe.Retryable {
				t.Fatalf("err = %v, want a budget_exceeded limit error", err)
			}
			if !strings.Contains(fe.Message, tt.key) || !strings.Contains(fe.Message, "[limits]") {
				t.Errorf("message %q does not name %s and where to set it", fe.Message, tt.key)
			}
			if len(reply.ToolCalls) > 0 {
				t.Errorf("a cut response returned %d tool calls", len(reply.ToolCalls))
			}
			if len(reply.Content) > small.MaxAnswerBytes || len(reply.Reasoning) > small.MaxReasoningBytes {
				t.Errorf("kept %d bytes of answer, %d of reasoning: over the limits", len(reply.Content), len(reply.Reasoning))
			}
			if tt.wantText && reply.Content == "" {
				t.Error("the text that arrived before the limit was not kept")
			}
		})
	}
}

// TestStreamLineLimit: a stream line over max_stream_line_bytes stops the run with one
// sentence naming that limit, its value and its key, whichever payload limit is the
// largest; unset, the line limit follows the largest payload limit.
func TestStreamLineLimit(t *testing.T) {
	t.Parallel()
	bigLine := `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("a", 200_000) + `"}}]}` + "\n\n"
	for _, tt := range []struct {
		lim  config.Limits
		want string
	}{
		{config.Limits{MaxStreamLineBytes: 5000}, "one line of the provider's stream went over the limit of 5000 (max_stream_line_bytes): the run stopped"},
		{config.Limits{MaxAnswerBytes: 1000, MaxReasoningBytes: 3000, MaxToolArgsBytes: 2000}, "went over the limit of 68536 (max_stream_line_bytes)"},
	} {
		srv := llmtest.Start(t, llmtest.Turn{Raw: bigLine})
		p := newProvider(srv, func(o *llm.OpenAIOptions) { o.Limits = tt.lim })
		var c collect
		_, err := p.Stream(context.Background(), userAsk, c.on)
		fe, ok := fault.As(err)
		if !ok || fe.Code != fault.BudgetExceeded || !strings.Contains(fe.Message, tt.want) {
			t.Fatalf("limits %+v: err = %v, want %q", tt.lim, err, tt.want)
		}
		if strings.Contains(fe.Message, "max_answer_bytes") || strings.Contains(fe.Message, "max_reasoning_bytes") {
			t.Errorf("the message names a payload limit: %q", fe.Message)
		}
	}
}

// TestLimitsDefaults: a provider built without limits has the defaults, and an honest
// answer is far below them.
func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: strings.Repeat("word ", 5000)})
	reply, err := newProvider(srv).Stream(context.Background(), userAsk, nil)
	if err != nil || len(reply.Content) != 25000 {
		t.Fatalf("honest answer: %d bytes, %v", len(reply.Content), err)
	}
	if d := config.DefaultLimits; d.MaxAnswerBytes < 100_000 || d.MaxToolCalls < 16 {
		t.Errorf("defaults too tight: %+v", d)
	}
}

// TestGarbageIsAnError: a 200 answer of bytes that hold no event is a failure the
// person sees, not an empty answer.
func TestGarbageIsAnError(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Raw: "\x00\x17\xfe garbage\nmore garbage\n\n"})
	reply, err := newProvider(srv).Stream(context.Background(), userAsk, nil)
	if err == nil || !strings.Contains(err.Error(), "no chat-completion event") {
		t.Fatalf("garbage answered %q, %v", reply.Content, err)
	}
}
