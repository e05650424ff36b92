package config

import "math"

// builtinOrder is the registry order: it decides which provider is detected when
// several keys are set (DeepSeek > OpenAI > Anthropic > others, the order the README gives).
// openai-mini shares OPENAI_API_KEY with openai and ollama needs no key, so neither is
// ever detected: they are chosen by name.
var builtinOrder = []string{"deepseek", "openai", "anthropic", "qwen", "groq", "mistral", "openrouter", "openai-mini", "ollama"}

// Builtin returns a fresh copy of the built-in provider registry. It is a function,
// not a package variable, so that no caller can change another caller's registry.
// Prices are USD per million tokens, as published by each provider.
func Builtin() map[string]ProviderEntry {
	return map[string]ProviderEntry{
		"deepseek": {
			Type: OpenAICompatible, BaseURL: "https://api.deepseek.com", DefaultModel: "deepseek-chat",
			APIKeyEnv: "DEEPSEEK_API_KEY", ContextWindow: 128_000,
			Pricing: Pricing{InputPerMillion: 0.28, CachedInputPerMillion: 0.028, OutputPerMillion: 0.42},
		},
		"openai": {
			Type: OpenAICompatible, BaseURL: "https://api.openai.com/v1", DefaultModel: "gpt-4o",
			APIKeyEnv: "OPENAI_API_KEY", Embeddings: true, EmbeddingModel: "text-embedding-3-small", ContextWindow: 128_000,
			Pricing: Pricing{InputPerMillion: 2.50, CachedInputPerMillion: 1.25, OutputPerMillion: 10.00},
		},
		"openai-mini": {
			Type: OpenAICompatible, BaseURL: "https://api.openai.com/v1", DefaultModel: "gpt-4o-mini",
			APIKeyEnv: "OPENAI_API_KEY", Embeddings: true, EmbeddingModel: "text-embedding-3-small", ContextWindow: 128_000,
			Pricing: Pricing{InputPerMillion: 0.15, CachedInputPerMillion: 0.075, OutputPerMillion: 0.60},
		},
		"anthropic": {
			Type: Anthropic, BaseURL: "https://api.anthropic.com", DefaultModel: "claude-sonnet-4-20250514",
			APIKeyEnv: "ANTHROPIC_API_KEY", ContextWindow: 200_000,
			Pricing: Pricing{InputPerMillion: 3.00, CachedInputPerMillion: 0.30, OutputPerMillion: 15.00},
		},
		"qwen": {
			Type: OpenAICompatible, BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", DefaultModel: "qwen-plus",
			APIKeyEnv: "QWEN_API_KEY", Embeddings: true, EmbeddingModel: "text-embedding-v3", ContextWindow: 131_072,
			Pricing: Pricing{InputPerMillion: 0.80, CachedInputPerMillion: 0.20, OutputPerMillion: 2.00},
		},
		"groq": {
			Type: OpenAICompatible, BaseURL: "https://api.groq.com/openai/v1", DefaultModel: "llama-3.3-70b-versatile",
			APIKeyEnv: "GROQ_API_KEY", ContextWindow: 131_072,
			Pricing: Pricing{InputPerMillion: 0.59, CachedInputPerMillion: 0.59, OutputPerMillion: 0.79},
		},
		"mistral": {
			Type: OpenAICompatible, BaseURL: "https://api.mistral.ai/v1", DefaultModel: "mistral-large-latest",
			APIKeyEnv: "MISTRAL_API_KEY", Embeddings: true, EmbeddingModel: "mistral-embed", ContextWindow: 131_072,
			Pricing: Pricing{InputPerMillion: 2.00, CachedInputPerMillion: 2.00, OutputPerMillion: 6.00},
		},
		"openrouter": {
			Type: OpenAICompatible, BaseURL: "https://openrouter.ai/api/v1", DefaultModel: "openai/gpt-4o",
			APIKeyEnv: "OPENROUTER_API_KEY", ContextWindow: 128_000,
			Pricing: Pricing{InputPerMillion: 2.50, CachedInputPerMillion: 1.25, OutputPerMillion: 10.00},
		},
		"ollama": {
			Type: OpenAICompatible, BaseURL: "http://localhost:11434/v1", DefaultModel: "llama3.1",
			Embeddings: true, EmbeddingModel: "nomic-embed-text", ContextWindow: 131_072,
		},
	}
}

// Cost prices one call's usage. Cached prompt tokens (part of PromptTokens) are priced
// at CachedInputPerMillion; when a provider publishes no cache price (0 while the input
// price is not), they are priced as ordinary input so that cost is never understated.
// It takes token counts rather than a convo.Usage so that config stays a leaf.
func (p Pricing) Cost(promptTokens, cachedTokens, completionTokens int) float64 {
	cached := min(max(cachedTokens, 0), max(promptTokens, 0))
	uncached := max(promptTokens, 0) - cached
	cachedPrice := p.CachedInputPerMillion
	if cachedPrice == 0 {
		cachedPrice = p.InputPerMillion
	}
	c := float64(uncached)*p.InputPerMillion + float64(cached)*cachedPrice + float64(max(completionTokens, 0))*p.OutputPerMillion
	c /= 1e6
	// Round to a micro-dollar fraction so sums over many calls stay readable.
	return math.Round(c*1e9) / 1e9
}

// IsZero reports whether no price is known (local models): costs are then 0.
func (p Pricing) IsZero() bool { return p == Pricing{} }

// merge lays the non-zero fields of o over e: a [providers.NAME] table in the config
// file changes only what it names.
func (e ProviderEntry) merge(o ProviderEntry) ProviderEntry {
	if o.Type != "" {
		e.Type = o.Type
	}
	if o.BaseURL != "" {
		e.BaseURL = o.BaseURL
	}
	if o.DefaultModel != "" {
		e.DefaultModel = o.DefaultModel
	}
	if o.APIKeyEnv != "" {
		e.APIKeyEnv = o.APIKeyEnv
	}
	if o.Embeddings {
		e.Embeddings = true
	}
	if o.EmbeddingModel != "" {
		e.EmbeddingModel = o.EmbeddingModel
		e.Embeddings = true
	}
	if !o.Pricing.IsZero() {
		e.Pricing = o.Pricing
	}
	if o.ContextWindow != 0 {
		e.ContextWindow = o.ContextWindow
	}
	return e
}
