package server

// Node types on a Nodius server. The server's editor reads a type from its
// database (POST /api/nodeconfig/get, /list); while someone edits a type, the
// server holds it in memory and writes that copy back whole when it saves. An
// approved configure_node_type is applied the way the web editor applies its own:
//
//   - an update goes through the editing socket of the type: POST /api/sync
//     {instanceId: "nodeConfig-KEY"} says which instance manages it (and makes the
//     answering one its manager), a socket there registers on the type
//     (registerUserOnNodeConfig), sends one instruction per field changed
//     (applyInstructionToNodeConfig) and asks for a save (forceSave). A web editor
//     that has the type open sees the change at once, and its server's copy, which
//     is the one saved, holds it. POST /api/nodeconfig/update would replace the
//     document in the database only: the copy of a type open in an editor would
//     not hold it, the editor would not see it, and the next save of that copy
//     would write the old fields back over it.
//   - a creation goes through POST /api/nodeconfig/create, as the web editor
//     creates a type (there is nothing to register on before it exists). The
//     server chooses the new type's key.
//
// Either way the type is read again with POST /api/nodeconfig/get before the
// change is reported applied.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// typeField is one field of a node type a configure_node_type can change, and
// where it is in the type's document.
type typeField struct {
	name string   // as in datasource.TypeFields
	path []string // in the document
}

var typeFields = []typeField{
	{"displayName", []string{"displayName"}},
	{"description", []string{"description"}},
	{"category", []string{"category"}},
	{"icon", []string{"icon"}},
	{"border", []string{"border"}},
	{"content", []string{"content"}},
	{"process", []string{"node", "process"}},
	{"handles", []string{"node", "handles"}},
	{"size", []string{"node", "size"}},
}

// named reports whether p changes the field (gives a value for it).
func named(p datasource.ConfigureNodeTypePayload, field string) bool {
	switch field {
	case "displayName":
		return p.DisplayName != ""
	case "description":
		return p.Description != ""
	case "category":
		return p.Category != ""
	case "icon":
		return p.Icon != ""
	case "border":
		return p.Border != nil
	case "content":
		return p.Content != nil
	case "process":
		return p.Process != ""
	case "handles":
		return p.Handles != nil
	case "size":
		return p.Size != nil
	}
	return false
}

// ApplyNodeType applies an approved configure_node_type on the server (see the
// top of this file) and reads the type back to check it is there. graphKey is
// the graph the proposal was made on: a new type goes to its workspace (in home
// mode, to the user's first one). The result's note says what was done and, for
// a creation, the key the server gave the type.
func (s *Source) ApplyNodeType(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (datasource.ApplyResult, error) {
	if s.api.Token() == "" {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.Auth, Message: "no token for the Nodius server — give one with --token or NODIUS_AI_TOKEN"}
	}
	var (
		res datasource.ApplyResult
		err error
	)
	switch p.Mode {
	case "create":
		res, err = s.createNodeType(ctx, graphKey, p)
	case "update":
		res, err = s.updateNodeType(ctx, p)
	default:
		return datasource.ApplyResult{}, fmt.Errorf("configure_node_type: unknown mode %q (create or update)", p.Mode)
	}
	if err == nil {
		s.typesChanged(ctx, graphKey)
	}
	return res, err
}

