package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// fixtureDir holds streams recorded from live provider APIs (testdata/sse/README.md
// says where each comes from): the ground truth for how providers really stream.
func fixtureDir(t *testing.T) string {
	t.Helper()
	return filepath.Join("testdata", "sse")
}

func newProvider(srv *llmtest.Server, mod ...func(*llm.OpenAIOptions)) llm.Provider {
	o := llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: srv.OpenAIURL(), APIKey: "sk-test-secret", Model: "fake-model", ProviderName: "deepseek", KeyHint: "DEEPSEEK_API_KEY"}}
	for _, m := range mod {
		m(&o)
	}
	return llm.NewOpenAI(o)
}

// collect gathers the deltas of one call.
type collect struct {
	mu     sync.Mutex
	text   strings.Builder
	reason strings.Builder
	starts []convo.ToolCall
	n      int
}

func (c *collect) on(d llm.Delta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	switch d.Kind {
	case llm.DeltaText:
		c.text.WriteString(d.Text)
	case llm.DeltaReasoning:
		c.reason.WriteString(d.Text)
	case llm.DeltaToolStart:
		c.starts = append(c.starts, d.ToolCall)
	}
}

var userAsk = llm.Request{Messages: []convo.Message{{Role: convo.User, Content: "hi"}}}

