package llm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/internal/fault"
)

// fakeSleep records the waits instead of sleeping.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, d)
	return ctx.Err()
}

func TestRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		turns    []llmtest.Turn
		code     fault.Code // "" = success
		requests int
		waits    []time.Duration // exact waits (Retry-After); nil = check count only
		nwaits   int
		text     string
	}{
		{name: "429 with Retry-After honoured", turns: []llmtest.Turn{{Status: 429, RetryAfter: "7"}, {Text: "hello"}},
			requests: 2, waits: []time.Duration{7 * time.Second}, nwaits: 1, text: "hello"},
		{name: "Retry-After capped at 60s", turns: []llmtest.Turn{{Status: 429, RetryAfter: "600"}, {Text: "hello"}},
			requests: 2, waits: []time.Duration{60 * time.Second}, nwaits: 1, text: "hello"},
		{name: "500 then 503 then ok", turns: []llmtest.Turn{{Status: 500}, {Status: 503}, {Text: "ok"}}, requests: 3, nwaits: 2, text: "ok"},
		{name: "gives up after max attempts", turns: []llmtest.Turn{{Status: 500}, {Status: 500}, {Status: 500}, {Text: "never"}},
			code: fault.ServerError, requests: 3, nwaits: 2},
		{name: "401 not retried", turns: []llmtest.Turn{{Status: 401}, {Text: "never"}}, code: fault.Auth, requests: 1},
		{name: "400 context not retried", turns: []llmtest.Turn{{Status: 400, ErrorMessage: "maximum context length exceeded"}}, code: fault.ContextLength, requests: 1},
		{name: "no retry once a token was shown", turns: []llmtest.Turn{{Text: "one two three", CutAfter: 3}, {Text: "never"}},
			code: fault.Network, requests: 1, text: "one two "},
		{name: "retry when the cut came before any token", turns: []llmtest.Turn{{Text: "one", CutAfter: 1}, {Text: "fine"}}, requests: 2, nwaits: 1, text: "fine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.Start(t, tt.turns...)
			fs := &fakeSleep{}
			var retries int
			p := llm.WithRetry(newProvider(srv), llm.RetryOptions{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, Sleep: fs.sleep,
				OnRetry: func(int, time.Duration, *fault.Error) { retries++ }})
			var shown strings.Builder
			r, err := p.Stream(context.Background(), userAsk, func(d llm.Delta) { shown.WriteString(d.Text) })
			if tt.code == "" && err != nil {
				t.Fatalf("err %v", err)
			}
			if tt.code != "" && code(err) != tt.code {
				t.Fatalf("want %s, got %v", tt.code, err)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if len(fs.waits) != tt.nwaits || retries != tt.nwaits {
				t.Errorf("waits %v (OnRetry %d), want %d", fs.waits, retries, tt.nwaits)
			}
			for i, w := range tt.waits {
				if fs.waits[i] != w {
					t.Errorf("wait %d = %v, want %v", i, fs.waits[i], w)
				}
			}
			for _, w := range fs.waits {
				if w > 60*time.Second {
					t.Errorf("wait %v over the cap", w)
				}
			}
			if r.Content != tt.text || shown.String() != tt.text {
				t.Errorf("content %q shown %q, want %q", r.Content, shown.String(), tt.text)
			}
		})
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Status: 503}, llmtest.Turn{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	p := llm.WithRetry(newProvider(srv), llm.RetryOptions{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return context.Canceled }})
	_, err := p.Stream(ctx, userAsk, nil)
	if code(err) != fault.Interrupted {
		t.Fatalf("want interrupted, got %v", err)
	}
}