// createNodeType creates the type with POST /api/nodeconfig/create.
func (s *Source) createNodeType(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (datasource.ApplyResult, error) {
	workspace, err := s.workspaceFor(ctx, graphKey)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	cfg, err := datasource.ConfigFromPayload(nil, p, workspace, time.Now())
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	doc, err := configDoc(cfg)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	delete(doc, "_key") // the server chooses it
	status, data, err := s.post(ctx, "/api/nodeconfig/create", map[string]any{"nodeConfig": doc})
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	switch {
	case status == http.StatusConflict:
		// The server keeps display names unique in a workspace: also what makes a
		// retried approval find the type it made instead of making a second.
		return datasource.ApplyResult{}, &datasource.ConflictError{Err: fmt.Errorf(
			"the Nodius server did not create node type %q: a type of that name already exists in workspace %s (409%s)", p.DisplayName, workspace, nodiusapi.ServerMessage(data))}
	case status != http.StatusOK:
		return datasource.ApplyResult{}, typeStatusError("create", p.DisplayName, status, data)
	}
	var made struct {
		Key string `json:"_key"`
	}
	if json.Unmarshal(data, &made) != nil || made.Key == "" {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError,
			Message: fmt.Sprintf("the Nodius server's answer to the creation of node type %q names no key: whether it was created is not known — look at the node types in the web editor", p.DisplayName)}
	}
	got, ok, err := s.getNodeType(ctx, made.Key)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	if !ok {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"the Nodius server said it created node type %q (key %s), but POST /api/nodeconfig/get does not find it", p.DisplayName, made.Key)}
	}
	if diff := differing(got, doc, p); len(diff) > 0 {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"the Nodius server created node type %q (key %s), but it does not hold %s as proposed — look at it in the web editor", p.DisplayName, made.Key, strings.Join(diff, ", "))}
	}
	return datasource.ApplyResult{Applied: true, Note: fmt.Sprintf(
		"created node type %q on the Nodius server (key %s), in workspace %s; read back from the server", p.DisplayName, made.Key, workspace)}, nil
}

// PrepareNodeType takes, before an approval of p is sent, the registration its
// apply will need: for an update, the type's socket routed through /api/sync and
// registered as an editor of the type, held until release. An error means the
// change could not be applied, so nothing may be approved. The apply it returns
// registers once more beside the held socket (the type's edits since the first
// registration are then known) and is what ApplyNodeType does; a creation needs
// no registration and holds nothing.
func (s *Source) PrepareNodeType(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (apply func(context.Context) (datasource.ApplyResult, error), release func(), err error) {
	apply = func(ctx context.Context) (datasource.ApplyResult, error) { return s.ApplyNodeType(ctx, graphKey, p) }
	if p.Mode != "update" {
		return apply, func() {}, nil
	}
	if s.api.Token() == "" {
		return nil, nil, &fault.Error{Code: fault.Auth, Message: "no token for the Nodius server — give one with --token or NODIUS_AI_TOKEN"}
	}
	if p.TypeKey == "" {
		return nil, nil, errors.New("configure_node_type: the type to update has no key")
	}
	saved, ok, err := s.getNodeType(ctx, p.TypeKey)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, &datasource.NotFoundError{Kind: "node type", Key: p.TypeKey}
	}
	conn, _, err := s.registerNodeType(ctx, p.TypeKey, int64Of(saved["lastUpdatedTime"]))
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	return apply, func() { once.Do(func() { _ = conn.Close() }) }, nil
}

