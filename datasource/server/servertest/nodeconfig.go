package servertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
)

// Node types, as the real server keeps them: the documents /api/nodeconfig/list
// answers are the database; POST /api/nodeconfig/get reads one (of the user's
// workspaces or "root"), /create adds one under a key the server makes (its
// display name unique in the workspace), /update replaces one whole. On the
// socket, a type is edited as the web editor edits it: POST /api/sync
// {instanceId: "nodeConfig-KEY"} claims it, registerUserOnNodeConfig loads it
// into memory (refused without the claim), applyInstructionToNodeConfig changes
// the copy in memory (acknowledged, broadcast to the type's other editors),
// forceSave writes the copy to the database. A type edited in memory is written
// back whole when saved, over what /update wrote meanwhile, as the real server
// does.

// typeState is the stand-in's node types being edited.
type typeState struct {
	claimed map[string]bool      // instance ids claimed through /api/sync
	live    map[string]*liveType // by key: the copy in memory while edited
	editing map[*client]string   // the type each socket is registered on
	made    int                  // keys made by /create
	counts  map[string]int       // node type requests, by path or message type
	lose    bool                 // acknowledge the next forceSave without saving
}

type liveType struct {
	doc     map[string]any
	history []entry
	unsaved bool
}

func (t *typeState) init() {
	if t.live == nil {
		t.claimed, t.live, t.editing, t.counts = map[string]bool{}, map[string]*liveType{}, map[*client]string{}, map[string]int{}
	}
}

// TypeRequests counts the node type requests received (HTTP paths such as
// "/api/nodeconfig/update", socket messages such as "applyInstructionToNodeConfig").
func (s *Server) TypeRequests(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types.init()
	return s.types.counts[what]
}

// LoseNextTypeSave makes the next forceSave of a node type acknowledged but not
// written (a broken server): for testing that a client reads the type back.
func (s *Server) LoseNextTypeSave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types.init()
	s.types.lose = true
}

// NodeConfig returns the saved document of a node type (nil when there is none).
func (s *Server) NodeConfig(key string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.configIndex(key)
	if i < 0 {
		return nil
	}
	var doc map[string]any
	_ = json.Unmarshal(s.configs[i], &doc)
	return doc
}

// LiveNodeConfig returns the copy of a node type in memory while someone edits it
// (nil when nobody does).
func (s *Server) LiveNodeConfig(key string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types.init()
	if lt := s.types.live[key]; lt != nil {
		return nodiusgraph.Clone(lt.doc).(map[string]any)
	}
	return nil
}

