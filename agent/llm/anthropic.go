package llm

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm/chatstream"
	"github.com/nodius/nodius-ai/internal/fault"
)

// DefaultAnthropicMaxTokens is sent when the request sets none: Anthropic requires it.
const DefaultAnthropicMaxTokens = 4096

// AnthropicOptions configure the native Anthropic provider. ProviderName defaults
// to "anthropic", KeyHint to ANTHROPIC_API_KEY, BaseURL to https://api.anthropic.com.
type AnthropicOptions struct {
	Endpoint
}

type anthropicProvider struct {
	opts AnthropicOptions
	// Only the messages service, not anthropic.Client: the client holds every
	// service of the API as a field, and with them the linker kept all their
	// methods (about 10 MB of binary) for the one used here.
	client anthropic.MessageService
	who    who
}

// NewAnthropic returns a provider speaking Anthropic's messages API natively,
// converting the OpenAI-shaped history every thread keeps (system parameter, tool_use /
// tool_result blocks), so a thread can change provider midway.
// The SDK's environment defaults (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN...) and
// retries are off: configuration and retries are ours.
func NewAnthropic(o AnthropicOptions) Provider {
	if o.KeyHint == "" {
		o.KeyHint = "ANTHROPIC_API_KEY"
	}
	if o.BaseURL == "" {
		o.BaseURL = "https://api.anthropic.com"
	}
	o.Endpoint = o.withDefaults("anthropic")
	// What anthropic.NewClient does with WithoutEnvironmentDefaults, for the
	// messages service alone.
	client := anthropic.NewMessageService(
		option.WithEnvironmentProduction(),
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			resp, err := next(r)
			chatstream.LimitLines(resp, o.Limits)
			return resp, err
		}),
	)
	return &anthropicProvider{opts: o, client: client, who: o.who()}
}

func (p *anthropicProvider) Name() string  { return p.opts.ProviderName }
func (p *anthropicProvider) Model() string { return p.opts.Model }

func (p *anthropicProvider) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
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
	if tools := convertToolsToAnthropic(req.Tools, p.opts.Logger); len(tools) > 0 {
		params.Tools = tools
	}

	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// NewStreaming waits for the headers inside the call, so the first wait also
	// allows the header timeout; from the first event on, silence is bounded by the
	// stall timeout alone.
	stall := time.AfterFunc(p.opts.HeaderTimeout+p.opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	stream := p.client.NewStreaming(callCtx, params)
	defer stream.Close()

	reply := Reply{Model: p.opts.Model}
	var text, reasoning strings.Builder
	type block struct {
		call *convo.ToolCall
		args strings.Builder
	}
	blocks := map[int64]*block{}
	var order []*block
	b := chatstream.NewBounds(p.opts.Limits)
	var limitErr error
	for limitErr == nil && stream.Next() {
		stall.Reset(p.opts.StallTimeout)
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			if ev.Message.Model != "" {
				reply.Model = string(ev.Message.Model)
			}
			u := ev.Message.Usage
			reply.Usage.CachedTokens = int(u.CacheReadInputTokens)
			// Anthropic's input_tokens excludes cached reads: prompt = both.
			reply.Usage.PromptTokens = int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
			reply.Usage.CompletionTokens = int(u.OutputTokens)
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				if limitErr = b.AddCall(); limitErr != nil {
					break
				}
				b := &block{call: &convo.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}
				blocks[ev.Index] = b
				order = append(order, b)
				onDelta(Delta{Kind: DeltaToolStart, ToolCall: convo.ToolCall{ID: b.call.ID, Name: b.call.Name}})
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					if limitErr = b.AddAnswer(len(ev.Delta.Text)); limitErr != nil {
						break
					}
					text.WriteString(ev.Delta.Text)
					onDelta(Delta{Kind: DeltaText, Text: ev.Delta.Text})
				}
			case "thinking_delta":
				if ev.Delta.Thinking != "" {
					if limitErr = b.AddReasoning(len(ev.Delta.Thinking)); limitErr != nil {
						break
					}
					reasoning.WriteString(ev.Delta.Thinking)
					onDelta(Delta{Kind: DeltaReasoning, Text: ev.Delta.Thinking})
				}
			case "input_json_delta":
				if blk := blocks[ev.Index]; blk != nil {
					if limitErr = b.CheckArgs(blk.args.Len() + len(ev.Delta.PartialJSON)); limitErr != nil {
						break
					}
					blk.args.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				reply.FinishReason = string(ev.Delta.StopReason)
			}
			// The usage here is cumulative: keep the last.
			if ev.Usage.OutputTokens > 0 {
				reply.Usage.CompletionTokens = int(ev.Usage.OutputTokens)
			}
			if ev.Usage.InputTokens > 0 {
				reply.Usage.PromptTokens = int(ev.Usage.InputTokens + ev.Usage.CacheReadInputTokens + ev.Usage.CacheCreationInputTokens)
				reply.Usage.CachedTokens = int(ev.Usage.CacheReadInputTokens)
			}
		}
	}
	err := stream.Err()
	reply.Content, reply.Reasoning = text.String(), reasoning.String()
	if fe, ok := fault.As(err); ok && fe.Code == fault.BudgetExceeded {
		limitErr = fe // a stream line over the limit
	}
	for _, b := range order {
		args := b.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		b.call.Arguments = args
		reply.ToolCalls = append(reply.ToolCalls, *b.call)
	}
	p.opts.price(&reply.Usage)
	if limitErr != nil {
		// A limit: keep the text so far; the calls of a cut response never run.
		reply.ToolCalls = nil
		return reply, limitErr
	}
	if err != nil {
		return reply, p.classify(ctx, callCtx, err)
	}
	return reply, nil
}

