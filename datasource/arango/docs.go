package arango

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// EmbeddingHashField is the node document field that records the content hash of the
// text an embedding was computed from (see datasource/embedding). Readers find it in
// Node.Extra under this name.
const EmbeddingHashField = "embeddingHash"

// isSystemField reports ArangoDB's and this package's bookkeeping fields, never
// handed to callers as unknown fields.
func isSystemField(k string) bool {
	switch k {
	case "_id", "_rev", "_oldRev", "graphKey", "_from", "_to":
		return true
	}
	return false
}

func compositeKey(graphKey, localKey string) string { return graphKey + "-" + localKey }

// localKey strips the "{graphKey}-" prefix of a stored key. A key without the prefix
// (a document written by hand) is returned unchanged.
func localKey(graphKey, stored string) string {
	return strings.TrimPrefix(stored, graphKey+"-")
}

func nodeID(graphKey, localKey string) string {
	return collNodes + "/" + compositeKey(graphKey, localKey)
}

// localFromID turns nodius_nodes/{graphKey}-{localKey} into localKey.
func localFromID(graphKey, id string) string {
	return localKey(graphKey, strings.TrimPrefix(id, collNodes+"/"))
}

func dropSystem(fields map[string]json.RawMessage) {
	for k := range fields {
		if isSystemField(k) {
			delete(fields, k)
		}
	}
}

// fieldsOf decodes a document's top-level fields, for what the model's own decoding
// may not keep (when Extra is not filled).
func fieldsOf(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

func decodeGraph(raw json.RawMessage) (datasource.Graph, error) {
	var g datasource.Graph
	if err := json.Unmarshal(raw, &g); err != nil {
		return g, fmt.Errorf("decode graph document: %w", err)
	}
	dropSystem(g.Extra)
	return g, nil
}

func decodeNode(graphKey string, raw json.RawMessage) (datasource.Node, error) {
	var n datasource.Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return n, fmt.Errorf("decode node document: %w", err)
	}
	n.Key = localKey(graphKey, n.Key)
	dropSystem(n.Extra)
	// The content hash must reach the embed command whatever the model's decoding
	// keeps: put it in Extra explicitly.
	if h, ok := fieldsOf(raw)[EmbeddingHashField]; ok {
		if n.Extra == nil {
			n.Extra = map[string]json.RawMessage{}
		}
		n.Extra[EmbeddingHashField] = h
	}
	return n, nil
}

func decodeEdge(graphKey string, raw json.RawMessage) (datasource.Edge, error) {
	var e datasource.Edge
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("decode edge document: %w", err)
	}
	e.Key = localKey(graphKey, e.Key)
	var ends struct {
		From string `json:"_from"`
		To   string `json:"_to"`
	}
	_ = json.Unmarshal(raw, &ends)
	if e.Source == "" {
		e.Source = localFromID(graphKey, ends.From)
	} else {
		e.Source = localKey(graphKey, e.Source)
	}
	if e.Target == "" {
		e.Target = localFromID(graphKey, ends.To)
	} else {
		e.Target = localKey(graphKey, e.Target)
	}
	dropSystem(e.Extra)
	return e, nil
}

func decodeConfig(raw json.RawMessage) (datasource.NodeConfig, error) {
	var c datasource.NodeConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("decode node config document: %w", err)
	}
	dropSystem(c.Extra)
	return c, nil
}

// toFields marshals v (a model value, with its unknown fields) into a document.
func toFields(v any) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	dropSystem(m)
	return m, nil
}

func rawString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// nodeDocument is the stored form of n: composite _key and graphKey added.
func nodeDocument(graphKey string, n datasource.Node) (map[string]json.RawMessage, error) {
	m, err := toFields(n)
	if err != nil {
		return nil, fmt.Errorf("encode node %s: %w", n.Key, err)
	}
	m["_key"] = rawString(compositeKey(graphKey, n.Key))
	m["graphKey"] = rawString(graphKey)
	return m, nil
}

// edgeDocument is the stored form of e: composite _key, _from/_to pointing at the
// composite node ids, local source/target kept as the server writes them.
func edgeDocument(graphKey string, e datasource.Edge) (map[string]json.RawMessage, error) {
	m, err := toFields(e)
	if err != nil {
		return nil, fmt.Errorf("encode edge %s: %w", e.Key, err)
	}
	m["_key"] = rawString(compositeKey(graphKey, e.Key))
	m["graphKey"] = rawString(graphKey)
	m["_from"] = rawString(nodeID(graphKey, e.Source))
	m["_to"] = rawString(nodeID(graphKey, e.Target))
	return m, nil
}

func notFound(kind, key string) error { return &datasource.NotFoundError{Kind: kind, Key: key} }