func TestFixtures(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	tests := []struct {
		file                    string
		model                   string
		textRunes, reasonRunes  int
		textPrefix, textSuffix  string
		reasonPrefix            string
		calls                   []convo.ToolCall
		finish                  string
		prompt, complete, cache int
	}{
		{file: "openai-gpt4o-parallel-tool-calls.sse", model: "gpt-4o-2024-08-06", finish: "tool_calls",
			calls: []convo.ToolCall{
				{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
				{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`},
			}, prompt: 149, complete: 60},
		{file: "vercel-ai__deepseek__deepseek-reasoning.chunks.txt", model: "deepseek-reasoner", finish: "stop",
			textRunes: 42, textPrefix: `The word "strawberry" contains three "r"`, textSuffix: `three "r"s.`,
			reasonRunes: 606, reasonPrefix: "We need to count the number of", prompt: 18, complete: 219},
		{file: "vercel-ai__deepseek__deepseek-tool-call.chunks.txt", model: "deepseek-reasoner", finish: "tool_calls",
			reasonRunes: 191, reasonPrefix: "The user is asking for the wea",
			calls:  []convo.ToolCall{{ID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
			prompt: 339, complete: 83, cache: 320},
		{file: "vercel-ai__groq__groq-reasoning.chunks.txt", model: "qwen/qwen3-32b", finish: "stop",
			textRunes: 347, textPrefix: `The word **"strawberry"** is spelled as `, textSuffix: `**Final Answer**: $\boxed{3}$`,
			reasonRunes: 2952, reasonPrefix: "Okay, let me try to figure out", prompt: 17, complete: 1107},
		{file: "vercel-ai__groq__groq-tool-call.chunks.txt", model: "llama-3.3-70b-versatile", finish: "tool_calls",
			calls: []convo.ToolCall{{ID: "tk85n1k4m", Name: "weather", Arguments: `{}`}}, prompt: 210, complete: 15},
		{file: "vercel-ai__mistral__mistral-incremental-tool-call.chunks.txt", model: "zai-glm-5-2", finish: "tool_calls",
			calls:  []convo.ToolCall{{ID: "chatcmpl-tool-9f149c74c42f265b", Name: "webSearchTool", Arguments: `{"query": "current Berlin weather"}`}},
			prompt: 171, complete: 14, cache: 128},
		{file: "vercel-ai__openai-compatible__xai-tool-call.chunks.txt", model: "grok-3-mini", finish: "tool_calls",
			reasonRunes: 1069, reasonPrefix: "First, the user is asking abou",
			calls:  []convo.ToolCall{{ID: "call_79382389", Name: "weather", Arguments: `{"location":"San Francisco"}`}},
			prompt: 307, complete: 26, cache: 306},
		{file: "vercel-ai__openai__openai-text.chunks.txt", model: "gpt-4.1-nano-2025-04-14", finish: "stop",
			textRunes: 1724, textPrefix: "**Holiday Name:** Harmony Day\n\n**Date:**", textSuffix: "xperiences and mutual respect.",
			prompt: 16, complete: 300},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, llmtest.Turn{Fixture: filepath.Join(dir, tt.file)})
			var c collect
			r, err := newProvider(srv).Stream(context.Background(), userAsk, c.on)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if r.Model != tt.model || r.FinishReason != tt.finish {
				t.Errorf("model %q finish %q", r.Model, r.FinishReason)
			}
			if n := utf8.RuneCountInString(r.Content); n != tt.textRunes || !strings.HasPrefix(r.Content, tt.textPrefix) || !strings.HasSuffix(r.Content, tt.textSuffix) {
				t.Errorf("text: %d runes %q…", n, r.Content[:min(len(r.Content), 60)])
			}
			if n := utf8.RuneCountInString(r.Reasoning); n != tt.reasonRunes || !strings.HasPrefix(r.Reasoning, tt.reasonPrefix) {
				t.Errorf("reasoning: %d runes %q…", n, r.Reasoning[:min(len(r.Reasoning), 60)])
			}
			if c.text.String() != r.Content || c.reason.String() != r.Reasoning {
				t.Errorf("deltas differ from the reply")
			}
			if !equalCalls(r.ToolCalls, tt.calls) {
				t.Errorf("calls %+v\nwant %+v", r.ToolCalls, tt.calls)
			}
			if len(c.starts) != len(tt.calls) {
				t.Errorf("%d tool starts, want %d", len(c.starts), len(tt.calls))
			}
			want := convo.Usage{PromptTokens: tt.prompt, CompletionTokens: tt.complete, CachedTokens: tt.cache}
			if r.Usage != want {
				t.Errorf("usage %+v, want %+v", r.Usage, want)
			}
		})
	}
}

func equalCalls(a, b []convo.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTraps covers the ways openai-go and real providers differ from the happy path
// (testdata/sse/README.md lists the provider quirks): each case names one.
func TestTraps(t *testing.T) {
	t.Parallel()
	two := []llmtest.ToolCall{
		{ID: "call_a", Name: "read_node", Arguments: `{"nodeKey":"fetch-api","depth":2}`},
		{ID: "call_b", Name: "search_nodes", Arguments: `{"query":"fetch api"}`},
	}
	tests := []struct {
		name string
		turn llmtest.Turn
		text string
	}{
		{name: "fragmented arguments, index on every delta", turn: llmtest.Turn{ToolCalls: two, ArgsChunk: 3}},
		{name: "two calls in one chunk with finish_reason", turn: llmtest.Turn{ToolCalls: two, CallsInOneChunk: true}},
		{name: "finish_reason on the last tool chunk", turn: llmtest.Turn{ToolCalls: two, FinishWithLastArgs: true, UsageOnFinish: true}},
		{name: "missing index", turn: llmtest.Turn{ToolCalls: two, OmitIndex: true}},
		{name: "missing index, two calls in one chunk", turn: llmtest.Turn{ToolCalls: two, OmitIndex: true, CallsInOneChunk: true}},
		{name: "index 0 reused for every call", turn: llmtest.Turn{ToolCalls: two, SameIndex: true}},
		{name: "empty names repeated", turn: llmtest.Turn{ToolCalls: two, RepeatName: true}},
		{name: "usage as running totals", turn: llmtest.Turn{Text: "one two three", ToolCalls: two, UsageEveryChunk: true}, text: "one two three"},
		{name: "keep-alive comments", turn: llmtest.Turn{Text: "a b c", ToolCalls: two, KeepAlive: true}, text: "a b c"},
		{name: "CRLF framing", turn: llmtest.Turn{Text: "a b c", ToolCalls: two, CRLF: true}, text: "a b c"},
		{name: "no [DONE]", turn: llmtest.Turn{Text: "a b c", ToolCalls: two, NoDone: true}, text: "a b c"},
		{name: "reasoning field", turn: llmtest.Turn{Reasoning: "think", ReasoningField: "reasoning", Text: "x", ToolCalls: two}, text: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.turn.Usage = &llmtest.Usage{PromptTokens: 100, CompletionTokens: 40, CachedTokens: 64}
			srv := llmtest.Start(t, tt.turn)
			var c collect
			r, err := newProvider(srv).Stream(context.Background(), userAsk, c.on)
			if err != nil {
				t.Fatal(err)
			}
			want := []convo.ToolCall{{ID: "call_a", Name: "read_node", Arguments: two[0].Arguments}, {ID: "call_b", Name: "search_nodes", Arguments: two[1].Arguments}}
			if !equalCalls(r.ToolCalls, want) {
				t.Errorf("calls %+v", r.ToolCalls)
			}
			if r.Content != tt.text || r.FinishReason != "tool_calls" {
				t.Errorf("text %q finish %q", r.Content, r.FinishReason)
			}
			if tt.turn.Reasoning != "" && r.Reasoning != tt.turn.Reasoning {
				t.Errorf("reasoning %q", r.Reasoning)
			}
			if r.Usage != (convo.Usage{PromptTokens: 100, CompletionTokens: 40, CachedTokens: 64}) {
				t.Errorf("usage %+v (must be the last, not a sum)", r.Usage)
			}
			if len(c.starts) != 2 || c.starts[0].ID != "call_a" || c.starts[1].Name != "search_nodes" {
				t.Errorf("starts %+v", c.starts)
			}
		})
	}
}

// TestRequestShape checks what goes on the wire: tools, tool-call messages built with
// type "function", reasoning sent back for DeepSeek tool turns, include_usage, no key leak.
func TestRequestShape(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-should-not-leak")
	t.Setenv("OPENAI_API_KEY", "sk-openai-env-should-not-leak")
	srv := llmtest.Start(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	req := llm.Request{
		Messages: []convo.Message{
			{Role: convo.System, Content: "sys"},
			{Role: convo.User, Content: "q"},
			{Role: convo.Assistant, Reasoning: "I should read", ToolCalls: []convo.ToolCall{{ID: "c1", Name: "read_node", Arguments: `{"k":1}`}, {ID: "c2", Name: "noargs"}}},
			{Role: convo.Tool, ToolCallID: "c1", Name: "read_node", Content: "result 1"},
			{Role: convo.Tool, ToolCallID: "c2", Name: "noargs", Content: "result 2"},
			{Role: convo.Assistant, Content: "answer", Reasoning: "not sent: no tool calls"},
			{Role: convo.User, Content: "again"},
		},
		Tools:     []convo.ToolDef{{Name: "read_node", Description: "reads", Parameters: json.RawMessage(`{"type":"object","properties":{"k":{"type":"integer"}}}`)}},
		MaxTokens: 512,
	}
	if _, err := newProvider(srv, func(o *llm.OpenAIOptions) { o.SendReasoning = true }).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newProvider(srv, func(o *llm.OpenAIOptions) { o.APIKey = ""; o.ProviderName = "ollama" }).Stream(context.Background(), userAsk, nil); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	got := rs[0]
	if !got.Stream || !got.IncludeUsage || got.MaxTokens != 512 || got.Model != "fake-model" {
		t.Errorf("request %+v", got)
	}
	if len(got.Tools) != 1 || got.Tools[0] != "read_node" {
		t.Errorf("tools %v", got.Tools)
	}
	a := got.Messages[2]
	if a.Role != "assistant" || len(a.ToolCalls) != 2 || a.ToolCalls[0].ID != "c1" || a.ToolCalls[1].Arguments != "{}" ||
		a.ToolCallTypes[0] != "function" || a.ToolCallTypes[1] != "function" || a.ReasoningContent != "I should read" {
		t.Errorf("assistant tool-call message %+v", a)
	}
	if got.Messages[3].ToolCallID != "c1" || got.Messages[4].ToolCallID != "c2" || got.Messages[5].ReasoningContent != "" {
		t.Errorf("messages %+v", got.Messages)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test-secret" {
		t.Errorf("auth header %q", h)
	}
	if got.Header.Get("OpenAI-Organization") != "" {
		t.Errorf("organization header leaked to deepseek")
	}
	if rs[1].Auth || rs[1].Header.Get("Authorization") != "" || len(rs[1].Tools) != 0 || rs[1].MaxTokens != 0 {
		t.Errorf("keyless request: auth %q tools %v", rs[1].Header.Get("Authorization"), rs[1].Tools)
	}
	if strings.Contains(string(rs[1].Body), `"tools"`) {
		t.Errorf("empty tools sent: %s", rs[1].Body)
	}
}

func code(err error) fault.Code {
	if ce, ok := fault.As(err); ok {
		return ce.Code
	}
	return "unclassified"
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		turn       llmtest.Turn
		code       fault.Code
		retryable  bool
		retryAfter time.Duration
		msg        string
		partial    string
	}{
		{name: "401", turn: llmtest.Turn{Status: 401, ErrorMessage: "Authentication Fails, Your api key: sk-test-secret is invalid"},
			code: fault.Auth, msg: "the API key for deepseek was rejected — set DEEPSEEK_API_KEY"},
		{name: "403", turn: llmtest.Turn{Status: 403}, code: fault.Auth, msg: "set DEEPSEEK_API_KEY"},
		{name: "429 seconds", turn: llmtest.Turn{Status: 429, RetryAfter: "7"}, code: fault.RateLimit, retryable: true, retryAfter: 7 * time.Second, msg: "rate limiting"},
		{name: "429 capped", turn: llmtest.Turn{Status: 429, RetryAfter: "3600"}, code: fault.RateLimit, retryable: true, retryAfter: 60 * time.Second},
		{name: "429 quota", turn: llmtest.Turn{Status: 429, ErrorType: "insufficient_quota", ErrorMessage: "You exceeded your current quota"}, code: fault.RateLimit, msg: "billing"},
		{name: "500", turn: llmtest.Turn{Status: 500}, code: fault.ServerError, retryable: true, msg: "HTTP 500"},
		{name: "503", turn: llmtest.Turn{Status: 503}, code: fault.ServerError, retryable: true},
		{name: "400 context length", turn: llmtest.Turn{Status: 400, ErrorType: "invalid_request_error",
			ErrorMessage: "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens"},
			code: fault.ContextLength, msg: "too long for fake-model"},
		{name: "400 content filter", turn: llmtest.Turn{Status: 400, ErrorType: "content_filter", ErrorMessage: "Content Exists Risk"}, code: fault.ContentFilter},
		{name: "400 other", turn: llmtest.Turn{Status: 400, ErrorMessage: "messages: bad role"}, code: fault.InvalidRequest, msg: "bad role"},
		{name: "404", turn: llmtest.Turn{Status: 404, ErrorMessage: "Model Not Exist"}, code: fault.InvalidRequest, msg: "--model"},
		{name: "502 html body", turn: llmtest.Turn{Raw: "", Status: 502}, code: fault.ServerError, retryable: true},
		{name: "cut mid-stream", turn: llmtest.Turn{Text: "one two three four", CutAfter: 3}, code: fault.Network, retryable: true, partial: "one two "},
		{name: "error event mid-stream", turn: llmtest.Turn{Text: "one two three four", ErrorAfter: 3, ErrorMessage: "upstream overloaded"},
			code: fault.ServerError, retryable: true, partial: "one two ", msg: "upstream overloaded"},
		{name: "error event rate limit", turn: llmtest.Turn{Text: "x", ErrorAfter: -1, ErrorType: "rate_limit_exceeded"}, code: fault.RateLimit, retryable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, tt.turn)
			r, err := newProvider(srv).Stream(context.Background(), userAsk, nil)
			ce, ok := fault.As(err)
			if !ok {
				t.Fatalf("want a classified error, got %v", err)
			}
			if ce.Code != tt.code || ce.Retryable != tt.retryable || (tt.retryAfter != 0 && ce.RetryAfter != tt.retryAfter) {
				t.Errorf("got %s retryable=%v after=%v (%s)", ce.Code, ce.Retryable, ce.RetryAfter, ce.Message)
			}
			if !strings.Contains(ce.Message, tt.msg) {
				t.Errorf("message %q lacks %q", ce.Message, tt.msg)
			}
			if strings.Contains(ce.Error(), "sk-test-secret") {
				t.Errorf("key leaked: %s", ce.Error())
			}
			if r.Content != tt.partial {
				t.Errorf("partial %q, want %q", r.Content, tt.partial)
			}
		})
	}
}

// TestMalformedChunks: an event that is not one whole JSON object ends the stream as
// a retryable server_error (not a cut connection), keeping the text so far; a token
// that is the word "error" is not mistaken for an error event.
func TestMalformedChunks(t *testing.T) {
	t.Parallel()
	chunk := func(text string) string {
		return `data: {"model":"m","choices":[{"index":0,"delta":{"content":` + strconv.Quote(text) + `}}]}` + "\n\n"
	}
	tests := []struct {
		name, raw, partial string
		code               fault.Code
	}{
		{"truncated", chunk("one ") + `data: {"choices":[{"index":0,"delta":{"content":"two"}` + "\n\n" + chunk("three"), "one ", fault.ServerError},
		{"bad character", chunk("one ") + `data: {"choices":[{"index":0,"delta":{"content":"tw` + "\n\n" + chunk("three"), "one ", fault.ServerError},
		{"two values", chunk("one ") + `data: {"choices":[]} {"choices":[]}` + "\n\n" + chunk("three"), "one ", fault.ServerError},
		{"not json", chunk("one ") + "data: <html>\n\n", "one ", fault.ServerError},
		{"the word error", chunk("no ") + chunk("error") + chunk(`"error"`) + "data: [DONE]\n\n", `no error"error"`, ""},
		{"error event", chunk("no ") + `data: {"error":{"message":"boom","type":"server_error"}}` + "\n\n" + chunk("more"), "no ", fault.ServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, llmtest.Turn{Raw: tt.raw})
			r, err := newProvider(srv).Stream(context.Background(), userAsk, nil)
			if tt.code == "" && err != nil || tt.code != "" && code(err) != tt.code {
				t.Fatalf("want %q, got %v", tt.code, err)
			}
			if ce, ok := fault.As(err); ok && !ce.Retryable {
				t.Errorf("not retryable: %v", err)
			}
			if r.Content != tt.partial || r.Model != "m" {
				t.Errorf("partial %q model %q, want %q", r.Content, r.Model, tt.partial)
			}
		})
	}
}

func TestStallTimeout(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "one two three", StallAfter: 2})
	p := newProvider(srv, func(o *llm.OpenAIOptions) { o.StallTimeout = 150 * time.Millisecond })
	r, err := p.Stream(context.Background(), userAsk, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Timeout || !ce.Retryable {
		t.Fatalf("want retryable timeout, got %v", err)
	}
	if r.Content != "one " {
		t.Errorf("partial %q", r.Content)
	}
}

// TestSlowStreamNotCut: the stall timeout bounds the silence between chunks, not the
// whole answer: a stream that lasts several stall timeouts but never pauses that
// long completes (both providers).
func TestSlowStreamNotCut(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("slow ", 30)
	turn := llmtest.Turn{Text: text, Delay: 40 * time.Millisecond} // about 1.2 s in all
	srv := llmtest.Start(t, turn, turn)
	timeouts := func(e *llm.Endpoint) { e.HeaderTimeout, e.StallTimeout = 400*time.Millisecond, 400*time.Millisecond }
	r, err := newProvider(srv, func(o *llm.OpenAIOptions) { timeouts(&o.Endpoint) }).Stream(context.Background(), userAsk, nil)
	if err != nil || r.Content != text {
		t.Errorf("openai: %v, %d bytes", err, len(r.Content))
	}
	r, err = newAnthropic(srv, func(o *llm.AnthropicOptions) { timeouts(&o.Endpoint) }).Stream(context.Background(), userAsk, nil)
	if err != nil || r.Content != text {
		t.Errorf("anthropic: %v, %d bytes", err, len(r.Content))
	}
}

// TestResponseHeaderTimeout: a server that accepts the request and never answers
// is given up after the header timeout, as a retryable timeout (the stall timer
// only starts with the stream).
func TestResponseHeaderTimeout(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // once the body is read, the server notices the client leaving
		<-r.Context().Done()
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	p := llm.NewOpenAI(llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: hs.URL + "/v1", Model: "m", HeaderTimeout: 200 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.Stream(ctx, userAsk, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Timeout || !ce.Retryable || ctx.Err() != nil {
		t.Fatalf("want a retryable timeout before the test's deadline, got %v", err)
	}
}

func TestHeaderTimeout(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "x", StallAfter: -1})
	// The fake sends headers at once; a stall before the first chunk is the stall timer's.
	p := newProvider(srv, func(o *llm.OpenAIOptions) { o.StallTimeout = 100 * time.Millisecond })
	_, err := p.Stream(context.Background(), userAsk, nil)
	if code(err) != fault.Timeout {
		t.Fatalf("want timeout, got %v", err)
	}
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "one two three four five", StallAfter: 3})
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	done := make(chan struct{})
	var r llm.Reply
	var err error
	go func() {
		defer close(done)
		r, err = newProvider(srv).Stream(ctx, userAsk, func(d llm.Delta) {
			got = append(got, d.Text)
			if len(got) == 2 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if code(err) != fault.Interrupted {
		t.Fatalf("want interrupted, got %v", err)
	}
	if r.Content != "one two " {
		t.Errorf("partial %q", r.Content)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	p := llm.NewOpenAI(llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ProviderName: "ollama"}})
	_, err := p.Stream(context.Background(), userAsk, nil)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Network || !ce.Retryable || !strings.Contains(ce.Message, "127.0.0.1:1") {
		t.Fatalf("want network error, got %v", err)
	}
}

func TestNonStreamingAnswer(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Whole: true, Text: "whole", Reasoning: "r", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}},
		Usage: &llmtest.Usage{PromptTokens: 3, CompletionTokens: 2}})
	var c collect
	r, err := newProvider(srv).Stream(context.Background(), userAsk, c.on)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "whole" || r.Reasoning != "r" || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "c" || r.Usage.PromptTokens != 3 || c.text.String() != "whole" {
		t.Errorf("reply %+v", r)
	}
}

func TestCostFilled(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "x", Usage: &llmtest.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000, CachedTokens: 500_000}})
	pr := config.Builtin()["deepseek"].Pricing
	r, err := newProvider(srv, func(o *llm.OpenAIOptions) { o.Pricing = &pr }).Stream(context.Background(), userAsk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.14 + 0.014 + 0.42; r.Usage.CostUSD < want-1e-9 || r.Usage.CostUSD > want+1e-9 {
		t.Errorf("cost %v, want %v", r.Usage.CostUSD, want)
	}
}
