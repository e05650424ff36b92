package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

// ServerThread is one of the server's threads, as POST /api/ai/threads lists it.
type ServerThread struct {
	ID          string    `json:"thread_id"`
	GraphKey    string    `json:"graph"`
	ContextType string    `json:"context_type,omitempty"`
	Title       string    `json:"title,omitempty"`
	Messages    int       `json:"messages"`
	ToolCalls   int       `json:"tool_calls"`
	TotalTokens int       `json:"total_tokens"`
	TotalCost   float64   `json:"total_cost"`
	Model       string    `json:"model,omitempty"`
	Pending     bool      `json:"has_pending_action"` // the server's assistant waits on a decision
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// threadWire is a listed thread as the real server sends it.
type threadWire struct {
	ThreadID         string   `json:"threadId"`
	GraphKey         string   `json:"graphKey"`
	ContextType      string   `json:"contextType"`
	Title            string   `json:"title"`
	TotalTokens      int      `json:"totalTokens"`
	TotalCost        float64  `json:"totalCost"`
	Model            string   `json:"model"`
	MessageCount     int      `json:"messageCount"`
	ToolCallCount    int      `json:"toolCallCount"`
	CreatedTime      *float64 `json:"createdTime"`
	LastUpdatedTime  *float64 `json:"lastUpdatedTime"`
	HasPendingAction bool     `json:"hasPendingAction"`
}

// Threads lists the caller's threads on the server, of one graph when graphKey is
// set (the body is strict: {graphKey?, contextType?}), most recent first.
func (c *Client) Threads(ctx context.Context, graphKey string) ([]ServerThread, error) {
	body := []byte("{}")
	if strings.TrimSpace(graphKey) != "" {
		body, _ = json.Marshal(struct {
			GraphKey string `json:"graphKey"`
		}{graphKey})
	}
	raw, err := c.do(ctx, http.MethodPost, "/api/ai/threads", body, "listing the server's threads")
	if err != nil {
		return nil, err
	}
	var env struct {
		Threads *[]threadWire `json:"threads"`
	}
	err = json.Unmarshal(raw, &env)
	if err == nil && env.Threads == nil {
		err = fmt.Errorf("no threads field")
	}
	if err != nil {
		return nil, &fault.Error{Code: fault.Internal, Err: err,
			Message: "the server's thread list is not what this client expects (" + shortErr(err) + ") — the server may run another version of Nodius"}
	}
	out := make([]ServerThread, 0, len(*env.Threads))
	for i, w := range *env.Threads {
		if w.ThreadID == "" {
			return nil, &fault.Error{Code: fault.Internal, Message: fmt.Sprintf(
				"the server's thread list has an entry without threadId (entry %d) — the server may run another version of Nodius", i+1)}
		}
		t := ServerThread{ID: w.ThreadID, GraphKey: w.GraphKey, ContextType: w.ContextType, Title: w.Title, Messages: w.MessageCount,
			ToolCalls: w.ToolCallCount, TotalTokens: w.TotalTokens, TotalCost: w.TotalCost, Model: w.Model, Pending: w.HasPendingAction}
		if w.CreatedTime != nil {
			t.CreatedAt = time.UnixMilli(int64(*w.CreatedTime))
		}
		if w.LastUpdatedTime != nil {
			t.UpdatedAt = time.UnixMilli(int64(*w.LastUpdatedTime))
		}
		out = append(out, t)
	}
	return out, nil
}

// HistoryMessage is one message of a server thread's history (OpenAI format).
type HistoryMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text is the message's content as text (a string, or the JSON it is).
func (m HistoryMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return ""
	}
	return string(m.Content)
}

// ToolCallNames lists the names of the message's tool calls.
func (m HistoryMessage) ToolCallNames() []string {
	var calls []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(m.ToolCalls, &calls) != nil {
		return nil
	}
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.Function.Name)
	}
	return out
}

// Messages returns a server thread's history (GET /api/ai/thread/:id/messages):
// also a thread started in the web client.
func (c *Client) Messages(ctx context.Context, threadID string) ([]HistoryMessage, error) {
	if strings.TrimSpace(threadID) == "" {
		return nil, &fault.Error{Code: fault.Config, Message: "no thread id given"}
	}
	raw, err := c.do(ctx, http.MethodGet, "/api/ai/thread/"+url.PathEscape(threadID)+"/messages", nil, "reading thread "+threadID+" on the server")
	if err != nil {
		return nil, err
	}
	var body struct {
		History *[]HistoryMessage `json:"conversationHistory"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.History == nil {
		if err == nil {
			err = fmt.Errorf("no conversationHistory")
		}
		return nil, &fault.Error{Code: fault.Internal, Err: err,
			Message: "the server's thread history is not what this client expects (" + shortErr(err) + ") — the server may run another version of Nodius"}
	}
	return *body.History, nil
}

// DeleteThread deletes one of the server's threads (DELETE /api/ai/thread/:id).
func (c *Client) DeleteThread(ctx context.Context, threadID string) error {
	if strings.TrimSpace(threadID) == "" {
		return &fault.Error{Code: fault.Config, Message: "no thread id given"}
	}
	_, err := c.do(ctx, http.MethodDelete, "/api/ai/thread/"+url.PathEscape(threadID), nil, "deleting thread "+threadID+" on the server")
	return err
}

// do calls one REST endpoint with the bearer token and returns the body of a 2xx;
// any other status is nodiusapi's one classified error.
func (c *Client) do(ctx context.Context, method, path string, body []byte, what string) ([]byte, error) {
	var b any
	if body != nil {
		b = body
	}
	return c.api.Call(ctx, method, path, b, what)
}

// send calls one REST endpoint of the client's own server (never another host:
// the token is for it) with the bearer token, and returns the status and the body
// whatever the status.
func (c *Client) send(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var b any
	if body != nil {
		b = body
	}
	a, err := c.api.Do(ctx, method, path, b)
	return a.Status, a.Body, err
}
