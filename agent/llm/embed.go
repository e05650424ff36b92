package llm

import (
	"context"
	"errors"
	"net/http"

	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// DefaultEmbedBatch is how many texts go in one embeddings request.
const DefaultEmbedBatch = 100

// EmbedderOptions configure an OpenAI-compatible embeddings client.
type EmbedderOptions struct {
	BaseURL      string
	APIKey       string
	Model        string
	ProviderName string
	KeyHint      string
	HTTPClient   *http.Client
	BatchSize    int // texts per request [DefaultEmbedBatch]
	// Retry transient failures of a batch (nothing is shown to anyone meanwhile).
	Retry RetryOptions
	// OnUsage is told the prompt tokens of each batch (embedding cost tracking).
	OnUsage func(tokens int)
}

type embedder struct {
	o      EmbedderOptions
	client openai.EmbeddingService // the service alone: see openaiProvider
	who    who
}

// NewEmbedder returns an Embedder over /embeddings, batching the texts.
func NewEmbedder(o EmbedderOptions) Embedder {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultEmbedBatch
	}
	if o.ProviderName == "" {
		o.ProviderName = "openai"
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(0)
	}
	o.Retry = o.Retry.withDefaults()
	return &embedder{o: o, client: openai.NewEmbeddingService(clientOptions(o.BaseURL, o.APIKey, o.ProviderName, hc)...),
		who: who{provider: o.ProviderName, model: o.Model, keyHint: o.KeyHint, baseURL: o.BaseURL, key: o.APIKey}}
}

func (e *embedder) Model() string { return e.o.Model }

// Embed returns one vector per text, in order. Empty input gives an empty result.
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.o.BatchSize {
		batch := texts[start:min(start+e.o.BatchSize, len(texts))]
		vecs, err := e.batch(ctx, batch)
		if err != nil {
			return out, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// batch embeds one batch, retrying its transient failures: nothing was shown to
// anyone, so every failure may be retried.
func (e *embedder) batch(ctx context.Context, texts []string) ([][]float32, error) {
	var vecs [][]float32
	err := e.o.Retry.run(ctx, func() (bool, error) {
		var err error
		vecs, err = e.once(ctx, texts)
		return true, err
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}

func (e *embedder) once(ctx context.Context, texts []string) ([][]float32, error) {
	var resp *http.Response
	res, err := e.client.New(ctx, openai.EmbeddingNewParams{
		Model:          openai.EmbeddingModel(e.o.Model),
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}, option.WithResponseInto(&resp))
	if err != nil {
		var ae *openai.Error
		if errors.As(err, &ae) {
			return nil, e.who.classifyFailure(failure{status: ae.StatusCode, header: ae.Response.Header, message: ae.Message, kind: ae.Type + " " + ae.Code}, err)
		}
		if resp != nil && resp.StatusCode >= 400 {
			return nil, e.who.classifyFailure(failure{status: resp.StatusCode, header: resp.Header}, err)
		}
		return nil, e.who.classifyTransport(ctx, nil, err)
	}
	if len(res.Data) != len(texts) {
		return nil, &fault.Error{Code: fault.ServerError, Retryable: true,
			Message: e.o.ProviderName + " returned a wrong number of embeddings — retry"}
	}
	vecs := make([][]float32, len(texts))
	for i, d := range res.Data {
		idx := int(d.Index)
		if idx < 0 || idx >= len(vecs) {
			idx = i
		}
		v := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			v[j] = float32(f)
		}
		vecs[idx] = v
	}
	if e.o.OnUsage != nil {
		e.o.OnUsage(int(res.Usage.PromptTokens))
	}
	return vecs, nil
}
