package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm/chatstream"
	"github.com/nodius/nodius-ai/internal/fault"
)

// OpenAIOptions configure an OpenAI-compatible provider.
type OpenAIOptions struct {
	Endpoint
	// SendReasoning sends an assistant tool-call message's Reasoning back as
	// reasoning_content: DeepSeek's thinking mode answers 400 without it, while other
	// providers may reject the unknown field.
	SendReasoning bool
	// MaxCompletionTokens sends max_completion_tokens instead of the older max_tokens
	// (OpenAI's reasoning models reject max_tokens; most compatible servers only know it).
	MaxCompletionTokens bool
}

type openaiProvider struct {
	opts OpenAIOptions
	// Only the chat completions service, not openai.Client: the client holds every
	// service of the API as a field, and with them the linker kept all their
	// methods for the one used here.
	chat openai.ChatCompletionService
	who  who
}

// NewOpenAI returns a streaming provider for any OpenAI-compatible chat-completions
// endpoint, built on openai-go with the SDK's own retries off (WithRetry retries,
// and only before any token was shown).
func NewOpenAI(o OpenAIOptions) Provider {
	o.Endpoint = o.withDefaults("openai")
	return &openaiProvider{
		opts: o,
		chat: openai.NewChatCompletionService(append(clientOptions(o.BaseURL, o.APIKey, o.ProviderName, o.HTTPClient),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				resp, err := next(r)
				chatstream.LimitLines(resp, o.Limits)
				return resp, err
			}))...),
		who: o.who(),
	}
}

// post sends params to chat/completions and leaves the answer, unread, in resp.
// The service's New would decode it; the body-into option hands the response over
// as it comes, for the stream to be read as it arrives.
func (p *openaiProvider) post(ctx context.Context, params openai.ChatCompletionNewParams, resp **http.Response, stream bool) error {
	_, err := p.chat.New(ctx, params, option.WithJSONSet("stream", stream), option.WithResponseBodyInto(resp))
	return err
}

// clientOptions pins everything NewClient would otherwise take from OPENAI_* variables:
// base URL, key (even empty, so OPENAI_API_KEY never goes to another server), admin
// key, and, for other providers, the organization/project/custom headers.
func clientOptions(baseURL, key, provider string, hc *http.Client) []option.RequestOption {
	// The SDK's defaults first, as its NewClient puts them (each is then replaced).
	opts := append(openai.DefaultClientOptions(),
		option.WithBaseURL(baseURL),
		option.WithAPIKey(key),
		option.WithAdminAPIKey(""),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	)
	if !strings.HasPrefix(provider, "openai") {
		strip := []string{"OpenAI-Organization", "OpenAI-Project"}
		for _, line := range strings.Split(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "" {
				strip = append(strip, strings.TrimSpace(name))
			}
		}
		opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			for _, h := range strip {
				r.Header.Del(h)
			}
			return next(r)
		}))
	}
	return opts
}

func (p *openaiProvider) Name() string  { return p.opts.ProviderName }
func (p *openaiProvider) Model() string { return p.opts.Model }

// Stream sends one chat completion with stream=true and accumulates the answer.
func (p *openaiProvider) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	params := p.params(req)
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var resp *http.Response
	err := p.post(callCtx, params, &resp, true)
	if err != nil {
		return Reply{Model: p.opts.Model}, p.classifyRequestError(ctx, callCtx, resp, err)
	}
	defer resp.Body.Close()

	acc := chatstream.NewAccumulator(p.opts.Model, p.opts.Limits)
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// A server that ignored stream=true: one whole completion.
		err = acc.Whole(resp.Body, onDelta)
	} else {
		stall := time.AfterFunc(p.opts.StallTimeout, func() { cancel(errStalled) })
		err = acc.Stream(ssestream.NewDecoder(resp), func() { stall.Reset(p.opts.StallTimeout) }, onDelta)
		stall.Stop()
	}
	reply := acc.Finish(onDelta)
	p.opts.price(&reply.Usage)
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Code == fault.BudgetExceeded {
			reply.ToolCalls = nil // a limit: the text so far is kept, the calls of a cut response never run
			return reply, fe
		}
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			return reply, p.who.classifyFailure(streamErrorFailure(se.Event.Data), err)
		}
		return reply, p.who.classifyTransport(ctx, callCtx, err)
	}
	return reply, nil
}

// classifyRequestError classifies a failure before any byte of the stream: an HTTP
// status (whatever its body looked like) or a transport error.
func (p *openaiProvider) classifyRequestError(ctx, callCtx context.Context, resp *http.Response, err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		return p.who.classifyFailure(failure{status: ae.StatusCode, header: ae.Response.Header, message: ae.Message, kind: ae.Type + " " + ae.Code}, err)
	}
	if resp != nil && resp.StatusCode >= 400 {
		// The body was not an {"error": {...}} object (a proxy's HTML page, plain text).
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		f := streamErrorFailure(body)
		f.inband, f.status, f.header = false, resp.StatusCode, resp.Header
		return p.who.classifyFailure(f, err)
	}
	return p.who.classifyTransport(ctx, callCtx, err)
}

// params builds the request. Assistant messages are built field by field (type
// "function" set on every tool call) rather than through ToParam(), which sends a
// null type for calls that streamed without one.
func (p *openaiProvider) params(req Request) openai.ChatCompletionNewParams {
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for _, m := range req.Messages {
		switch m.Role {
		case convo.System:
			msgs = append(msgs, openai.SystemMessage(m.Content))
		case convo.User:
			msgs = append(msgs, openai.UserMessage(m.Content))
		case convo.Tool:
			msgs = append(msgs, openai.ToolMessage(m.Content, m.ToolCallID))
		case convo.Assistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: argsOrEmpty(tc.Arguments)},
					},
				})
			}
			if p.opts.SendReasoning && m.Reasoning != "" && len(m.ToolCalls) > 0 {
				a.SetExtraFields(map[string]any{"reasoning_content": m.Reasoning})
			}
			msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.opts.Model),
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if p.opts.MaxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		schema := map[string]any{}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				p.opts.Logger.Warn("tool schema is not a JSON object; sending an empty one", "tool", t.Name, "err", err)
				schema = map[string]any{}
			}
		}
		if len(schema) == 0 {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fd.Parameters = shared.FunctionParameters(schema)
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return params
}

// argsOrEmpty sends "{}" for calls that streamed no arguments: several servers
// reject an empty arguments string when it comes back in the history.
func argsOrEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}
