package chatstream

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

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

// Accumulator builds the reply of one OpenAI-compatible chat completion from its
// chunks (or from one whole chat.completion), robust to the servers' quirks: ids
// without index, index without id, arguments sent as an object, usage on any chunk.
// It stops at the first limit hit, keeping what arrived before.
type Accumulator struct {
	content      strings.Builder
	reasoning    strings.Builder
	calls        []*callAcc
	byIndex      map[int]*callAcc
	byID         map[string]*callAcc
	finishReason string
	usage        *convo.Usage
	model        string
	modelSet     bool
	bounds       *Bounds
	err          error // a limit hit: the stream stops
}

type callAcc struct {
	id, name string
	args     strings.Builder
	started  bool
}

// NewAccumulator returns an empty accumulator for a call to model (the reply's model
// until a chunk names one), cut at the limits l (zero fields take their defaults).
func NewAccumulator(model string, l config.Limits) *Accumulator {
	return &Accumulator{model: model, bounds: NewBounds(l)}
}

// Stream reads a chat.completion.chunk event stream up to [DONE] or its end, calling
// onEvent for each event. One json.Decoder serves the whole stream: json.Unmarshal
// would build its decoder state (parse stack, error context) again for every chunk,
// that is for every token.
func (a *Accumulator) Stream(events ssestream.Decoder, onEvent func(), onDelta func(Delta)) error {
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

func (a *Accumulator) add(ch *wireChunk, onDelta func(Delta)) {
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

func (a *Accumulator) delta(d *wireDelta, onDelta func(Delta)) {
	if a.err != nil {
		return
	}
	if r := cmp.Or(d.ReasoningContent, d.Reasoning); r != "" {
		if a.err = a.bounds.AddReasoning(len(r)); a.err != nil {
			return
		}
		a.reasoning.WriteString(r)
		onDelta(Delta{Kind: DeltaReasoning, Text: r})
	}
	for _, t := range [...]string{d.Content, d.Refusal} {
		if t != "" {
			if a.err = a.bounds.AddAnswer(len(t)); a.err != nil {
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
func (a *Accumulator) toolDelta(tc *wireToolCall, onDelta func(Delta)) {
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
				if a.err = a.bounds.AddCall(); a.err != nil {
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
			if a.err = a.bounds.AddCall(); a.err != nil {
				return
			}
			c = &callAcc{}
			a.calls = append(a.calls, c)
			a.byIndex[*tc.Index] = c
		}
	case len(a.calls) > 0:
		c = a.calls[len(a.calls)-1]
	default:
		if a.err = a.bounds.AddCall(); a.err != nil {
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
		if a.err = a.bounds.CheckArgs(c.args.Len() + len(args)); a.err != nil {
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

// Finish returns the reply (tool calls whose start was not yet reported are reported
// to onDelta first); calls that never got an id get a stable synthetic one so
// that their results can still be matched.
func (a *Accumulator) Finish(onDelta func(Delta)) Reply {
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

// Whole reads a non-streamed chat.completion body as one big chunk, reading no more
// than the limits allow.
func (a *Accumulator) Whole(body io.Reader, onDelta func(Delta)) error {
	l := a.bounds.lim
	most := l.MaxAnswerBytes + l.MaxReasoningBytes + l.MaxToolCalls*l.MaxToolArgsBytes + lineSlack
	data, err := io.ReadAll(io.LimitReader(body, int64(most)+1))
	if err != nil {
		return err
	}
	if len(data) > most {
		// The bound is the sum of what each part of a reply may hold, so no one key
		// names it: say which keys make it up.
		return fault.LimitSum("the provider's response", fmt.Sprintf("%d bytes", most), fmt.Sprintf(
			"max_answer_bytes + max_reasoning_bytes + max_tool_calls × max_tool_args_bytes, and %d bytes of JSON around them", lineSlack))
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