// updateNodeType changes the fields p names through the type's editing socket,
// saves it, and reads it back.
func (s *Source) updateNodeType(ctx context.Context, p datasource.ConfigureNodeTypePayload) (datasource.ApplyResult, error) {
	if p.TypeKey == "" {
		return datasource.ApplyResult{}, errors.New("configure_node_type: the type to update has no key")
	}
	saved, ok, err := s.getNodeType(ctx, p.TypeKey)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	if !ok {
		return datasource.ApplyResult{}, &datasource.ConflictError{Err: &datasource.NotFoundError{Kind: "node type", Key: p.TypeKey}}
	}
	conn, missing, err := s.registerNodeType(ctx, p.TypeKey, int64Of(saved["lastUpdatedTime"]))
	if conn != nil {
		defer conn.Close()
	}
	if err != nil {
		var re *nodiusapi.RefusedError
		if errors.As(err, &re) {
			return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Err: err, Message: fmt.Sprintf(
				"the Nodius server would not register this client as an editor of node type %s: %s; nothing was changed", p.TypeKey, re.Message)}
		}
		return datasource.ApplyResult{}, err
	}
	// The type as its editors have it: the saved one and the edits since.
	live, err := replayNodeConfig(saved, missing)
	if err != nil {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Err: err, Message: fmt.Sprintf(
			"node type %s is being edited and its edits since the last save could not be followed (%v); nothing was changed — apply it in the web editor", p.TypeKey, err)}
	}
	cur, err := configOf(live)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	if p.Before != nil {
		var changed []string
		now := datasource.TypeFields(cur)
		for _, f := range typeFields {
			if b, ok := p.Before[f.name]; ok && !datasource.SameJSON(now[f.name], b) {
				changed = append(changed, f.name)
			}
		}
		if len(changed) > 0 {
			return datasource.ApplyResult{}, &datasource.ConflictError{Err: fmt.Errorf("%w: %s of %s; nothing was changed",
				datasource.ErrTypeChanged, strings.Join(changed, ", "), p.TypeKey)}
		}
	}
	next, err := datasource.ConfigFromPayload(&cur, p, cur.Workspace, time.Now())
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	want, err := configDoc(next)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	var list []json.RawMessage
	var fields []string
	for _, f := range typeFields {
		if !named(p, f.name) {
			continue
		}
		v, _ := lookupDoc(want, f.path)
		if old, ok := lookupDoc(live, f.path); ok && datasource.SameJSON(old, v) {
			continue
		}
		in := setAlong(live, f.path, v)
		b, _ := json.Marshal(map[string]any{"i": in})
		list = append(list, b)
		fields = append(fields, f.name)
	}
	if len(list) == 0 {
		return datasource.ApplyResult{Applied: true, Note: fmt.Sprintf("node type %s already was as proposed: nothing was sent", p.TypeKey)}, nil
	}
	// At most MaxInstructions fields exist: one message, applied whole.
	if err := conn.ApplyNodeConfigInstructions(ctx, list); err != nil {
		var re *nodiusapi.RefusedError
		if errors.As(err, &re) {
			return datasource.ApplyResult{}, &datasource.ConflictError{Err: fmt.Errorf(
				"the Nodius server refused the change of node type %s (%s); nothing was applied", p.TypeKey, re.Message)}
		}
		return datasource.ApplyResult{}, err
	}
	if err := conn.SaveNodeConfig(ctx); err != nil {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Err: err, Message: fmt.Sprintf(
			"the Nodius server took the change of node type %s (its editors see it) but did not confirm saving it (%v) — it saves by itself within about 30 s; look at the type in the web editor", p.TypeKey, err)}
	}
	got, ok, err := s.getNodeType(ctx, p.TypeKey)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	if !ok {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"node type %s was changed and saved, but POST /api/nodeconfig/get no longer finds it — look at it in the web editor", p.TypeKey)}
	}
	if diff := differing(got, want, p); len(diff) > 0 {
		return datasource.ApplyResult{}, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"the Nodius server acknowledged the change of node type %s and its save, but POST /api/nodeconfig/get does not show %s as proposed — look at it in the web editor", p.TypeKey, strings.Join(diff, ", "))}
	}
	return datasource.ApplyResult{Applied: true, Note: fmt.Sprintf(
		"changed %s of node type %s through the Nodius server's editing socket and saved it: its editors see it now; read back from the server", strings.Join(fields, ", "), p.TypeKey)}, nil
}

// differing names the fields p sets whose value in got is not the one in want.
func differing(got, want map[string]any, p datasource.ConfigureNodeTypePayload) []string {
	var out []string
	for _, f := range typeFields {
		if !named(p, f.name) {
			continue
		}
		w, _ := lookupDoc(want, f.path)
		g, _ := lookupDoc(got, f.path)
		if !datasource.SameJSON(w, g) {
			out = append(out, f.name)
		}
	}
	return out
}

// getNodeType reads one node type (POST /api/nodeconfig/get {_key}); ok is false
// when the server does not know it (404).
func (s *Source) getNodeType(ctx context.Context, key string) (map[string]any, bool, error) {
	status, data, err := s.post(ctx, "/api/nodeconfig/get", map[string]any{"_key": key})
	if err != nil {
		return nil, false, err
	}
	if status == http.StatusNotFound {
		return nil, false, nil
	}
	if status != http.StatusOK {
		return nil, false, typeStatusError("read", key, status, data)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, false, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf("the Nodius server's node type %s is not a JSON object", key)}
	}
	return doc, true, nil
}

func typeStatusError(what, key string, status int, data []byte) error {
	if status >= 500 {
		return &fault.Error{Code: fault.ServerError, Status: status,
			Message: fmt.Sprintf("the Nodius server failed to %s node type %s (%d%s)", what, key, status, nodiusapi.ServerMessage(data))}
	}
	return &fault.Error{Code: fault.InvalidRequest, Status: status,
		Message: fmt.Sprintf("the Nodius server refused to %s node type %s (%d%s)", what, key, status, nodiusapi.ServerMessage(data))}
}

