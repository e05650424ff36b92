package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// oaRequest is the chat-completions request as the fake reads it.
type oaRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
	Messages            []struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		ToolCallID       string          `json:"tool_call_id"`
		ToolCalls        []struct {
			ID       string  `json:"id"`
			Type     *string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// flatten reads a content that is a string or an array of {type:text,text} parts.
func flatten(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

func authPresent(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != ""
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req oaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	rec := Request{Path: r.URL.Path, Protocol: "openai", Auth: authPresent(r), Header: r.Header.Clone(), Body: body,
		Model: req.Model, Stream: req.Stream, MaxTokens: max(req.MaxTokens, req.MaxCompletionTokens)}
	if req.StreamOptions != nil {
		rec.IncludeUsage = req.StreamOptions.IncludeUsage
	}
	for _, m := range req.Messages {
		msg := Message{Role: m.Role, Content: flatten(m.Content), ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			typ := "<missing>"
			if tc.Type != nil {
				typ = *tc.Type
			}
			msg.ToolCallTypes = append(msg.ToolCallTypes, typ)
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	t, idx := s.take(rec)

	if t.Status != 0 {
		writeError(w, t, false)
		return
	}
	if t.Fixture != "" {
		events, raw, err := readFixture(t.Fixture)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		t.Raw = raw
		if raw == "" {
			e := newSSE(w, r, t)
			e.errData = func() string { return openAIErrorJSON(t) }
			for _, ev := range events {
				if !e.data(ev) {
					return
				}
			}
			if !t.NoDone {
				e.data("[DONE]")
			}
			return
		}
	}
	if t.Raw != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		if t.CutAfter != 0 {
			// Cut a raw stream after CutAfter bytes.
			n := min(max(t.CutAfter, 0), len(t.Raw))
			_, _ = io.WriteString(w, t.Raw[:n])
			cut(w)
			return
		}
		_, _ = io.WriteString(w, t.Raw)
		return
	}
	if !req.Stream || t.Whole {
		writeWhole(w, req.Model, t, idx, len(body))
		return
	}
	streamOpenAI(w, r, req.Model, t, idx, len(body), rec.IncludeUsage)
}

func openAIErrorJSON(t Turn) string {
	msg := t.ErrorMessage
	if msg == "" {
		msg = "upstream model failed"
	}
	typ := t.ErrorType
	if typ == "" {
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
	return string(b)
}

// jstr is a JSON string literal.
func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pieces splits text into chunks of n words, keeping the spaces.
func pieces(text string, n int) []string {
	if text == "" {
		return nil
	}
	if n <= 0 {
		n = 1
	}
	words := strings.SplitAfter(text, " ")
	out := make([]string, 0, len(words)/n+1)
	for i := 0; i < len(words); i += n {
		out = append(out, strings.Join(words[i:min(i+n, len(words))], ""))
	}
	return out
}

// fragments splits s into pieces of n bytes (at least one piece, possibly empty).
func fragments(s string, n int) []string {
	if n <= 0 {
		n = 7
	}
	if s == "" {
		return nil
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// usageFor returns the turn's usage, or one counted from the sizes.
func usageFor(t Turn, bodyLen int) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	c := len(strings.Fields(t.Text)) + len(strings.Fields(t.Reasoning))
	for _, tc := range t.ToolCalls {
		c += 5 + len(tc.Arguments)/4
	}
	return Usage{PromptTokens: bodyLen/4 + 1, CompletionTokens: c}
}

func usageJSON(u Usage) string {
	return `{"prompt_tokens":` + strconv.Itoa(u.PromptTokens) + `,"completion_tokens":` + strconv.Itoa(u.CompletionTokens) +
		`,"total_tokens":` + strconv.Itoa(u.PromptTokens+u.CompletionTokens) +
		`,"prompt_tokens_details":{"cached_tokens":` + strconv.Itoa(u.CachedTokens) + `}}`
}

func callID(t Turn, idx, i int) string {
	if id := t.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_%d_%d", idx, i)
}

func finishReason(t Turn) string {
	if t.FinishReason != "" {
		return t.FinishReason
	}
	if len(t.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// streamOpenAI writes a turn as chat.completion.chunk events.
func streamOpenAI(w http.ResponseWriter, r *http.Request, model string, t Turn, idx, bodyLen int, includeUsage bool) {
	e := newSSE(w, r, t)
	e.errData = func() string { return openAIErrorJSON(t) }
	u := usageFor(t, bodyLen)
	head := `{"id":"chatcmpl-fake-` + strconv.Itoa(idx) + `","object":"chat.completion.chunk","created":1700000000,"model":` + jstr(model) + `,"choices":[`
	sent := 0 // completion tokens so far, for running totals
	chunk := func(choice string, finish string) bool {
		var b strings.Builder
		b.Grow(len(head) + len(choice) + 80)
		b.WriteString(head)
		if choice != "" || finish != "" {
			b.WriteString(`{"index":0,"delta":{` + choice + `},"logprobs":null,"finish_reason":`)
			if finish == "" {
				b.WriteString("null")
			} else {
				b.WriteString(jstr(finish))
			}
			b.WriteString("}")
		}
		b.WriteString("]")
		switch {
		case t.UsageEveryChunk:
			run := u
			run.CompletionTokens = min(sent, u.CompletionTokens)
			if finish != "" {
				run = u
			}
			b.WriteString(`,"usage":` + usageJSON(run))
		case t.UsageOnFinish && finish != "":
			b.WriteString(`,"usage":` + usageJSON(u))
		default:
			b.WriteString(`,"usage":null`)
		}
		b.WriteString("}")
		sent++
		return e.data(b.String())
	}
	if !chunk(`"role":"assistant","content":""`, "") {
		return
	}
	field := t.ReasoningField
	if field == "" {
		field = "reasoning_content"
	}
	for _, p := range pieces(t.Reasoning, 1) {
		if !chunk(`"content":null,`+jstr(field)+`:`+jstr(p), "") {
			return
		}
	}
	for _, p := range pieces(t.Text, t.ChunkWords) {
		if !chunk(`"content":`+jstr(p), "") {
			return
		}
	}
	finish := finishReason(t)
	finished := false
	index := func(i int) string {
		switch {
		case t.OmitIndex:
			return ""
		case t.SameIndex:
			return `"index":0,`
		}
		return `"index":` + strconv.Itoa(i) + `,`
	}
	if t.CallsInOneChunk && len(t.ToolCalls) > 0 {
		var calls []string
		for i, tc := range t.ToolCalls {
			calls = append(calls, `{`+index(i)+`"id":`+jstr(callID(t, idx, i))+`,"type":"function","function":{"name":`+jstr(tc.Name)+`,"arguments":`+jstr(tc.Arguments)+`}}`)
		}
		if !chunk(`"tool_calls":[`+strings.Join(calls, ",")+`]`, finish) {
			return
		}
		finished = true
	} else {
		for i, tc := range t.ToolCalls {
			if !chunk(`"tool_calls":[{`+index(i)+`"id":`+jstr(callID(t, idx, i))+`,"type":"function","function":{"name":`+jstr(tc.Name)+`,"arguments":""}}]`, "") {
				return
			}
			frags := fragments(tc.Arguments, t.ArgsChunk)
			for j, f := range frags {
				rep := ""
				if t.RepeatName {
					rep = `"type":"function",`
				}
				name := ""
				if t.RepeatName {
					name = `"name":"",`
				}
				fin := ""
				// The finish reason rides on the last fragment of the last call.
				if t.FinishReason == "" && i == len(t.ToolCalls)-1 && j == len(frags)-1 && t.FinishWithLastArgs {
					fin = finish
					finished = true
				}
				if !chunk(`"tool_calls":[{`+index(i)+rep+`"function":{`+name+`"arguments":`+jstr(f)+`}}]`, fin) {
					return
				}
			}
		}
	}
	if !finished && !chunk(`"content":null`, finish) {
		return
	}
	if includeUsage && !t.UsageOnFinish {
		if !e.data(head + `],"usage":` + usageJSON(u) + `}`) {
			return
		}
	}
	// A fault scheduled after the last chunk still fires.
	if !e.before() {
		return
	}
	if !t.NoDone {
		e.raw("data: [DONE]" + e.eol + e.eol)
	}
}

// writeWhole answers a non-streamed request with one chat.completion object.
func writeWhole(w http.ResponseWriter, model string, t Turn, idx, bodyLen int) {
	msg := map[string]any{"role": "assistant", "content": t.Text}
	if t.Reasoning != "" {
		msg["reasoning_content"] = t.Reasoning
	}
	var calls []map[string]any
	for i, tc := range t.ToolCalls {
		calls = append(calls, map[string]any{"id": callID(t, idx, i), "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	u := usageFor(t, bodyLen)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-fake-%d", idx), "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(t)}},
		"usage":   map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens, "prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens}},
	})
}
