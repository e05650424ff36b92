package chatstream

import (
	"bytes"
	"io"
	"net/http"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Bounds counts what one response has sent against the configured limits, so that a
// model that never stops (a 65 MB answer, 5,000 tool calls, 50 MB of arguments) is cut
// as soon as it goes over, with memory bounded by the limits rather than by the stream.
type Bounds struct {
	lim                      config.Limits
	answer, reasoning, calls int
}

// NewBounds counts against the limits l (zero fields take their defaults).
func NewBounds(l config.Limits) *Bounds { return &Bounds{lim: l.WithDefaults()} }

// AddAnswer counts n more bytes of answer text.
func (b *Bounds) AddAnswer(n int) error {
	b.answer += n
	if b.answer > b.lim.MaxAnswerBytes {
		return fault.Limit("the model's answer", "max_answer_bytes", b.lim.MaxAnswerBytes)
	}
	return nil
}

// AddReasoning counts n more bytes of reasoning.
func (b *Bounds) AddReasoning(n int) error {
	b.reasoning += n
	if b.reasoning > b.lim.MaxReasoningBytes {
		return fault.Limit("the model's reasoning", "max_reasoning_bytes", b.lim.MaxReasoningBytes)
	}
	return nil
}

// AddCall counts one more tool call in the response.
func (b *Bounds) AddCall() error {
	b.calls++
	if b.calls > b.lim.MaxToolCalls {
		return fault.Limit("the number of tool calls in one response", "max_tool_calls", b.lim.MaxToolCalls)
	}
	return nil
}

// CheckArgs checks the arguments of one call, n bytes so far.
func (b *Bounds) CheckArgs(n int) error {
	if n > b.lim.MaxToolArgsBytes {
		return fault.Limit("the arguments of one tool call", "max_tool_args_bytes", b.lim.MaxToolArgsBytes)
	}
	return nil
}

// lineSlack is what one stream line may hold beyond its payload: the JSON around it.
const lineSlack = config.StreamLineSlack

// LimitLines bounds every line of resp's body (an SSE event, or a line of a JSON
// body) at max_stream_line_bytes: by default one event may carry a whole answer,
// reasoning or call's arguments (servers that do not stream them), plus its JSON, and
// no more. A 20 MB line is refused after that many bytes instead of being buffered
// whole by an SSE decoder.
func LimitLines(resp *http.Response, l config.Limits) {
	if resp == nil || resp.Body == nil {
		return
	}
	resp.Body = &lineLimiter{rc: resp.Body, max: l.WithDefaults().MaxStreamLineBytes}
}

// lineLimiter passes a body through and fails once a line runs past max bytes.
type lineLimiter struct {
	rc   io.ReadCloser
	max  int
	line int // bytes since the last newline
	err  error
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.rc.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			l.line += len(chunk)
			break
		}
		l.line += i
		if l.line > l.max {
			break
		}
		l.line, chunk = 0, chunk[i+1:]
	}
	if l.line > l.max {
		l.err = fault.Limit("one line of the provider's stream", "max_stream_line_bytes", l.max)
		return 0, l.err
	}
	return n, err
}

func (l *lineLimiter) Close() error { return l.rc.Close() }
