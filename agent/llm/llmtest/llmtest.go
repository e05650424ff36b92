// Package llmtest is a fake LLM server on loopback for tests: it speaks the OpenAI
// chat-completions SSE protocol (/v1/chat/completions), Anthropic's messages SSE
// protocol (/v1/messages) and OpenAI embeddings (/v1/embeddings), following a script
// of turns. Each turn is an answer (text, reasoning, tool calls with fragmented
// arguments, usage) or a fault (an HTTP status with Retry-After, a cut, an error
// event, a stall). Every request body is recorded for assertions.
//
// From a test in any package:
//
//	srv := llmtest.Start(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "read_node", Arguments: `{"key":"a"}`}}},
//		llmtest.Turn{Text: "done"})
//	p := llm.NewOpenAI(llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: srv.OpenAIURL(), Model: "fake"}})
//	...
//	srv.Requests()[1].Messages // what the client sent back
//
// As a process (end-to-end tests of the binary): go run ./agent/llm/llmtest/cmd/fakellm
// --addr 127.0.0.1:0 --script turns.json; it prints its base URL on stdout and serves
// GET /_requests (recorded requests as JSON) and POST /_script (replace the script).
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one scripted answer of the server, consumed in order by chat requests
// (OpenAI and Anthropic alike). Zero fields are omitted from the answer.
type Turn struct {
	// Answer.
	Reasoning    string     `json:"reasoning,omitempty"`     // streamed first, as reasoning_content (or thinking)
	Text         string     `json:"text,omitempty"`          // streamed in pieces of ChunkWords words
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`    // streamed after the text
	Usage        *Usage     `json:"usage,omitempty"`         // default: counted from the request and the answer
	FinishReason string     `json:"finish_reason,omitempty"` // default: "tool_calls" with calls, else "stop"
	ChunkWords   int        `json:"chunk_words,omitempty"`   // words per text chunk (default 1)
	ArgsChunk    int        `json:"args_chunk,omitempty"`    // bytes per arguments fragment (default 7)

	// Wire quirks (OpenAI protocol).
	ReasoningField     string        `json:"reasoning_field,omitempty"`       // "reasoning_content" (default) or "reasoning"
	OmitIndex          bool          `json:"omit_index,omitempty"`            // tool-call deltas without "index"
	SameIndex          bool          `json:"same_index,omitempty"`            // every parallel call on index 0 (matched by id)
	RepeatName         bool          `json:"repeat_name,omitempty"`           // later fragments repeat "name": "" and "type"
	CallsInOneChunk    bool          `json:"calls_in_one_chunk,omitempty"`    // all calls whole in one chunk, finish_reason on it
	FinishWithLastArgs bool          `json:"finish_with_last_args,omitempty"` // finish_reason on the last arguments fragment
	UsageEveryChunk    bool          `json:"usage_every_chunk,omitempty"`     // running totals on every chunk (keep the last)
	UsageOnFinish      bool          `json:"usage_on_finish,omitempty"`       // usage on the finish chunk, not a separate one
	KeepAlive          bool          `json:"keep_alive,omitempty"`            // ": keep-alive" comment lines between chunks
	CRLF               bool          `json:"crlf,omitempty"`                  // \r\n framing
	NoDone             bool          `json:"no_done,omitempty"`               // end without data: [DONE]
	Delay              time.Duration `json:"delay,omitempty"`                 // pause between chunks (nanoseconds in JSON)

	// Faults.
	Status       int           `json:"status,omitempty"`        // answer this HTTP status with an error body
	RetryAfter   string        `json:"retry_after,omitempty"`   // Retry-After header with Status
	ErrorType    string        `json:"error_type,omitempty"`    // error type/code in the body or event
	ErrorMessage string        `json:"error_message,omitempty"` // error message in the body or event
	ErrorAfter   int           `json:"error_after,omitempty"`   // send an error event after N chunks (-1: at once)
	CutAfter     int           `json:"cut_after,omitempty"`     // drop the connection after N chunks (-1: at once)
	StallAfter   int           `json:"stall_after,omitempty"`   // stop sending after N chunks until the client leaves (-1: at once)
	Stall        time.Duration `json:"stall,omitempty"`         // with StallAfter: resume after this long (0: never)

	// Replay: a recorded stream (.sse sent as is, .chunks.txt framed as data: lines).
	Fixture string `json:"fixture,omitempty"`
	// Whole answers one chat.completion JSON object even to a streaming request
	// (servers that ignore stream=true).
	Whole bool `json:"whole,omitempty"`
	// Raw is sent as the body verbatim (Content-Type text/event-stream).
	Raw string `json:"raw,omitempty"`
}

// ToolCall is one scripted tool call. An empty ID gets "call_<turn>_<n>".
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage of a scripted turn.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

// Script is what the fakellm process reads: the turns, and whether to loop over them.
type Script struct {
	Turns []Turn `json:"turns"`
	// Loop restarts the turns when they run out; otherwise the server answers
	// "(fake: no more scripted turns)" as text.
	Loop bool `json:"loop,omitempty"`
	// EmbeddingDim is the size of /v1/embeddings vectors (default 64).
	EmbeddingDim int `json:"embedding_dim,omitempty"`
}

// Message is a chat message as the server received it (either protocol, flattened).
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Blocks are the content blocks of an Anthropic message (text, tool_use, tool_result).
	Blocks           []Block    `json:"blocks,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	// ToolCallType is the "type" of each tool call sent back ("function" expected).
	ToolCallTypes []string `json:"tool_call_types,omitempty"`
}

