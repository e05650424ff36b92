package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

// MaxRetryAfter caps how long a Retry-After header may make us wait: a server asking
// for more is better reported than waited for.
const MaxRetryAfter = 60 * time.Second

// errStalled is the cancel cause of a stream that sent nothing for the stall timeout.
var errStalled = errors.New("stream stalled")

// failure is what a provider told us went wrong, whatever SDK carried it.
type failure struct {
	status  int         // HTTP status, 0 for an error event inside a stream
	header  http.Header // response headers (Retry-After)
	message string      // the provider's message
	kind    string      // the provider's error type or code ("rate_limit_error", "context_length_exceeded")
	inband  bool        // an error event inside a 200 stream
}

// who describes the call for messages: which provider, which model, what to set
// when the key is rejected. The key itself is here only to scrub it from messages.
type who struct {
	provider string
	model    string
	keyHint  string // "DEEPSEEK_API_KEY", "--api-key", ...
	baseURL  string
	key      string
}

// classifyFailure turns a provider failure into its one classified error
// (internal/fault). It is called once, where the failure is understood.
func (w who) classifyFailure(f failure, cause error) *fault.Error {
	msg := strings.ToLower(f.message + " " + f.kind)
	e := &fault.Error{Status: f.status, Err: cause}
	detail := w.scrub(f.message)
	switch {
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden ||
		(f.status == 0 && containsAny(msg, "invalid api key", "invalid_api_key", "authentication_error", "incorrect api key")):
		e.Code = fault.Auth
		hint := w.keyHint
		if hint == "" {
			hint = "NODIUS_AI_API_KEY"
		}
		if hint == "--api-key" {
			e.Message = fmt.Sprintf("the API key for %s was rejected — check the key passed with --api-key", w.provider)
		} else {
			e.Message = fmt.Sprintf("the API key for %s was rejected — set %s", w.provider, hint)
		}
		if f.status == http.StatusForbidden {
			e.Message += " (or check that the key may use model " + w.model + ")"
		}
	case f.status == http.StatusTooManyRequests || containsAny(msg, "rate_limit", "rate limit", "too many requests"):
		e.Code = fault.RateLimit
		if containsAny(msg, "insufficient_quota", "quota", "billing", "balance") {
			e.Message = fmt.Sprintf("%s says the account is out of quota — check billing, then retry", w.provider)
			break
		}
		e.Retryable = true
		e.RetryAfter = retryAfter(f.header, time.Now())
		e.Message = fmt.Sprintf("%s is rate limiting requests — wait a moment and retry", w.provider)
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf(" (it asked for %s)", e.RetryAfter.Round(time.Second))
		}
	case containsAny(msg, "context_length", "context length", "maximum context", "context window", "too many tokens",
		"prompt is too long", "reduce the length", "input is too long", "tokens exceeds", "exceeds the model"):
		e.Code = fault.ContextLength
		e.Message = fmt.Sprintf("the conversation is too long for %s — start a new thread or ask a shorter question", w.model)
	case containsAny(msg, "content_filter", "content filter", "content management policy", "flagged", "content_policy", "safety system"):
		e.Code = fault.ContentFilter
		e.Message = fmt.Sprintf("%s's content filter blocked the request — rephrase the question", w.provider)
	case f.status == http.StatusRequestTimeout:
		e.Code, e.Retryable = fault.Timeout, true
		e.Message = fmt.Sprintf("%s timed out — retry in a moment", w.provider)
	case f.status >= 500 || f.status == 529 || containsAny(msg, "overloaded", "server_error", "internal error", "service unavailable"):
		e.Code, e.Retryable = fault.ServerError, true
		if f.status > 0 {
			e.Message = fmt.Sprintf("%s had a server error (HTTP %d) — retry in a moment", w.provider, f.status)
		} else {
			e.Message = fmt.Sprintf("%s reported an error mid-answer (%s) — retry in a moment", w.provider, orDefault(detail, "server error"))
		}
	case f.status == http.StatusNotFound:
		e.Code = fault.InvalidRequest
		e.Message = fmt.Sprintf("%s answered 404 (%s) — check --model %q and --base-url", w.provider, orDefault(detail, "not found"), w.model)
	case f.status >= 400:
		e.Code = fault.InvalidRequest
		e.Message = fmt.Sprintf("%s rejected the request (HTTP %d: %s) — this is likely a bug, please report it", w.provider, f.status, orDefault(detail, http.StatusText(f.status)))
	default: // an unrecognised error event inside the stream: the provider failed mid-way
		e.Code, e.Retryable = fault.ServerError, true
		e.Message = fmt.Sprintf("%s reported an error mid-answer (%s) — retry in a moment", w.provider, orDefault(detail, "unknown error"))
	}
	return e
}

