package llm

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
)

// Defaults for the transport. The header timeout bounds the wait for the first byte
// of the answer (a hung server); the stall timeout bounds the silence between two
// chunks of a stream. Neither bounds a long answer that keeps streaming, unlike the
// SDK's WithRequestTimeout, which would cut a slow but healthy stream.
const (
	DefaultHeaderTimeout = 2 * time.Minute
	DefaultStallTimeout  = 60 * time.Second
)

// Endpoint is what every chat provider needs, whatever protocol it speaks: where
// the server is, how to reach it, and how to name it in error messages.
type Endpoint struct {
	BaseURL      string
	APIKey       string // may be empty (ollama, local servers): no key header is sent
	Model        string
	ProviderName string // registry name, for messages ("deepseek")
	// KeyHint names what to set when the key is rejected ("DEEPSEEK_API_KEY").
	KeyHint string
	// HTTPClient replaces the default client (which has the header timeout).
	HTTPClient *http.Client
	// Pricing, when set, fills Reply.Usage.CostUSD.
	Pricing *config.Pricing
	// HeaderTimeout and StallTimeout: 0 means the defaults above.
	HeaderTimeout time.Duration
	StallTimeout  time.Duration
	Logger        *slog.Logger
	// Limits bound what one response may carry (answer, reasoning, tool calls and
	// their arguments); unset sizes take config.DefaultLimits.
	Limits config.Limits
}

// withDefaults fills what the caller left zero, so that the providers never test
// for it again; provider is the name to use when ProviderName is empty.
func (e Endpoint) withDefaults(provider string) Endpoint {
	if e.ProviderName == "" {
		e.ProviderName = provider
	}
	if e.HeaderTimeout <= 0 {
		e.HeaderTimeout = DefaultHeaderTimeout
	}
	if e.StallTimeout <= 0 {
		e.StallTimeout = DefaultStallTimeout
	}
	if e.HTTPClient == nil {
		e.HTTPClient = NewHTTPClient(e.HeaderTimeout)
	}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	e.Limits = e.Limits.WithDefaults()
	return e
}

func (e Endpoint) who() who {
	return who{provider: e.ProviderName, model: e.Model, keyHint: e.KeyHint, baseURL: e.BaseURL, key: e.APIKey}
}

// price fills u's cost when the provider's prices are known.
func (e Endpoint) price(u *convo.Usage) {
	if e.Pricing != nil {
		u.CostUSD = e.Pricing.Cost(u.PromptTokens, u.CachedTokens, u.CompletionTokens)
	}
}

// NewHTTPClient returns a client whose transport bounds the wait for response
// headers (0: DefaultHeaderTimeout) and nothing else: the stream itself may last.
func NewHTTPClient(headerTimeout time.Duration) *http.Client {
	if headerTimeout <= 0 {
		headerTimeout = DefaultHeaderTimeout
	}
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: headerTimeout,
	}
	return &http.Client{Transport: t}
}