// Block is one Anthropic content block as received.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Request is one request the server received.
type Request struct {
	Path     string          `json:"path"`
	Protocol string          `json:"protocol"` // "openai", "anthropic", "embeddings"
	Auth     bool            `json:"auth"`     // an Authorization or x-api-key header was present
	Header   http.Header     `json:"-"`        // for tests in-process only (holds the key)
	Body     json.RawMessage `json:"body"`

	Model        string    `json:"model"`
	Stream       bool      `json:"stream"`
	IncludeUsage bool      `json:"include_usage"`
	MaxTokens    int       `json:"max_tokens"`
	System       string    `json:"system,omitempty"` // Anthropic's system parameter
	Messages     []Message `json:"messages,omitempty"`
	Tools        []string  `json:"tools,omitempty"` // tool names offered
	Input        []string  `json:"input,omitempty"` // embeddings input
	Turn         int       `json:"turn"`            // index of the turn that answered, -1 for none
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	// URL is the server root (http://127.0.0.1:PORT); see OpenAIURL.
	URL string

	mu       sync.Mutex
	script   Script
	next     int
	loops    int // times a looping script started over
	requests []Request
	record   func(Request)          // optional sink (the process appends NDJSON to a file)
	embed    func(string) []float32 // SetEmbed; nil: Vector
	hs       *httptest.Server
}

// New returns a server (not listening) following script; serve it with Handler.
func New(script Script) *Server {
	if script.EmbeddingDim <= 0 {
		script.EmbeddingDim = 64
	}
	return &Server{script: script}
}

// Start runs a server on loopback for the duration of tb.
func Start(tb testing.TB, turns ...Turn) *Server {
	tb.Helper()
	s := New(Script{Turns: turns})
	s.hs = httptest.NewServer(s.Handler())
	s.URL = s.hs.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops a server started by Start, dropping open streams.
func (s *Server) Close() {
	if s.hs != nil {
		s.hs.CloseClientConnections()
		s.hs.Close()
	}
}

// OpenAIURL is the base URL for OpenAI-compatible clients (URL + "/v1").
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// AnthropicURL is the base URL for the Anthropic client (the root).
func (s *Server) AnthropicURL() string { return s.URL }

// SetScript replaces the script and starts again from its first turn.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc.EmbeddingDim <= 0 {
		sc.EmbeddingDim = s.script.EmbeddingDim
	}
	s.script, s.next = sc, 0
}

// OnRequest sets a sink called with every recorded request.
func (s *Server) OnRequest(f func(Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record = f
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the chat requests only (no embeddings).
func (s *Server) ChatRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Protocol != "embeddings" {
			out = append(out, r)
		}
	}
	return out
}