// classifyTransport classifies errors that never reached a provider's answer:
// cancellation, stalls, timeouts, refused connections, DNS, cut streams.
// parent is the caller's context: its cancellation is the user's doing.
func (w who) classifyTransport(parent context.Context, callCtx context.Context, err error) *fault.Error {
	if ce, ok := fault.As(err); ok {
		return ce
	}
	switch {
	case parent.Err() != nil && !errors.Is(context.Cause(parent), context.DeadlineExceeded):
		return &fault.Error{Code: fault.Interrupted, Message: "generation stopped — the partial answer was kept", Err: err}
	case callCtx != nil && errors.Is(context.Cause(callCtx), errStalled):
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("%s stopped sending data mid-answer — retry", w.provider)}
	}
	var ne net.Error
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || strings.Contains(err.Error(), "timeout awaiting response headers"):
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("%s did not answer in time — retry, or check the network", w.provider)}
	case errors.As(err, &dns):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot resolve the host of %s (%s) — check the network or --base-url", w.provider, w.host())}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot connect to %s at %s (connection refused) — is the server running? check --base-url", w.provider, w.host())}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("the connection to %s was cut mid-answer — retry", w.provider)}
	case errors.As(err, &op):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot reach %s at %s — check the network or --base-url", w.provider, w.host())}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &fault.Error{Code: fault.ServerError, Retryable: true, Err: err,
			Message: fmt.Sprintf("%s sent a malformed stream — retry", w.provider)}
	}
	return &fault.Error{Code: fault.Internal, Err: err,
		Message: fmt.Sprintf("unexpected error talking to %s: %s", w.provider, w.scrub(err.Error()))}
}

func (w who) host() string {
	h := w.baseURL
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	return h
}

// scrub keeps provider messages short and free of the key (some providers echo it).
func (w who) scrub(s string) string {
	s = strings.TrimSpace(s)
	if w.key != "" && len(w.key) >= 4 {
		s = strings.ReplaceAll(s, w.key, "***")
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// retryAfter reads Retry-After (seconds or an HTTP date) or OpenAI's retry-after-ms,
// capped at MaxRetryAfter; 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	if d < 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// streamErrorFailure reads an in-band error event: {"error": {"message", "type", "code"}}
// (OpenAI-compatible) or {"type":"error","error":{...}} (Anthropic); error may be a string.
func streamErrorFailure(data []byte) failure {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	f := failure{inband: true}
	if json.Unmarshal(data, &env) != nil || len(env.Error) == 0 {
		f.message = string(data)
		return f
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  int             `json:"status"`
	}
	if json.Unmarshal(env.Error, &obj) == nil {
		f.message, f.kind = obj.Message, obj.Type
		if len(obj.Code) > 0 {
			var code string
			if json.Unmarshal(obj.Code, &code) == nil {
				f.kind += " " + code
			} else if n, err := strconv.Atoi(string(obj.Code)); err == nil && n >= 400 && n < 600 {
				f.status = n
			}
		}
		if obj.Status >= 400 && obj.Status < 600 {
			f.status = obj.Status
		}
		return f
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil {
		f.message = s
	}
	return f
}
