package remotetest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
)

func post(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// The stand-in answers as the recorded server does: authResult first, strict
// frames, 401 and 400 bodies of the real shape (01, 06, 07).
func TestStandInSpeaksTheRecordedProtocol(t *testing.T) {
	s := remotetest.New(t, func(s *remotetest.Server) { s.Token = "tok" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	read := func(c *websocket.Conn) map[string]any {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	write := func(c *websocket.Conn, v string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}

	bad, _, err := websocket.Dial(ctx, s.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(bad, `{"type":"authenticate","token":"nope"}`)
	if m := read(bad); m["type"] != "authResult" || m["success"] != false || m["error"] != "Invalid token" {
		t.Fatalf("bad token: %v", m)
	}
	if _, _, err := bad.Read(ctx); websocket.CloseStatus(err) != 4001 {
		t.Fatalf("close %v, want 4001", err)
	}

	c, _, err := websocket.Dial(ctx, s.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write(c, `{"type":"ai:chat","_id":1,"graphKey":"g","message":"early"}`)
	if m := read(c); m["type"] != "authResult" || m["success"] != false {
		t.Fatalf("before authenticating: %v", m)
	}
	write(c, `{"type":"authenticate","token":"tok"}`)
	if m := read(c); m["type"] != "authResult" || m["success"] != true {
		t.Fatalf("authenticate: %v", m)
	}
	write(c, `{"type":"ai:chat","_id":5,"graphKey":"g","message":"x","token":"tok"}`)
	if m := read(c); m["type"] != "ai:error" || m["error"] != "Invalid ai:chat message" || m["_id"] != 5.0 {
		t.Fatalf("token field: %v", m)
	}
	write(c, `{"type":"ai:foo","_id":6}`)
	if m := read(c); m["error"] != "Unknown AI message type: ai:foo" {
		t.Fatalf("unknown type: %v", m)
	}
	s.SetChat(func(ss *remotetest.Session) { ss.Usage(10, 2); ss.ToolLimit(5, 10) })
	write(c, `{"type":"ai:chat","_id":7,"graphKey":"g","message":"go","contextType":"graph"}`)
	if m := read(c); m["type"] != "ai:usage" {
		t.Fatalf("usage: %v", m)
	}
	if m := read(c); m["type"] != "ai:tool_limit" || m["roundsUsed"] != 5.0 {
		t.Fatalf("tool limit: %v", m)
	}
	m := read(c)
	if m["type"] != "ai:complete" || !strings.Contains(m["fullText"].(string), `"tool_limit"`) {
		t.Fatalf("complete: %v", m)
	}

	if code, out := post(t, s.URL+"/api/ai/threads", "", `{}`); code != 401 || out["message"] != "Missing Authorization header" {
		t.Fatalf("no token: %d %v", code, out)
	}
	if code, _ := post(t, s.URL+"/api/ai/threads", "tok", `{"graphKey":"g","limit":5}`); code != 400 {
		t.Fatalf("unknown field: %d", code)
	}
	code, out := post(t, s.URL+"/api/ai/threads", "tok", `{"graphKey":"g"}`)
	list, _ := out["threads"].([]any)
	if code != 200 || len(list) != 1 || list[0].(map[string]any)["hasPendingAction"] != true {
		t.Fatalf("threads: %d %v", code, out)
	}
}
