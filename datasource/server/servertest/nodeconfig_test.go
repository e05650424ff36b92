package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

func postJSON(t *testing.T, s *Server, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestNodeConfigEndpoints: /get, /update (a full replace) and /create answer as
// the real server does (09-routing-forcesave.jsonl, requestNodeConfig).
func TestNodeConfigEndpoints(t *testing.T) {
	s := start(t)
	if st, body := postJSON(t, s, "/api/nodeconfig/get", "tok-alice", `{"_key":"nosuchtype"}`); st != 404 || body["error"] != "Node config not found" {
		t.Errorf("get unknown: %d %v", st, body)
	}
	if st, _ := postJSON(t, s, "/api/nodeconfig/get", "tok-bob", `{"_key":"log-node"}`); st != 404 {
		t.Errorf("bob (another workspace) got log-node: %d", st)
	}
	if st, body := postJSON(t, s, "/api/nodeconfig/update", "tok-alice", `{"nodeConfig":{"_key":"nosuchtype","displayName":"X","category":"default"}}`); st != 404 {
		t.Errorf("update unknown: %d %v", st, body)
	}
	st, body := postJSON(t, s, "/api/nodeconfig/update", "tok-alice", `{"nodeConfig":{"_key":"log-node","displayName":"Logger","category":"debug","node":{"type":"log-node","process":"x()"}}}`)
	if st != 200 || body["workspace"] != "2bef1a5a3bd4" {
		t.Fatalf("update: %d %v", st, body)
	}
	if doc := s.NodeConfig("log-node"); doc["description"] != nil || typeCode(doc) != "x()" {
		t.Errorf("update is not a full replace: %v", doc)
	}
	st, body = postJSON(t, s, "/api/nodeconfig/create", "tok-alice", `{"nodeConfig":{"_key":"mine","workspace":"2bef1a5a3bd4","displayName":"Logger","category":"debug","node":{"type":"mine"}}}`)
	if st != 409 {
		t.Errorf("create with a taken name: %d %v", st, body)
	}
	st, body = postJSON(t, s, "/api/nodeconfig/create", "tok-alice", `{"nodeConfig":{"_key":"mine","workspace":"2bef1a5a3bd4","displayName":"New","category":"debug","node":{"type":"mine"}}}`)
	key, _ := body["_key"].(string)
	if st != 200 || len(key) != 64 || body["node"].(map[string]any)["type"] != key {
		t.Errorf("create: %d %v", st, body)
	}
	if st, _ := postJSON(t, s, "/api/nodeconfig/create", "tok-bob", `{"nodeConfig":{"workspace":"2bef1a5a3bd4","displayName":"B","category":"debug","node":{}}}`); st != 403 {
		t.Errorf("bob created in alice's workspace: %d", st)
	}
}

func typeCode(doc map[string]any) string {
	n, _ := doc["node"].(map[string]any)
	c, _ := n["process"].(string)
	return c
}

// TestNodeConfigSocket: registering on a type needs the claim of /api/sync; a
// type held in memory by an editor is written back whole by its save, over what
// /update wrote meanwhile (why a client edits an open type on the socket).
func TestNodeConfigSocket(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	c, err := nodiusapi.DialEditor(ctx, s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-carol"}, AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.RegisterNodeConfig(ctx, "log-node", "carol", 0); err == nil || !strings.Contains(err.Error(), "This server don't manage nodeConfig with key:log-node") {
		t.Fatalf("registration without the claim: %v", err)
	}
	postJSON(t, s, "/api/sync", "tok-carol", `{"instanceId":"nodeConfig-log-node"}`)
	if _, err := c.RegisterNodeConfig(ctx, "log-node", "carol", 0); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": []string{"description"}, "v": "carol's"}})
	if err := c.ApplyNodeConfigInstructions(ctx, []json.RawMessage{in}); err != nil {
		t.Fatal(err)
	}
	postJSON(t, s, "/api/nodeconfig/update", "tok-alice", `{"nodeConfig":{"_key":"log-node","displayName":"Logger","category":"debug","node":{"type":"log-node","process":"alice()"}}}`)
	if typeCode(s.NodeConfig("log-node")) != "alice()" {
		t.Fatal("the update was not written")
	}
	if err := c.SaveNodeConfig(ctx); err != nil {
		t.Fatal(err)
	}
	doc := s.NodeConfig("log-node")
	if typeCode(doc) == "alice()" || doc["description"] != "carol's" {
		t.Errorf("after the editor's save: %v", doc)
	}
}
