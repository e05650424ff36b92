package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/convo"
)

// ServerThread is one of the server's threads, as POST /api/ai/threads lists it.
type ServerThread struct {
	ID        string    `json:"thread_id"`
	GraphKey  string    `json:"graph"`
	UserID    string    `json:"user_id,omitempty"`
	Title     string    `json:"title,omitempty"`
	Messages  int       `json:"messages"`
	Pending   bool      `json:"pending"` // the server's assistant waits on a proposal
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// threadWire is a listed thread as the server may send it: the summary fields or
// the whole thread document (the server's AIThreadDocument). Unknown fields are fine.
type threadWire struct {
	ThreadID            *string           `json:"threadId"`
	Key                 *string           `json:"_key"`
	GraphKey            string            `json:"graphKey"`
	UserID              string            `json:"userId"`
	Title               string            `json:"title"`
	CreatedTime         *float64          `json:"createdTime"`
	LastUpdatedTime     *float64          `json:"lastUpdatedTime"`
	MessageCount        *int              `json:"messageCount"`
	ConversationHistory []json.RawMessage `json:"conversationHistory"`
	PendingInterrupt    json.RawMessage   `json:"pendingInterrupt"`
	HasPendingInterrupt *bool             `json:"hasPendingInterrupt"`
}

// Threads lists the server's threads of a graph, most recent first.
func (c *Client) Threads(ctx context.Context, graphKey string) ([]ServerThread, error) {
	if strings.TrimSpace(graphKey) == "" {
		return nil, &convo.Error{Code: convo.CodeConfig, Message: "no graph given — pass --graph KEY"}
	}
	body, _ := json.Marshal(struct {
		GraphKey string `json:"graphKey"`
	}{graphKey})
	raw, err := c.do(ctx, http.MethodPost, "/api/ai/threads", body, "listing the server's threads")
	if err != nil {
		return nil, err
	}
	var items []threadWire
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(t, &items)
	} else {
		var env struct {
			Threads *[]threadWire `json:"threads"`
		}
		err = json.Unmarshal(t, &env)
		if err == nil && env.Threads == nil {
			err = fmt.Errorf("no threads field")
		}
		if env.Threads != nil {
			items = *env.Threads
		}
	}
	if err != nil {
		return nil, &convo.Error{Code: convo.CodeInternal, Err: err,
			Message: "the server's thread list is not what this client expects (" + shortErr(err) + ") — the server may run another version of Nodius"}
	}
	out := make([]ServerThread, 0, len(items))
	for i, w := range items {
		t := ServerThread{GraphKey: w.GraphKey, UserID: w.UserID, Title: w.Title}
		switch {
		case w.ThreadID != nil && *w.ThreadID != "":
			t.ID = *w.ThreadID
		case w.Key != nil && *w.Key != "":
			t.ID = *w.Key
		default:
			return nil, &convo.Error{Code: convo.CodeInternal, Message: fmt.Sprintf(
				"the server's thread list has an entry without threadId (entry %d) — the server may run another version of Nodius", i+1)}
		}
		if t.GraphKey == "" {
			t.GraphKey = graphKey
		}
		if w.CreatedTime != nil {
			t.CreatedAt = time.UnixMilli(int64(*w.CreatedTime))
		}
		if w.LastUpdatedTime != nil {
			t.UpdatedAt = time.UnixMilli(int64(*w.LastUpdatedTime))
		}
		if w.MessageCount != nil {
			t.Messages = *w.MessageCount
		} else {
			t.Messages = visibleMessages(w.ConversationHistory)
		}
		if w.HasPendingInterrupt != nil {
			t.Pending = *w.HasPendingInterrupt
		} else if p := bytes.TrimSpace(w.PendingInterrupt); len(p) > 0 && string(p) != "null" {
			t.Pending = true
		}
		if t.Title == "" {
			t.Title = firstUserMessage(w.ConversationHistory)
		}
		out = append(out, t)
	}
	return out, nil
}

// visibleMessages counts the user and assistant messages of a history.
func visibleMessages(h []json.RawMessage) int {
	n := 0
	for _, raw := range h {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(raw, &m) == nil && (m.Role == "user" || m.Role == "assistant") {
			n++
		}
	}
	return n
}

func firstUserMessage(h []json.RawMessage) string {
	for _, raw := range h {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Role == "user" {
			if s, ok := m.Content.(string); ok {
				s = strings.Join(strings.Fields(s), " ")
				if r := []rune(s); len(r) > 60 {
					s = string(r[:60]) + "…"
				}
				return s
			}
		}
	}
	return ""
}

// DeleteThread deletes one of the server's threads (DELETE /api/ai/thread/:id).
func (c *Client) DeleteThread(ctx context.Context, threadID string) error {
	if strings.TrimSpace(threadID) == "" {
		return &convo.Error{Code: convo.CodeConfig, Message: "no thread id given"}
	}
	_, err := c.do(ctx, http.MethodDelete, "/api/ai/thread/"+url.PathEscape(threadID), nil, "deleting thread "+threadID+" on the server")
	return err
}

// do calls one REST endpoint with the bearer token and returns the body of a 2xx.
func (c *Client) do(ctx context.Context, method, path string, body []byte, what string) ([]byte, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	if strings.Contains(path, "%") {
		u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + path
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, &convo.Error{Code: convo.CodeInternal, Message: "could not build the request: " + err.Error(), Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	}
	resp, err := c.opt.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.networkError("reach the server at "+c.Server(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, c.networkError("read the server's answer", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(resp.StatusCode, what)
	}
	return raw, nil
}
