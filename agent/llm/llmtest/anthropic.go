package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// anRequest is the Anthropic messages request as the fake reads it.
type anRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req anRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	rec := Request{Path: r.URL.Path, Protocol: "anthropic", Auth: authPresent(r), Header: r.Header.Clone(), Body: body,
		Model: req.Model, Stream: req.Stream, MaxTokens: req.MaxTokens, System: flatten(req.System)}
	for _, m := range req.Messages {
		msg := Message{Role: m.Role}
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			msg.Content = str
		} else {
			var blocks []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				msg.Blocks = append(msg.Blocks, Block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input,
					ToolUseID: b.ToolUseID, Content: flatten(b.Content), IsError: b.IsError})
				switch b.Type {
				case "text":
					msg.Content += b.Text
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				}
			}
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	t, idx := s.take(rec)
	if t.Status != 0 {
		writeError(w, t, true)
		return
	}
	if t.Raw != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, t.Raw)
		return
	}
	if !req.Stream {
		writeAnthropicWhole(w, req.Model, t, idx, len(body))
		return
	}
	streamAnthropic(w, r, req.Model, t, idx, len(body))
}

// writeAnthropicWhole answers a non-streamed request with one message object (text
// only: enough for the side calls that do not stream).
func writeAnthropicWhole(w http.ResponseWriter, model string, t Turn, idx, bodyLen int) {
	u := usageFor(t, bodyLen)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_fake_" + strconv.Itoa(idx), "type": "message", "role": "assistant", "model": model,
		"content":     []any{map[string]any{"type": "text", "text": t.Text}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.PromptTokens - u.CachedTokens, "cache_read_input_tokens": u.CachedTokens,
			"cache_creation_input_tokens": 0, "output_tokens": u.CompletionTokens},
	})
}

// streamAnthropic writes a turn as Anthropic message stream events.
func streamAnthropic(w http.ResponseWriter, r *http.Request, model string, t Turn, idx, bodyLen int) {
	e := newSSE(w, r, t)
	e.errData = func() string {
		typ := t.ErrorType
		if typ == "" {
			typ = "overloaded_error"
		}
		msg := t.ErrorMessage
		if msg == "" {
			msg = "Overloaded"
		}
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return string(b)
	}
	u := usageFor(t, bodyLen)
	ev := func(name, payload string) bool { return e.event(name, payload) }
	start := `{"type":"message_start","message":{"id":"msg_fake_` + strconv.Itoa(idx) + `","type":"message","role":"assistant","model":` + jstr(model) +
		`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":` + strconv.Itoa(u.PromptTokens-u.CachedTokens) +
		`,"cache_read_input_tokens":` + strconv.Itoa(u.CachedTokens) + `,"cache_creation_input_tokens":0,"output_tokens":1}}}`
	if !ev("message_start", start) {
		return
	}
	block := 0
	if t.Reasoning != "" {
		if !ev("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(block)+`,"content_block":{"type":"thinking","thinking":"","signature":""}}`) {
			return
		}
		for _, p := range pieces(t.Reasoning, 1) {
			if !ev("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(block)+`,"delta":{"type":"thinking_delta","thinking":`+jstr(p)+`}}`) {
				return
			}
		}
		if !ev("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(block)+`,"delta":{"type":"signature_delta","signature":"sig"}}`) ||
			!ev("content_block_stop", `{"type":"content_block_stop","index":`+strconv.Itoa(block)+`}`) {
			return
		}
		block++
	}
	if t.Text != "" {
		if !ev("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(block)+`,"content_block":{"type":"text","text":""}}`) {
			return
		}
		if t.KeepAlive && !ev("ping", `{"type":"ping"}`) {
			return
		}
		for _, p := range pieces(t.Text, t.ChunkWords) {
			if !ev("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(block)+`,"delta":{"type":"text_delta","text":`+jstr(p)+`}}`) {
				return
			}
		}
		if !ev("content_block_stop", `{"type":"content_block_stop","index":`+strconv.Itoa(block)+`}`) {
			return
		}
		block++
	}
	for i, tc := range t.ToolCalls {
		id := callID(t, idx, i)
		if strings.HasPrefix(id, "call_") {
			id = "toolu_" + strings.TrimPrefix(id, "call_")
		}
		if !ev("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(block)+`,"content_block":{"type":"tool_use","id":`+jstr(id)+`,"name":`+jstr(tc.Name)+`,"input":{}}}`) {
			return
		}
		for _, f := range fragments(tc.Arguments, t.ArgsChunk) {
			if !ev("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(block)+`,"delta":{"type":"input_json_delta","partial_json":`+jstr(f)+`}}`) {
				return
			}
		}
		if !ev("content_block_stop", `{"type":"content_block_stop","index":`+strconv.Itoa(block)+`}`) {
			return
		}
		block++
	}
	stop := t.FinishReason
	if stop == "" {
		stop = "end_turn"
		if len(t.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	if !ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+jstr(stop)+`,"stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(u.CompletionTokens)+`}}`) {
		return
	}
	if !ev("message_stop", `{"type":"message_stop"}`) {
		return
	}
	e.before()
}
