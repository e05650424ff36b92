package remotetest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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

// The non-streaming endpoints answer with the same scripts, validate strictly and
// check the bearer token.
func TestHTTPChatAndResume(t *testing.T) {
	s := remotetest.New(t)
	s.Token = "tok"
	s.SetChat(func(ss *remotetest.Session) {
		ss.Token("I will ")
		ss.Propose("c1", "propose_delete_node", map[string]any{"nodeKey": "n", "reason": "r"}, `{"type":"delete_node","payload":{"nodeKey":"n"}}`)
	})
	s.SetResume(func(ss *remotetest.Session) { ss.Complete("applied") })

	if code, _ := post(t, s.URL+"/api/ai/chat", "bad", `{"graphKey":"g","message":"m"}`); code != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", code)
	}
	if code, _ := post(t, s.URL+"/api/ai/chat", "tok", `{"graphKey":"g","message":"m","extra":1}`); code != http.StatusBadRequest {
		t.Fatalf("unknown field accepted: %d", code)
	}
	if len(s.Violations()) != 1 {
		t.Fatalf("violations %v", s.Violations())
	}
	code, out := post(t, s.URL+"/api/ai/chat", "tok", `{"graphKey":"g","message":"delete n"}`)
	if code != 200 || out["type"] != "interrupt" || out["proposedAction"] == nil || out["threadId"] == "" {
		t.Fatalf("chat: %d %v", code, out)
	}
	id := out["threadId"].(string)
	if s.Thread(id).Pending == nil {
		t.Fatal("no pending proposal")
	}
	code, out = post(t, s.URL+"/api/ai/resume", "tok", `{"threadId":"`+id+`","approved":true}`)
	if code != 200 || out["type"] != "message" || out["message"] != "applied" {
		t.Fatalf("resume: %d %v", code, out)
	}
	code, _ = post(t, s.URL+"/api/ai/resume", "tok", `{"threadId":"`+id+`","approved":true}`)
	if code != http.StatusInternalServerError {
		t.Fatalf("resume with nothing pending: %d", code)
	}
}
