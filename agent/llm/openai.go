package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
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
	opts   OpenAIOptions
	client openai.Client
	who    who
}

// NewOpenAI returns a streaming provider for any OpenAI-compatible chat-completions
// endpoint, built on openai-go with the SDK's own retries off (WithRetry retries,
// and only before any token was shown).
func NewOpenAI(o OpenAIOptions) Provider {
	o.Endpoint = o.withDefaults("openai")
	return &openaiProvider{
		opts: o,
		client: openai.NewClient(append(clientOptions(o.BaseURL, o.APIKey, o.ProviderName, o.HTTPClient),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				resp, err := next(r)
				limitLines(resp, o.Limits)
				return resp, err
			}))...),
		who: o.who(),
	}
}

// clientOptions pins everything NewClient would otherwise take from OPENAI_* variables:
// base URL, key (even empty, so OPENAI_API_KEY never goes to another server), admin
// key, and, for other providers, the organization/project/custom headers.
func clientOptions(baseURL, key, provider string, hc *http.Client) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		option.WithAPIKey(key),
		option.WithAdminAPIKey(""),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
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
	err := p.client.Post(callCtx, "chat/completions", params, &resp, option.WithJSONSet("stream", true))
	if err != nil {
		return Reply{Model: p.opts.Model}, p.classifyRequestError(ctx, callCtx, resp, err)
	}
	defer resp.Body.Close()

	acc := newAccumulator(p.opts.Model, p.opts.Limits)
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// A server that ignored stream=true: one whole completion.
		err = acc.whole(resp.Body, onDelta)
	} else {
		stall := time.AfterFunc(p.opts.StallTimeout, func() { cancel(errStalled) })
		err = acc.stream(ssestream.NewDecoder(resp), func() { stall.Reset(p.opts.StallTimeout) }, onDelta)
		stall.Stop()
	}
	reply := acc.finish(onDelta)
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

// wireChunk is the subset of chat.completion.chunk we read, decoded with
// encoding/json: four times cheaper than the SDK's reflective decoder, and it sees
// the non-standard fields (reasoning_content, reasoning, prompt_cache_hit_tokens,
// a missing index) directly. Text fields are plain strings: null and "" mean the
// same here, and a pointer would cost an allocation per token.
type wireChunk struct {
	Model   string        `json:"model"`
	Choices []wireChoice  `json:"choices"`
	Usage   *wireUsage    `json:"usage"`
	XGroq   *wireGroqInfo `json:"x_groq"`
}

// reset empties c for the next chunk but keeps the storage of its choices, which
// the decoder then fills in place.
func (c *wireChunk) reset() {
	choices := c.Choices[:cap(c.Choices)]
	clear(choices)
	*c = wireChunk{Choices: choices[:0]}
}