// Handler serves the protocols and the control endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveOpenAI)
	mux.HandleFunc("POST /chat/completions", s.serveOpenAI)
	mux.HandleFunc("POST /v1/messages", s.serveAnthropic)
	mux.HandleFunc("POST /v1/embeddings", s.serveEmbeddings)
	mux.HandleFunc("POST /embeddings", s.serveEmbeddings)
	mux.HandleFunc("GET /_requests", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Requests())
	})
	mux.HandleFunc("POST /_script", func(w http.ResponseWriter, r *http.Request) {
		var sc Script
		if err := json.NewDecoder(r.Body).Decode(&sc); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.SetScript(sc)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_reset", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		s.requests, s.next = nil, 0
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// take records the request and returns the turn that answers it.
func (s *Server) take(rec Request) (Turn, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, seq := -1, -1
	turn := Turn{Text: "(fake: no more scripted turns)"}
	if rec.Protocol != "embeddings" {
		n := len(s.script.Turns)
		if s.next >= n && s.script.Loop && n > 0 {
			s.next = 0
			s.loops++
		}
		if s.next < n {
			idx, turn = s.next, s.script.Turns[s.next]
			seq = idx + s.loops*n // a looping script still gives each answer its own ids, as a real model does
			s.next++
		}
	}
	rec.Turn = idx
	s.requests = append(s.requests, rec)
	if s.record != nil {
		s.record(rec)
	}
	return turn, seq
}

// writeError answers a scripted HTTP error in the protocol's shape.
func writeError(w http.ResponseWriter, t Turn, anthropic bool) {
	if t.RetryAfter != "" {
		w.Header().Set("Retry-After", t.RetryAfter)
	}
	msg := t.ErrorMessage
	if msg == "" {
		msg = http.StatusText(t.Status)
	}
	typ := t.ErrorType
	if typ == "" {
		typ = defaultErrorType(t.Status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(t.Status)
	if anthropic {
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": typ, "param": nil}})
}

func defaultErrorType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 429:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// sse writes events, flushing each, and carries out the turn's faults. ok is false
// once the stream must stop (cut, stall without resume, client gone).
type sse struct {
	w       http.ResponseWriter
	r       *http.Request
	fl      http.Flusher
	t       Turn
	n       int // events written
	eol     string
	errData func() string // the in-band error event's data
}

func newSSE(w http.ResponseWriter, r *http.Request, t Turn) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	eol := "\n"
	if t.CRLF {
		eol = "\r\n"
	}
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	return &sse{w: w, r: r, fl: fl, t: t, eol: eol}
}

// before runs the faults due before event number n; false stops the stream.
func (e *sse) before() bool {
	t := e.t
	if t.CutAfter != 0 && (e.n == t.CutAfter || (t.CutAfter < 0 && e.n == 0)) {
		cut(e.w)
		return false
	}
	if t.ErrorAfter != 0 && (e.n == t.ErrorAfter || (t.ErrorAfter < 0 && e.n == 0)) {
		data := e.errData()
		if strings.Contains(data, `"type":"error"`) {
			e.raw("event: error" + e.eol + "data: " + data + e.eol + e.eol) // Anthropic
		} else {
			e.raw("data: " + data + e.eol + e.eol + "data: [DONE]" + e.eol + e.eol) // vLLM sends [DONE] after it
		}
		return false
	}
	if t.StallAfter != 0 && (e.n == t.StallAfter || (t.StallAfter < 0 && e.n == 0)) {
		if t.Stall <= 0 {
			<-e.r.Context().Done()
			return false
		}
		select {
		case <-e.r.Context().Done():
			return false
		case <-time.After(t.Stall):
		}
	}
	if e.n > 0 && t.Delay > 0 {
		select {
		case <-e.r.Context().Done():
			return false
		case <-time.After(t.Delay):
		}
	}
	if e.n > 0 && t.KeepAlive {
		e.raw(": keep-alive" + e.eol + e.eol)
	}
	return e.r.Context().Err() == nil
}

// data writes one data event; false when the stream must stop.
func (e *sse) data(payload string) bool {
	return e.event("", payload)
}

func (e *sse) event(name, payload string) bool {
	if !e.before() {
		return false
	}
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + e.eol)
	}
	b.WriteString("data: " + payload + e.eol + e.eol)
	e.raw(b.String())
	e.n++
	return true
}

func (e *sse) raw(s string) {
	_, _ = e.w.Write([]byte(s))
	if e.fl != nil {
		e.fl.Flush()
	}
}

// cut drops the connection without ending the chunked body: the client sees an
// unexpected EOF, as when a proxy or the provider dies mid-answer.
func cut(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// readFixture returns the events of a recorded stream: .chunks.txt lines become data
// events; .sse files are returned raw (framed already).
func readFixture(path string) (events []string, raw string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("llmtest: fixture: %w", err)
	}
	if strings.HasSuffix(path, ".sse") {
		return nil, string(b), nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) != "" {
			events = append(events, line)
		}
	}
	return events, "", nil
}
