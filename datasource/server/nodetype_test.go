package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// typeEditor is a web editor with a node type open: it claimed the type through
// /api/sync and registered on it, and records what it receives.
type typeEditor struct {
	c   *nodiusapi.Editor
	mu  sync.Mutex
	got []string // types of the frames received
	ch  chan struct{}
}

func openType(t *testing.T, s *servertest.Server, token, key string) *typeEditor {
	t.Helper()
	ctx := context.Background()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/sync", bytes.NewReader([]byte(`{"instanceId":"nodeConfig-`+key+`"}`)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	e := &typeEditor{ch: make(chan struct{}, 100)}
	c, err := nodiusapi.DialEditor(ctx, s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: token}, AckTimeout: 5 * time.Second,
		OnFrame: func(f nodiusapi.Frame) {
			e.mu.Lock()
			e.got = append(e.got, f.Type)
			e.mu.Unlock()
			if f.Type == "applyInstructionToNodeConfig" && !f.Ack {
				e.ch <- struct{}{}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.RegisterNodeConfig(ctx, key, "web editor", 0); err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

func typeProcess(doc map[string]any) string {
	node, _ := doc["node"].(map[string]any)
	p, _ := node["process"].(string)
	return p
}

// shownType is the type as the local agent shows it when it proposes (Before).
func shownType(t *testing.T, src interface {
	Configs(context.Context, string) ([]datasource.NodeConfig, error)
}, key string) map[string]any {
	t.Helper()
	cs, err := src.Configs(context.Background(), graphKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Key == key {
			return datasource.TypeFields(c)
		}
	}
	t.Fatalf("no type %s", key)
	return nil
}

func typeAction(p datasource.ConfigureNodeTypePayload) datasource.Action {
	return datasource.Action{Type: datasource.ConfigureNodeTypeAction, ConfigureNodeType: &p}
}

// TestNodeTypeUpdateGoesThroughTheTypeSocket: an approved change of a type's
// code is applied as the web editor applies one: claimed, registered on the type,
// one instruction, saved; it is in the database (/api/nodeconfig/get) when the
// apply returns, and a web editor that has the type open receives it — and
// keeps it when it saves its own copy after (an /update would have been
// overwritten by that save).
func TestNodeTypeUpdateGoesThroughTheTypeSocket(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	web := openType(t, s, "tok-carol", "log-node")
	p := datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "log-node", DisplayName: "Logger", Process: "log(2);\nnext();",
		Before: shownType(t, src, "log-node")}
	a := typeAction(p)
	res, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
	if err != nil || !res.Applied {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if !strings.Contains(res.Note, "read back") {
		t.Errorf("note %q", res.Note)
	}
	if got := typeProcess(s.NodeConfig("log-node")); got != p.Process {
		t.Errorf("saved process %q, want %q", got, p.Process)
	}
	for what, want := range map[string]int{"/api/nodeconfig/update": 0, "applyInstructionToNodeConfig": 1, "forceSave": 1, "/api/nodeconfig/create": 0} {
		if got := s.TypeRequests(what); got != want {
			t.Errorf("%s sent %d time(s), want %d", what, got, want)
		}
	}
	select {
	case <-web.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the web editor with the type open did not receive the change")
	}
	// The web editor changes the description and saves: the code stays.
	in, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": []string{"description"}, "v": "edited in the web editor"}})
	if err := web.c.ApplyNodeConfigInstructions(ctx, []json.RawMessage{in}); err != nil {
		t.Fatal(err)
	}
	if err := web.c.SaveNodeConfig(ctx); err != nil {
		t.Fatal(err)
	}
	doc := s.NodeConfig("log-node")
	if typeProcess(doc) != p.Process || doc["description"] != "edited in the web editor" {
		t.Errorf("after the web editor's save: process %q, description %v", typeProcess(doc), doc["description"])
	}
	// The source's next reads show the new code.
	if got := shownType(t, src, "log-node")["process"]; got != p.Process {
		t.Errorf("the source still shows process %v", got)
	}
}

// TestNodeTypeUpdateChangedSinceShown: a type edited since the proposal was
// shown (here in a web editor, not saved yet) is a conflict; nothing is sent.
func TestNodeTypeUpdateChangedSinceShown(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	before := shownType(t, src, "log-node")
	web := openType(t, s, "tok-carol", "log-node")
	in, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": []string{"node", "process"}, "v": "carol's code"}})
	if err := web.c.ApplyNodeConfigInstructions(ctx, []json.RawMessage{in}); err != nil {
		t.Fatal(err)
	}
	a := typeAction(datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "log-node", DisplayName: "Logger", Process: "mine", Before: before})
	_, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
	if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrTypeChanged) || !strings.Contains(err.Error(), "process") {
		t.Fatalf("err = %v, want the type changed (process)", err)
	}
	if n := s.TypeRequests("applyInstructionToNodeConfig"); n != 1 { // carol's only
		t.Errorf("%d applyInstructionToNodeConfig, want carol's 1", n)
	}
	if got := typeProcess(s.LiveNodeConfig("log-node")); got != "carol's code" {
		t.Errorf("live process %q", got)
	}
}

// TestNodeTypeUpdateNotSaved: a server that acknowledges the save but does not
// write it is found out by reading the type back: the apply fails and says so.
func TestNodeTypeUpdateNotSaved(t *testing.T) {
	s := standIn(t)
	src := source(t, s, "tok-alice", nil)
	s.LoseNextTypeSave()
	a := typeAction(datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "log-node", DisplayName: "Logger", Process: "lost()"})
	res, err := src.ApplyAction(context.Background(), graphKey, a)
	if err == nil || res.Applied || !strings.Contains(err.Error(), "/api/nodeconfig/get does not show process") {
		t.Fatalf("res %+v, err = %v", res, err)
	}
}

