package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm/chatstream"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Completer makes one call without streaming and returns the whole reply. It is for
// small side calls whose answer is only useful whole (query expansion): nothing is
// shown while it runs, so there is nothing to stream. Both providers implement it;
// tool calls in the reply are ignored by its callers.
type Completer interface {
	Complete(ctx context.Context, req Request) (Reply, error)
}

// Complete sends one chat completion with stream=false (and no stream_options,
// which OpenAI refuses without streaming) and reads the whole JSON answer.
func (p *openaiProvider) Complete(ctx context.Context, req Request) (Reply, error) {
	params := p.params(req)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Without a stream there is no stall to watch: the whole answer must come within
	// the header timeout plus the stall timeout.
	timer := time.AfterFunc(p.opts.HeaderTimeout+p.opts.StallTimeout, func() { cancel(errStalled) })
	defer timer.Stop()

	var resp *http.Response
	err := p.post(callCtx, params, &resp, false)
	if err != nil {
		return Reply{Model: p.opts.Model}, p.classifyRequestError(ctx, callCtx, resp, err)
	}
	defer resp.Body.Close()
	acc := chatstream.NewAccumulator(p.opts.Model, p.opts.Limits)
	err = acc.Whole(resp.Body, func(Delta) {})
	reply := acc.Finish(func(Delta) {})
	p.opts.price(&reply.Usage)
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Code == fault.BudgetExceeded {
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

// Complete sends one message request without streaming.
func (p *anthropicProvider) Complete(ctx context.Context, req Request) (Reply, error) {
	system, msgs := convertMessagesToAnthropic(req.Messages, p.opts.Logger)
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.opts.Model),
		MaxTokens: int64(DefaultAnthropicMaxTokens),
		Messages:  msgs,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(p.opts.HeaderTimeout+p.opts.StallTimeout, func() { cancel(errStalled) })
	defer timer.Stop()
	msg, err := p.client.New(callCtx, params)
	if err != nil {
		return Reply{Model: p.opts.Model}, p.classify(ctx, callCtx, err)
	}
	reply := Reply{Model: string(msg.Model), FinishReason: string(msg.StopReason)}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	reply.Content = text.String()
	u := msg.Usage
	reply.Usage = convo.Usage{
		PromptTokens:     int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		CachedTokens:     int(u.CacheReadInputTokens),
		CompletionTokens: int(u.OutputTokens),
	}
	p.opts.price(&reply.Usage)
	return reply, nil
}