func (s *Server) configIndex(key string) int {
	for i, raw := range s.configs {
		var c struct {
			Key string `json:"_key"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Key == key {
			return i
		}
	}
	return -1
}

// typeRoutes serves the node type endpoints and notes the instances /api/sync
// claims, then hands every request to next.
func (s *Server) typeRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		switch r.URL.Path {
		case "/api/sync":
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				InstanceID string `json:"instanceId"`
			}
			if _, ok := s.user(r); ok && json.Unmarshal(body, &m) == nil && m.InstanceID != "" {
				s.mu.Lock()
				s.types.init()
				s.types.claimed[m.InstanceID] = true
				s.mu.Unlock()
			}
			next.ServeHTTP(w, r)
		case "/api/nodeconfig/get", "/api/nodeconfig/update", "/api/nodeconfig/create":
			s.nodeConfigRequest(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (s *Server) nodeConfigRequest(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	u, _ := s.user(r)
	var body struct {
		Key        string         `json:"_key"`
		NodeConfig map[string]any `json:"nodeConfig"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		writeJSON(w, 500, map[string]any{"error": "Internal Server Error"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types.init()
	s.types.counts[r.URL.Path]++
	s.logf("POST %s", r.URL.Path)
	visible := append(slices.Clone(u.Workspaces), "root")
	switch r.URL.Path {
	case "/api/nodeconfig/get":
		if body.Key == "" {
			writeJSON(w, 400, map[string]any{"error": "Missing required field: _key (string) or _keys (string[])"})
			return
		}
		i := s.configIndex(body.Key)
		if i >= 0 {
			var doc map[string]any
			_ = json.Unmarshal(s.configs[i], &doc)
			if ws, _ := doc["workspace"].(string); slices.Contains(visible, ws) {
				writeJSON(w, 200, doc)
				return
			}
		}
		writeJSON(w, 404, map[string]any{"error": "Node config not found"})
	case "/api/nodeconfig/update":
		nc := body.NodeConfig
		key, _ := nc["_key"].(string)
		if nc == nil || key == "" {
			writeJSON(w, 400, map[string]any{"error": "Missing required fields"})
			return
		}
		if nc["displayName"] == nil || nc["category"] == nil {
			writeJSON(w, 400, map[string]any{"error": "Missing displayName or category in nodeConfig"})
			return
		}
		i := s.configIndex(key)
		if i < 0 {
			writeJSON(w, 404, map[string]any{"error": "Node config not found"})
			return
		}
		var old map[string]any
		_ = json.Unmarshal(s.configs[i], &old)
		ws, _ := old["workspace"].(string)
		if !slices.Contains(u.Workspaces, ws) {
			writeJSON(w, 403, map[string]any{"error": fmt.Sprintf("Access denied to workspace '%s'", ws)})
			return
		}
		doc := map[string]any{}
		for k, v := range nc {
			if k != "_id" && k != "_rev" {
				doc[k] = v
			}
		}
		doc["_key"], doc["workspace"], doc["lastUpdatedTime"] = key, ws, float64(s.now())
		s.configs[i], _ = json.Marshal(doc)
		writeJSON(w, 200, doc)
	case "/api/nodeconfig/create":
		nc := body.NodeConfig
		ws, _ := nc["workspace"].(string)
		if nc == nil || ws == "" {
			writeJSON(w, 400, map[string]any{"error": "Missing required fields"})
			return
		}
		if !slices.Contains(u.Workspaces, ws) {
			writeJSON(w, 403, map[string]any{"error": fmt.Sprintf("Access denied to workspace '%s'", ws)})
			return
		}
		name, _ := nc["displayName"].(string)
		if name == "" || nc["category"] == nil {
			writeJSON(w, 400, map[string]any{"error": "Missing displayName or category in nodeConfig"})
			return
		}
		for _, raw := range s.configs {
			var c struct {
				Workspace   string `json:"workspace"`
				DisplayName string `json:"displayName"`
			}
			if json.Unmarshal(raw, &c) == nil && c.Workspace == ws && c.DisplayName == name {
				writeJSON(w, 409, map[string]any{"error": "Node config with this displayName already exists in workspace"})
				return
			}
		}
		s.types.made++
		key := fmt.Sprintf("%064x", s.types.made)
		doc := map[string]any{}
		for k, v := range nc {
			if k != "_key" && k != "_id" && k != "_rev" {
				doc[k] = v
			}
		}
		if node, ok := doc["node"].(map[string]any); ok {
			node["type"] = key
		}
		now := float64(s.now())
		doc["_key"], doc["createdTime"], doc["lastUpdatedTime"] = key, now, now
		raw, _ := json.Marshal(doc)
		s.configs = append(s.configs, raw)
		writeJSON(w, 200, doc)
	}
}

// typeMessage answers a node type message of the editing socket; done is false
// for a message it leaves to the graph side (keep then means nothing). keep false
// closes the socket. s.mu is held.
func (s *Server) typeMessage(c *client, typ string, m map[string]any, id any, hasID bool) (keep, done bool) {
	s.types.init()
	key, editing := s.types.editing[c]
	switch typ {
	case "registerUserOnNodeConfig":
	case "applyInstructionToNodeConfig":
		if !editing {
			return false, true
		}
	case "__ping__", "forceSave":
		if !editing {
			return true, false
		}
	default:
		return true, false
	}
	s.types.counts[typ]++
	answer := func(ok bool, msg string) {
		if !hasID {
			return
		}
		resp := map[string]any{"status": ok}
		if msg != "" {
			resp["message"] = msg
		}
		c.send(map[string]any{"_id": id, "_response": resp})
	}
	switch typ {
	case "__ping__":
		c.send(map[string]any{"type": "__pong__"})
	case "registerUserOnNodeConfig":
		key, _ = m["nodeConfigKey"].(string)
		from, _ := m["fromTimestamp"].(float64)
		s.logf("registerUserOnNodeConfig %s (%s)", key, c.user.Name)
		if !s.types.claimed["nodeConfig-"+key] {
			answer(false, "This server don't manage nodeConfig with key:"+key)
			return true, true
		}
		lt := s.types.live[key]
		if lt == nil {
			i := s.configIndex(key)
			if i < 0 {
				answer(false, "Failed to load node config: NodeConfig with key "+key+" not found")
				return true, true
			}
			var doc map[string]any
			_ = json.Unmarshal(s.configs[i], &doc)
			lt = &liveType{doc: doc}
			s.types.live[key] = lt
		}
		s.types.editing[c] = key
		missing := []json.RawMessage{}
		for _, e := range lt.history {
			if float64(e.time) > from {
				missing = append(missing, e.msg)
			}
		}
		if hasID {
			c.send(map[string]any{"_id": id, "_response": map[string]any{"status": true}, "missingMessages": missing})
		}
	case "applyInstructionToNodeConfig":
		lt := s.types.live[key]
		var msg struct {
			Instructions []struct {
				I nodiusgraph.Instruction `json:"i"`
			} `json:"instructions"`
		}
		raw, _ := json.Marshal(m)
		if json.Unmarshal(raw, &msg) != nil {
			answer(false, "Invalid instruction: not an instruction list")
			return true, true
		}
		if len(msg.Instructions) > 20 {
			return false, true
		}
		var cur any = nodiusgraph.Clone(lt.doc)
		for _, in := range msg.Instructions {
			if err := in.I.Validate(); err != nil {
				answer(false, "Invalid instruction: "+err.Error())
				return true, true
			}
			next, err := nodiusgraph.Apply(cur, in.I)
			if err != nil {
				answer(false, "Error while applying instruction: "+err.Error())
				return true, true
			}
			cur = next
		}
		lt.doc, _ = cur.(map[string]any)
		lt.unsaved = true
		kept := map[string]any{}
		for k, v := range m {
			kept[k] = v
		}
		delete(kept, "_id")
		hist, _ := json.Marshal(kept)
		lt.history = append(lt.history, entry{msg: hist, time: s.now()})
		s.typeSaveStatus(key, lt)
		if hasID {
			ack := map[string]any{}
			for k, v := range m {
				ack[k] = v
			}
			ack["_response"] = map[string]any{"status": true}
			c.send(ack)
		}
		for o, k := range s.types.editing {
			if k == key && o.user.ID != c.user.ID {
				o.send(kept)
			}
		}
	case "forceSave":
		lt := s.types.live[key]
		if s.types.lose {
			s.types.lose = false
		} else if lt.unsaved {
			doc := nodiusgraph.Clone(lt.doc).(map[string]any)
			doc["lastUpdatedTime"] = float64(s.now())
			delete(doc, "_rev")
			lt.doc = doc
			raw, _ := json.Marshal(doc)
			if i := s.configIndex(key); i >= 0 {
				s.configs[i] = raw
			} else {
				s.configs = append(s.configs, raw)
			}
			lt.unsaved = false
		}
		s.typeSaveStatus(key, lt)
		if hasID {
			ack := map[string]any{}
			for k, v := range m {
				ack[k] = v
			}
			ack["_response"] = map[string]any{"status": true}
			c.send(ack)
		}
	}
	return true, true
}

// typeSaveStatus tells every editor of the type whether it has unsaved changes.
func (s *Server) typeSaveStatus(key string, lt *liveType) {
	for o, k := range s.types.editing {
		if k == key {
			o.send(map[string]any{"type": "saveStatus", "nodeConfigKey": key, "lastSaveTime": s.last, "hasUnsavedChanges": lt.unsaved, "autoSaveEnabled": true})
		}
	}
}

// ClaimNodeConfig makes this stand-in the manager of node type key, as POST
// /api/sync {"instanceId": "nodeConfig-KEY"} does (for a stand-in whose /api/sync
// another server answers, as the assistant's stand-in does).
func (s *Server) ClaimNodeConfig(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types.init()
	s.types.claimed["nodeConfig-"+key] = true
}