type wireGroqInfo struct {
	Usage *wireUsage `json:"usage"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Message      wireDelta `json:"message"` // non-streamed completions
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	Refusal          string         `json:"refusal"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a string, or (some servers) an object
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int  `json:"prompt_tokens"`
	CompletionTokens    int  `json:"completion_tokens"`
	PromptCacheHit      *int `json:"prompt_cache_hit_tokens"` // DeepSeek
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() convo.Usage {
	out := convo.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	switch {
	case u.PromptCacheHit != nil:
		out.CachedTokens = *u.PromptCacheHit
	case u.PromptTokensDetails != nil:
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// accumulator builds the reply from chunks, robust to the quirks of DESIGN.md §7.
type accumulator struct {
	content      strings.Builder
	reasoning    strings.Builder
	calls        []*callAcc
	byIndex      map[int]*callAcc
	byID         map[string]*callAcc
	finishReason string
	usage        *convo.Usage
	model        string
	modelSet     bool
	bounds       *bounds
	err          error // a limit hit: the stream stops
}

type callAcc struct {
	id, name string
	args     strings.Builder
	started  bool
}

func newAccumulator(model string, l config.Limits) *accumulator {
	return &accumulator{model: model, bounds: newBounds(l)}
}

// stream reads a chat.completion.chunk event stream up to [DONE] or its end, calling
// onEvent for each event. One json.Decoder serves the whole stream: json.Unmarshal
// would build its decoder state (parse stack, error context) again for every chunk,
// that is for every token.
func (a *accumulator) stream(events ssestream.Decoder, onEvent func(), onDelta func(Delta)) error {
	var src eventData
	dec := json.NewDecoder(&src)
	var ch wireChunk
	seen := false
	for events.Next() {
		onEvent()
		seen = true
		ev := events.Event()
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			return nil
		}
		if hasError(ev.Data) {
			return &ssestream.StreamError{Message: "received error while streaming", Event: ev}
		}
		src.data = ev.Data
		ch.reset()
		if err := dec.Decode(&ch); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// The event ended inside the value: malformed, not a cut connection.
				err = fmt.Errorf("truncated JSON in a stream event: %w", &json.SyntaxError{Offset: dec.InputOffset()})
			}
			return err
		}
		if dec.More() {
			return fmt.Errorf("more than one JSON value in a stream event: %w", &json.SyntaxError{Offset: dec.InputOffset()})
		}
		a.add(&ch, onDelta)
		if a.err != nil {
			return a.err
		}
	}
	if err := events.Err(); err != nil || seen {
		return err
	}
	// Bytes, but not one event: not a chat-completion stream (a wrong URL, a proxy).
	return errNotStream
}

// errNotStream is a 200 answer without a single server-sent event.
var errNotStream = &ssestream.StreamError{Message: "the answer was not a chat-completion event stream",
	Event: ssestream.Event{Data: []byte(`{"error":{"message":"the answer held no chat-completion event (is --base-url an OpenAI-compatible /v1 endpoint?)","type":"invalid_response"}}`)}}

// eventData feeds the stream's json.Decoder one event at a time: it reads the
// current event's data, then reports io.EOF until the next event is set.
type eventData struct{ data []byte }

func (e *eventData) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// hasError reports whether a JSON object has a non-null top-level "error": an error
// event inside a stream, or an error body sent with status 200.
func hasError(data []byte) bool {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return false
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null"
}

func (a *accumulator) add(ch *wireChunk, onDelta func(Delta)) {
	if ch.Model != "" && !a.modelSet {
		a.model, a.modelSet = ch.Model, true
	}
	// Usage may come as running totals on every chunk, or once on the finish chunk,
	// or on a final chunk without choices: the last one seen is the call's usage.
	if ch.Usage != nil {
		u := ch.Usage.usage()
		a.usage = &u
	} else if ch.XGroq != nil && ch.XGroq.Usage != nil {
		u := ch.XGroq.Usage.usage()
		a.usage = &u
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // n > 1 is never requested
		}
		a.delta(&c.Delta, onDelta)
		if c.FinishReason != "" {
			a.finishReason = c.FinishReason
		}
	}
}

func (a *accumulator) delta(d *wireDelta, onDelta func(Delta)) {
	if a.err != nil {
		return
	}
	if r := cmp.Or(d.ReasoningContent, d.Reasoning); r != "" {
		if a.err = a.bounds.addReasoning(len(r)); a.err != nil {
			return
		}
		a.reasoning.WriteString(r)
		onDelta(Delta{Kind: DeltaReasoning, Text: r})
	}
	for _, t := range [...]string{d.Content, d.Refusal} {
		if t != "" {
			if a.err = a.bounds.addAnswer(len(t)); a.err != nil {
				return
			}
			a.content.WriteString(t)
			onDelta(Delta{Kind: DeltaText, Text: t})
		}
	}
	for i := range d.ToolCalls {
		a.toolDelta(&d.ToolCalls[i], onDelta)
		if a.err != nil {
			return
		}
	}
}