// registerNodeType opens a socket where POST /api/sync routes node type key's
// instance ("nodeConfig-KEY"; the call makes the answering instance its manager
// when none is) and registers it as an editor of the type. A registration refused
// because the instance does not manage the type (another one claimed it since) is
// routed and tried once more, as for a graph.
func (s *Source) registerNodeType(ctx context.Context, key string, fromTimestamp int64) (*nodiusapi.Editor, []json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		conn, err := s.dialInstance(ctx, "nodeConfig-"+key, nodiusapi.EditorOptions{AckTimeout: s.ackWait})
		if err != nil {
			return nil, nil, err
		}
		missing, err := conn.RegisterNodeConfig(ctx, key, s.name, fromTimestamp)
		if err == nil {
			return conn, missing, nil
		}
		_ = conn.Close()
		if attempt > 0 || !notManaged(err) {
			return nil, nil, err
		}
	}
}

// workspaceFor is the workspace a new type goes to: the graph's, else (home
// mode, or a graph that cannot be read) the user's first one, read from the
// authResult of a socket opened for it, as a new graph's is.
func (s *Source) workspaceFor(ctx context.Context, graphKey string) (string, error) {
	if graphKey != "" && graphKey != "home" {
		if g, err := s.Graph(ctx, graphKey); err == nil && g.Workspace != "" {
			return g.Workspace, nil
		}
	}
	conn, err := s.dial(ctx, "", nodiusapi.EditorOptions{})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return Workspace(conn.User), nil
}

// typesChanged reads the node types again for a graph followed, so that its next
// reads show the change (a type's edits reach no graph's socket).
func (s *Source) typesChanged(ctx context.Context, graphKey string) {
	s.mu.Lock()
	f := s.follows[graphKey]
	s.mu.Unlock()
	if f == nil {
		return
	}
	f.mu.Lock()
	loaded, ws := f.loaded, ""
	if f.graph != nil {
		ws = workspaceOf(f.graph)
	}
	f.mu.Unlock()
	if !loaded {
		return
	}
	configs, defaults, err := s.nodeConfigs(ctx, ws)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if f.stale == "" {
			f.stale = "a node type changed and the node types could not be read again"
		}
		return
	}
	f.configs, f.defaults = configs, defaults
	f.version++
}

// replayNodeConfig applies a node type's editing messages (missingMessages of its
// registration) to a copy of its saved document.
func replayNodeConfig(doc map[string]any, missing []json.RawMessage) (map[string]any, error) {
	var cur any = nodiusgraph.Clone(doc)
	for _, raw := range missing {
		var m struct {
			Type         string `json:"type"`
			Instructions []struct {
				I nodiusgraph.Instruction `json:"i"`
			} `json:"instructions"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if m.Type != "applyInstructionToNodeConfig" {
			continue
		}
		for _, in := range m.Instructions {
			next, err := nodiusgraph.Apply(cur, in.I)
			if err != nil {
				return nil, err
			}
			cur = next
		}
	}
	out, ok := cur.(map[string]any)
	if !ok {
		return nil, errors.New("the type is no longer an object")
	}
	return out, nil
}

// configDoc is a config as the server's document (plain JSON values).
func configDoc(c datasource.NodeConfig) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// configOf reads a server document as a config.
func configOf(doc map[string]any) (datasource.NodeConfig, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return datasource.NodeConfig{}, err
	}
	var c datasource.NodeConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return datasource.NodeConfig{}, &fault.Error{Code: fault.ServerError, Err: err, Message: "the Nodius server's node type cannot be read: " + err.Error()}
	}
	return c, nil
}

func lookupDoc(doc map[string]any, path []string) (any, bool) {
	var cur any = doc
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func int64Of(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// applyNodeTypeAction is ApplyAction for a configure_node_type: the type as the
// person was shown it (the expectation's Before) is checked on the live type.
func (s *Source) applyNodeTypeAction(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload, o datasource.ApplyOptions) (datasource.ApplyResult, error) {
	if p.Before == nil && o.Expect != nil && o.Expect.ConfigureNodeType != nil {
		p.Before = o.Expect.ConfigureNodeType.Before
	}
	return s.ApplyNodeType(ctx, graphKey, p)
}
