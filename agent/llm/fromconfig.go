package llm

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// FromConfig builds the configured provider (not yet wrapped in WithRetry), or the
// config_error of cfg.RequireLLM. httpClient may be nil (a client with the header
// timeout is made); tests pass their own.
func FromConfig(cfg *config.Config, httpClient *http.Client, log *slog.Logger) (Provider, error) {
	if err := cfg.RequireLLM(); err != nil {
		return nil, err
	}
	pricing := cfg.Entry.Pricing
	ep := Endpoint{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Model: cfg.Model, ProviderName: cfg.Provider,
		KeyHint: cfg.KeyHint(), HTTPClient: httpClient, Pricing: &pricing, Logger: log, Limits: cfg.Limits}
	if cfg.Entry.Type == config.Anthropic {
		return NewAnthropic(AnthropicOptions{Endpoint: ep}), nil
	}
	return NewOpenAI(OpenAIOptions{
		Endpoint:            ep,
		SendReasoning:       cfg.Provider == "deepseek" || strings.Contains(cfg.BaseURL, "deepseek"),
		MaxCompletionTokens: strings.HasPrefix(cfg.Provider, "openai") && strings.Contains(cfg.BaseURL, "api.openai.com"),
	}), nil
}

// EmbedderFromConfig builds the embeddings client, or returns (nil, nil) when no
// embedding endpoint is configured (retrieval then ranks by text alone). The logger
// is unused (the embedder reports through its errors); the parameter mirrors FromConfig.
func EmbedderFromConfig(cfg *config.Config, httpClient *http.Client, _ *slog.Logger) (Embedder, error) {
	if cfg.EmbeddingBaseURL == "" {
		if cfg.EmbeddingModel != "" && cfg.Provider != "" {
			return nil, &fault.Error{Code: fault.Config,
				Message: cfg.Provider + " has no embeddings API — set OPENAI_API_KEY or NODIUS_AI_EMBEDDING_BASE_URL for embedding model " + cfg.EmbeddingModel}
		}
		return nil, nil
	}
	if cfg.EmbeddingModel == "" {
		return nil, &fault.Error{Code: fault.Config, Message: "no embedding model set — pass --embedding-model or set NODIUS_AI_EMBEDDING_MODEL"}
	}
	hint := "NODIUS_AI_API_KEY"
	if e, ok := cfg.Providers[cfg.EmbeddingProvider]; ok && e.APIKeyEnv != "" {
		hint = e.APIKeyEnv
	}
	return NewEmbedder(EmbedderOptions{
		BaseURL: cfg.EmbeddingBaseURL, APIKey: cfg.EmbeddingAPIKey, Model: cfg.EmbeddingModel,
		ProviderName: orDefault(cfg.EmbeddingProvider, "embeddings"), KeyHint: hint, HTTPClient: httpClient,
	}), nil
}
