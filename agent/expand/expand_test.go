package expand_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/expand"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/config"
)

const question = "Which step sends the welcome e-mail?"

func openai(url, model string) llm.Provider {
	return llm.NewOpenAI(llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: url, APIKey: "sk-test", Model: model, ProviderName: "deepseek",
		Pricing: &config.Pricing{InputPerMillion: 1, OutputPerMillion: 2}}})
}

func newExpander(t *testing.T, p llm.Provider, dir string) *expand.Expander {
	t.Helper()
	x, err := expand.New(expand.Options{Model: p, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestExpandRequestAndCache: one small non-streamed call without tools, the question
// as the user message; its terms and tokens come back; the same question again (in
// the process, or in a new process through the disk cache, in other case and
// spacing) makes no call; another model or question does.
func TestExpandRequestAndCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.Start(t,
		llmtest.Turn{Text: "welcome email, send mail, notify, courriel de bienvenue, envoyer, 1. smtp, notify", Usage: &llmtest.Usage{PromptTokens: 90, CompletionTokens: 30}},
		llmtest.Turn{Text: "mail", Usage: &llmtest.Usage{PromptTokens: 90, CompletionTokens: 3}},
		llmtest.Turn{Text: "other", Usage: &llmtest.Usage{PromptTokens: 90, CompletionTokens: 3}})
	dir := t.TempDir()
	x := newExpander(t, openai(srv.OpenAIURL(), "fake-model"), dir)

	got, err := x.Expand(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"welcome email", "send mail", "notify", "courriel de bienvenue", "envoyer", "smtp"}
	if !reflect.DeepEqual(got.Terms, want) {
		t.Errorf("terms = %q, want %q", got.Terms, want)
	}
	if got.Usage.PromptTokens != 90 || got.Usage.CompletionTokens != 30 || got.Usage.CostUSD == 0 {
		t.Errorf("usage = %+v", got.Usage)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Stream || r.IncludeUsage || len(r.Tools) != 0 || r.MaxTokens <= 0 || r.MaxTokens > 200 {
		t.Errorf("request: stream %v, stream_options %v, tools %v, max_tokens %d; want a small non-streamed call without tools",
			r.Stream, r.IncludeUsage, r.Tools, r.MaxTokens)
	}
	if len(r.Messages) != 2 || r.Messages[0].Role != "system" || !strings.Contains(r.Messages[0].Content, "French") ||
		r.Messages[1].Role != "user" || r.Messages[1].Content != question {
		t.Errorf("messages = %+v", r.Messages)
	}

	// Cached: in the process, then in another expander on the same directory.
	for _, q := range []string{question, "  which STEP sends the welcome e-mail? "} {
		again, err := x.Expand(ctx, q)
		if err != nil || !reflect.DeepEqual(again.Terms, want) || again.Usage.Total() != 0 {
			t.Errorf("cached %q = %+v, %v", q, again, err)
		}
	}
	fresh := newExpander(t, openai(srv.OpenAIURL(), "fake-model"), dir)
	if again, err := fresh.Expand(ctx, question); err != nil || !reflect.DeepEqual(again.Terms, want) || again.Usage.Total() != 0 {
		t.Errorf("from disk = %+v, %v", again, err)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Fatalf("cached questions made %d more calls", n-1)
	}

	// Keyed by model and question.
	other := newExpander(t, openai(srv.OpenAIURL(), "other-model"), dir)
	if got, err := other.Expand(ctx, question); err != nil || !reflect.DeepEqual(got.Terms, []string{"mail"}) {
		t.Errorf("other model = %+v, %v", got, err)
	}
	if got, err := x.Expand(ctx, "another question"); err != nil || !reflect.DeepEqual(got.Terms, []string{"other"}) {
		t.Errorf("other question = %+v, %v", got, err)
	}
	if n := len(srv.ChatRequests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 3 {
		t.Errorf("%d cache files, want 3", len(files))
	}
}

// TestExpandFailures: an error answer, a model that says nothing usable and a
// server that does not answer in time all return an error (retrieval then goes on
// without expansion), and nothing is cached.
func TestExpandFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("server error", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.Start(t, llmtest.Turn{Status: 500}, llmtest.Turn{Text: "ok"})
		dir := t.TempDir()
		x := newExpander(t, openai(srv.OpenAIURL(), "m"), dir)
		if _, err := x.Expand(ctx, question); err == nil || !strings.Contains(err.Error(), "query expansion") {
			t.Fatalf("err = %v", err)
		}
		if got, err := x.Expand(ctx, question); err != nil || len(got.Terms) != 1 {
			t.Errorf("after a failure, the next ask calls again: %+v, %v", got, err)
		}
	})
	t.Run("empty answer", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.Start(t, llmtest.Turn{Text: " , \n", Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 2}})
		x := newExpander(t, openai(srv.OpenAIURL(), "m"), "")
		got, err := x.Expand(ctx, question)
		if err == nil || got.Usage.Total() != 52 {
			t.Fatalf("got %+v, err %v: want an error and the tokens spent", got, err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(release); hs.Close() })
		x, err := expand.New(expand.Options{Model: openai(hs.URL+"/v1", "slow"), Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = x.Expand(ctx, question)
		if err == nil || !strings.Contains(err.Error(), "within") || time.Since(start) > 10*time.Second {
			t.Fatalf("err = %v after %s", err, time.Since(start))
		}
	})
}

// TestExpandAnthropic: the native Anthropic provider makes the same non-streamed call.
func TestExpandAnthropic(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "onboarding, intégration", Usage: &llmtest.Usage{PromptTokens: 40, CompletionTokens: 5}})
	p := llm.NewAnthropic(llm.AnthropicOptions{Endpoint: llm.Endpoint{BaseURL: srv.AnthropicURL(), APIKey: "k", Model: "claude"}})
	x := newExpander(t, p, "")
	got, err := x.Expand(context.Background(), "new hire steps")
	if err != nil || !reflect.DeepEqual(got.Terms, []string{"onboarding", "intégration"}) || got.Usage.PromptTokens != 40 || got.Usage.CompletionTokens != 5 {
		t.Fatalf("got %+v, %v", got, err)
	}
	r := srv.ChatRequests()[0]
	if r.Stream || r.MaxTokens > 200 || !strings.Contains(r.System, "French") {
		t.Errorf("request = %+v", r)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a, b; c\nd", "a|b|c|d"},
		{"<think>hmm, x</think>fetch, api", "fetch|api"},
		{"- \"one\"\n* two\n3. three\n«quatre»", "one|two|three|quatre"},
		{"dup, DUP, Dup", "dup"},
		{"\x1b[31mred\x07", "[31mred"},
		{strings.Repeat("x", 80) + ", ok", "ok"},
	}
	for _, tt := range tests {
		if got := strings.Join(expand.Parse(tt.in), "|"); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDirAndModelCheck(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"}
	if got := expand.Dir(func(k string) string { return env[k] }); got != filepath.Join("/c", "nodius-ai", "expand") {
		t.Errorf("Dir = %q", got)
	}
	if _, err := expand.New(expand.Options{}); err == nil {
		t.Error("New without a model: no error")
	}
}