// toolDelta merges one tool-call fragment. The call is found by id first (servers
// that reuse index 0 for every parallel call, or omit index), then by index, then,
// for an id-less fragment without index, it continues the latest call.
func (a *accumulator) toolDelta(tc *wireToolCall, onDelta func(Delta)) {
	if a.byIndex == nil {
		a.byIndex, a.byID = map[int]*callAcc{}, map[string]*callAcc{}
	}
	var c *callAcc
	switch {
	case tc.ID != "":
		c = a.byID[tc.ID]
		if c == nil {
			if tc.Index != nil {
				if prev := a.byIndex[*tc.Index]; prev != nil && prev.id == "" {
					c = prev // the id arrives after an id-less first fragment
				}
			}
			if c == nil {
				if a.err = a.bounds.addCall(); a.err != nil {
					return
				}
				c = &callAcc{}
				a.calls = append(a.calls, c)
			}
			c.id = tc.ID
			a.byID[tc.ID] = c
		}
		if tc.Index != nil {
			a.byIndex[*tc.Index] = c
		}
	case tc.Index != nil:
		c = a.byIndex[*tc.Index]
		if c == nil {
			if a.err = a.bounds.addCall(); a.err != nil {
				return
			}
			c = &callAcc{}
			a.calls = append(a.calls, c)
			a.byIndex[*tc.Index] = c
		}
	case len(a.calls) > 0:
		c = a.calls[len(a.calls)-1]
	default:
		if a.err = a.bounds.addCall(); a.err != nil {
			return
		}
		c = &callAcc{}
		a.calls = append(a.calls, c)
	}
	// Never overwrite a known name with an empty or repeated one.
	if n := tc.Function.Name; n != "" && c.name == "" {
		c.name = n
	}
	if args := tc.Function.Arguments; len(args) > 0 && string(args) != "null" {
		if a.err = a.bounds.checkArgs(c.args.Len() + len(args)); a.err != nil {
			return
		}
		if args[0] == '"' {
			var s string
			if json.Unmarshal(args, &s) == nil {
				c.args.WriteString(s)
			}
		} else {
			c.args.Write(args) // an object sent whole (some local servers)
		}
	}
	if !c.started && c.id != "" && c.name != "" {
		c.started = true
		onDelta(Delta{Kind: DeltaToolStart, ToolCall: convo.ToolCall{ID: c.id, Name: c.name}})
	}
}

// finish returns the reply; calls that never got an id get a stable synthetic one so
// that their results can still be matched.
func (a *accumulator) finish(onDelta func(Delta)) Reply {
	r := Reply{
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finishReason,
		Model:        a.model,
	}
	if a.usage != nil {
		r.Usage = *a.usage
	}
	for i, c := range a.calls {
		if c.id == "" {
			c.id = "call_" + strconv.Itoa(i)
		}
		if !c.started {
			c.started = true
			onDelta(Delta{Kind: DeltaToolStart, ToolCall: convo.ToolCall{ID: c.id, Name: c.name}})
		}
		r.ToolCalls = append(r.ToolCalls, convo.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	return r
}

// whole reads a non-streamed chat.completion body as one big chunk.
func (a *accumulator) whole(body io.Reader, onDelta func(Delta)) error {
	l := a.bounds.lim
	most := l.MaxAnswerBytes + l.MaxReasoningBytes + l.MaxToolCalls*l.MaxToolArgsBytes + lineSlack
	data, err := io.ReadAll(io.LimitReader(body, int64(most)+1))
	if err != nil {
		return err
	}
	if len(data) > most {
		return fault.Limit("the provider's response", "max_answer_bytes", l.MaxAnswerBytes)
	}
	if hasError(data) {
		return &ssestream.StreamError{Message: "error in response", Event: ssestream.Event{Data: data}}
	}
	var ch wireChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return err
	}
	for i := range ch.Choices {
		ch.Choices[i].Delta = ch.Choices[i].Message
		for j := range ch.Choices[i].Delta.ToolCalls {
			if ch.Choices[i].Delta.ToolCalls[j].Index == nil {
				k := j
				ch.Choices[i].Delta.ToolCalls[j].Index = &k
			}
		}
	}
	a.add(&ch, onDelta)
	return a.err
}
