package llm_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestEmbedder(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	tokens := 0
	e := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "k", Model: "text-embedding-3-small", BatchSize: 2,
		OnUsage: func(n int) { tokens += n }})
	texts := []string{"fetch api call", "fetchApi call", "render html page", "database query", "fetch-api"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) || len(vecs[0]) != 64 {
		t.Fatalf("got %d vectors of %d", len(vecs), len(vecs[0]))
	}
	if s := cosine(vecs[0], vecs[1]); s < 0.99 {
		t.Errorf("identifier split: similarity %v", s)
	}
	if cosine(vecs[0], vecs[4]) <= cosine(vecs[0], vecs[2]) {
		t.Errorf("similar texts not closer")
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d batches, want 3", n)
	}
	if tokens != 3+3+3+2+2 {
		t.Errorf("tokens %d", tokens)
	}
	if e.Model() != "text-embedding-3-small" {
		t.Errorf("model %q", e.Model())
	}
}

func TestEmbedderErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	e := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.URL + "/nope", Model: "m", ProviderName: "openai", KeyHint: "OPENAI_API_KEY"})
	_, err := e.Embed(context.Background(), []string{"x"})
	if code(err) != fault.InvalidRequest {
		t.Errorf("404: %v", err)
	}
}

// TestEmbedderRetry: a transient failure of a batch is retried (Retry-After honoured),
// a permanent one is not.
func TestEmbedderRetry(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(llmtest.Script{})
	var mu sync.Mutex
	statuses := []int{503, 429, 401}
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		st := 0
		if len(statuses) > 0 {
			st, statuses = statuses[0], statuses[1:]
		}
		mu.Unlock()
		switch st {
		case 0:
			fake.Handler().ServeHTTP(w, r)
		case 429:
			w.Header().Set("Retry-After", "3")
			fallthrough
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			_, _ = w.Write([]byte(`{"error":{"message":"try later","type":"server_error"}}`))
		}
	}))
	t.Cleanup(hs.Close)
	fs := &fakeSleep{}
	e := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: hs.URL + "/v1", Model: "m", Retry: llm.RetryOptions{Sleep: fs.sleep}})
	vecs, err := e.Embed(context.Background(), []string{"a", "b"})
	if code(err) != fault.Auth || len(vecs) != 0 {
		t.Fatalf("503, 429 then 401: want auth_error after two retries, got %v (%d vectors)", err, len(vecs))
	}
	mu.Lock()
	if calls != 3 || len(fs.waits) != 2 || fs.waits[1] != 3*time.Second {
		t.Errorf("%d calls, waits %v", calls, fs.waits)
	}
	statuses = []int{500}
	mu.Unlock()
	if vecs, err := e.Embed(context.Background(), []string{"a", "b"}); err != nil || len(vecs) != 2 {
		t.Errorf("500 then ok: %v, %d vectors", err, len(vecs))
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 5 {
		t.Errorf("%d calls, want 5", calls)
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{Text: "via config", Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 5}}, llmtest.Turn{Text: "anthropic"})
	env := map[string]string{"HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }

	cfg, err := config.Load(config.LoadOptions{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.FromConfig(cfg, nil, nil); code(err) != fault.Config {
		t.Errorf("no provider: %v", err)
	}
	if e, err := llm.EmbedderFromConfig(cfg, nil, nil); e != nil || err != nil {
		t.Errorf("no embedder expected: %v %v", e, err)
	}

	cfg, err = config.Load(config.LoadOptions{Getenv: getenv, Flags: map[string]string{"base-url": srv.OpenAIURL(), "model": "m", "embedding-model": "e"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := llm.FromConfig(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Stream(context.Background(), userAsk, nil)
	if err != nil || r.Content != "via config" || p.Name() != "custom" || p.Model() != "m" {
		t.Errorf("custom: %v %+v", err, r)
	}
	emb, err := llm.EmbedderFromConfig(cfg, nil, nil)
	if err != nil || emb == nil {
		t.Fatalf("embedder: %v", err)
	}
	if v, err := emb.Embed(context.Background(), []string{"a b"}); err != nil || len(v) != 1 {
		t.Errorf("embed: %v", err)
	}

	env["ANTHROPIC_API_KEY"] = "sk-ant"
	cfg, err = config.Load(config.LoadOptions{Getenv: getenv, Flags: map[string]string{"provider": "anthropic", "base-url": srv.AnthropicURL()}})
	if err != nil {
		t.Fatal(err)
	}
	p, err = llm.FromConfig(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := p.Stream(context.Background(), userAsk, nil); err != nil || r.Content != "anthropic" {
		t.Errorf("anthropic: %v %+v", err, r)
	}
	if r.Usage.CostUSD != 0 { // custom provider: no pricing
		t.Errorf("custom cost %v", r.Usage.CostUSD)
	}
}

func TestTracker(t *testing.T) {
	t.Parallel()
	pr := config.Pricing{InputPerMillion: 1, CachedInputPerMillion: 0.1, OutputPerMillion: 2}
	tests := []struct {
		name   string
		limits config.Limits
		start  convo.Usage
		call   convo.Usage
		code   fault.Code
	}{
		{"no limits", config.Limits{}, convo.Usage{}, convo.Usage{PromptTokens: 1e6, CompletionTokens: 1e6}, ""},
		{"per call", config.Limits{MaxTokensPerCall: 100}, convo.Usage{}, convo.Usage{PromptTokens: 90, CompletionTokens: 20}, fault.BudgetExceeded},
		{"per thread", config.Limits{MaxTokensPerThread: 1000}, convo.Usage{PromptTokens: 950}, convo.Usage{PromptTokens: 40, CompletionTokens: 20}, fault.BudgetExceeded},
		{"usd", config.Limits{MaxCostUSD: 1}, convo.Usage{CostUSD: 0.5}, convo.Usage{PromptTokens: 1e6}, fault.BudgetExceeded},
		{"under", config.Limits{MaxTokensPerCall: 1000, MaxTokensPerThread: 5000, MaxCostUSD: 1}, convo.Usage{}, convo.Usage{PromptTokens: 500, CompletionTokens: 20}, ""},
	}
	for _, tt := range tests {
		tr := llm.NewTracker(pr, tt.limits, tt.start)
		u, err := tr.Record(tt.call)
		if (tt.code == "" && err != nil) || (tt.code != "" && code(err) != tt.code) {
			t.Errorf("%s: %v", tt.name, err)
		}
		if u.CostUSD != pr.Cost(tt.call.PromptTokens, tt.call.CachedTokens, tt.call.CompletionTokens) || tr.Thread().Total() != tt.start.Total()+tt.call.Total() {
			t.Errorf("%s: usage %+v thread %+v", tt.name, u, tr.Thread())
		}
	}
}