// classify maps the SDK's errors: HTTP statuses, error events (an *Error with the
// stream's 200 status, or a plain "received error while streaming" error), transport.
func (p *anthropicProvider) classify(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(context.Cause(callCtx), errStalled) {
		return p.who.classifyTransport(ctx, callCtx, err)
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		f := streamErrorFailure([]byte(ae.RawJSON()))
		f.kind += " " + string(ae.Type())
		if ae.StatusCode >= 400 {
			f.status, f.inband = ae.StatusCode, false
			if ae.Response != nil {
				f.header = ae.Response.Header
			}
		}
		return p.who.classifyFailure(f, err)
	}
	const prefix = "received error while streaming: "
	if s := err.Error(); strings.HasPrefix(s, prefix) {
		return p.who.classifyFailure(streamErrorFailure([]byte(strings.TrimPrefix(s, prefix))), err)
	}
	return p.who.classifyTransport(ctx, callCtx, err)
}

// convertMessagesToAnthropic converts the history: system messages are
// joined by blank lines into the system parameter; assistant tool calls become
// tool_use blocks; consecutive tool results merge into ONE user message of
// tool_result blocks (Anthropic forbids consecutive user messages, so a user message
// right after results joins them too). Malformed stored arguments become {} (logged).
func convertMessagesToAnthropic(history []convo.Message, log *slog.Logger) (string, []anthropic.MessageParam) {
	var system []string
	var out []anthropic.MessageParam
	appendUser := func(blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.NewUserMessage(blocks...))
	}
	for _, m := range history {
		switch m.Role {
		case convo.System:
			if strings.TrimSpace(m.Content) != "" {
				system = append(system, m.Content)
			}
		case convo.User:
			if m.Content == "" {
				continue
			}
			appendUser(anthropic.NewTextBlock(m.Content))
		case convo.Tool:
			content := m.Content
			if content == "" {
				content = "(empty result)"
			}
			appendUser(anthropic.NewToolResultBlock(m.ToolCallID, content, false))
		case convo.Assistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				var input any = map[string]any{}
				if strings.TrimSpace(tc.Arguments) != "" {
					var v map[string]any
					if err := json.Unmarshal([]byte(tc.Arguments), &v); err != nil || v == nil {
						log.Warn("malformed stored tool arguments; sending {}", "tool", tc.Name, "id", tc.ID, "err", err)
					} else {
						input = v
					}
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) == 0 {
				continue // an empty assistant turn (interrupted before any token)
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		}
	}
	return strings.Join(system, "\n\n"), out
}

// convertToolsToAnthropic maps function definitions to Anthropic tools
// (name, description, input_schema); an empty list gives nil so no tools are sent.
func convertToolsToAnthropic(tools []convo.ToolDef, log *slog.Logger) []anthropic.ToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		extra := map[string]any{}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				log.Warn("tool schema is not a JSON object", "tool", t.Name, "err", err)
			}
			var all map[string]any
			if json.Unmarshal(t.Parameters, &all) == nil {
				for k, v := range all {
					if k != "type" && k != "properties" && k != "required" {
						extra[k] = v
					}
				}
			}
		}
		if schema.Properties == nil {
			schema.Properties = map[string]any{}
		}
		is := anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}
		if len(extra) > 0 {
			is.ExtraFields = extra
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: is}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return out
}