// TestNodeTypeCreate: a new type is created with POST /api/nodeconfig/create in
// the graph's workspace, under the key the server chooses, and read back; a
// second approval of the same type is refused by the server (its name is taken)
// rather than making a second type.
func TestNodeTypeCreate(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	a := typeAction(datasource.ConfigureNodeTypePayload{Mode: "create", TypeKey: "rate-limiter", DisplayName: "Rate Limiter",
		Category: "custom", Process: "await wait(1000);\nnext();"})
	res, err := src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
	if err != nil || !res.Applied {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if s.TypeRequests("/api/nodeconfig/create") != 1 {
		t.Errorf("%d creations", s.TypeRequests("/api/nodeconfig/create"))
	}
	var made map[string]any
	for _, c := range shownTypes(t, src) {
		if c.DisplayName == "Rate Limiter" {
			made = datasource.TypeFields(c)
			if !strings.Contains(res.Note, c.Key) || c.Workspace != "2bef1a5a3bd4" {
				t.Errorf("note %q, key %s, workspace %s", res.Note, c.Key, c.Workspace)
			}
		}
	}
	if made == nil || made["process"] != "await wait(1000);\nnext();" {
		t.Fatalf("the source does not list the new type: %v", made)
	}
	_, err = src.ApplyAction(ctx, graphKey, a, datasource.Expect(a))
	if !datasource.IsConflict(err) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second apply: %v", err)
	}
	if s.TypeRequests("/api/nodeconfig/create") != 2 || len(shownTypes(t, src)) != 5 {
		t.Errorf("a second type was made")
	}
}

func shownTypes(t *testing.T, src interface {
	Configs(context.Context, string) ([]datasource.NodeConfig, error)
}) []datasource.NodeConfig {
	t.Helper()
	cs, err := src.Configs(context.Background(), graphKey)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestNodeTypeClaimedFirst: the type is claimed through /api/sync before the
// socket registers on it (the server refuses a registration without the claim).
func TestNodeTypeClaimedFirst(t *testing.T) {
	s := standIn(t)
	src := source(t, s, "tok-alice", nil)
	a := typeAction(datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "log-node", DisplayName: "Logger", Process: "x()"})
	if _, err := src.ApplyAction(context.Background(), graphKey, a); err != nil {
		t.Fatal(err)
	}
	claimed := false
	for _, r := range s.Requests() {
		claimed = claimed || (r.Path == "/api/sync" && strings.Contains(r.Body, `"nodeConfig-log-node"`))
	}
	if !claimed {
		t.Error("no POST /api/sync {instanceId: nodeConfig-log-node}")
	}
}

// TestPrepareNodeTypeRegistersFirst: an update's registration on the type is
// taken by PrepareNodeType, before anything is applied (the server's assistant
// is approved only once it succeeded); a type the server does not have is an
// error there, with nothing registered; a creation holds nothing.
func TestPrepareNodeTypeRegistersFirst(t *testing.T) {
	s := standIn(t)
	ctx := context.Background()
	src := source(t, s, "tok-alice", nil)
	p := datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "log-node", DisplayName: "Logger", Process: "x()"}
	apply, release, err := src.PrepareNodeType(ctx, graphKey, p)
	if err != nil {
		t.Fatal(err)
	}
	if s.TypeRequests("registerUserOnNodeConfig") != 1 || s.TypeRequests("applyInstructionToNodeConfig") != 0 {
		t.Fatalf("prepared: %d registrations, %d changes", s.TypeRequests("registerUserOnNodeConfig"), s.TypeRequests("applyInstructionToNodeConfig"))
	}
	res, err := apply(ctx)
	release()
	release() // more than once is harmless
	if err != nil || !res.Applied || s.TypeRequests("applyInstructionToNodeConfig") != 1 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if got := typeProcess(s.NodeConfig("log-node")); got != "x()" {
		t.Errorf("saved process %q", got)
	}

	_, _, err = src.PrepareNodeType(ctx, graphKey, datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "nosuchtype", DisplayName: "X"})
	if err == nil || s.TypeRequests("registerUserOnNodeConfig") != 2 {
		t.Fatalf("unknown type: %v, %d registrations", err, s.TypeRequests("registerUserOnNodeConfig"))
	}
	apply, release, err = src.PrepareNodeType(ctx, graphKey, datasource.ConfigureNodeTypePayload{Mode: "create", DisplayName: "Y"})
	if err != nil || apply == nil || release == nil || s.TypeRequests("registerUserOnNodeConfig") != 2 {
		t.Fatalf("create: %v", err)
	}
	release()
}
