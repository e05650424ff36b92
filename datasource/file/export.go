package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/ndex"
)

// Nodius exports. What a Nodius user can hand over as a file is an export: a
// .ndex file, or its decrypted JSON payload. A graph export has local keys
// (localKey), no graph key and no node types (each type is exported on its own,
// and the server gives everything new keys on import). It is read as a graph
// whose key is the file's name without its extension; its nodes' types have no
// code here, and the notices say so. An export is never written: nodius-ai would
// have to invent what it lacks; the convert command makes a writable copy.

// exportKind says what kind of export a file is: "" for a graph file.
type exportKind string

const (
	notExport     exportKind = ""
	ndexExport    exportKind = "a Nodius export (.ndex)"
	payloadExport exportKind = "a Nodius export's JSON payload"
)

// ReadOnlyError is the error of a change to an export.
type ReadOnlyError struct {
	Path string
	Kind string
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("graph file %s is %s, which nodius-ai reads but never writes: make a writable copy with `nodius-ai graph convert %s COPY.json` and use --source file:COPY.json", e.Path, e.Kind, e.Path)
}

func (e *ReadOnlyError) Unwrap() error { return datasource.ErrReadOnly }

// ExportKey is the graph key of an export at path: its file name without its
// extension ("team.ndex" → "team").
func ExportKey(path string) string {
	base := filepath.Base(path)
	if k := strings.TrimSuffix(base, filepath.Ext(base)); k != "" {
		return k
	}
	return base
}

// decodeNdex decrypts an export; the error is one sentence naming the secret or
// the damage.
func decodeNdex(path string, data []byte, secret string) ([]byte, error) {
	if secret == "" {
		secret = ndex.DefaultSecret
	}
	t, payload, err := ndex.Decode(data, secret)
	switch {
	case errors.Is(err, ndex.ErrDecrypt):
		return nil, &decryptError{path: path}
	case err != nil:
		return nil, fmt.Errorf("graph file %s: %w", path, err)
	case t == ndex.NodeConfig:
		return nil, fmt.Errorf("graph file %s is a node type export, not a graph: give the export of a graph", path)
	}
	return payload, nil
}

// decryptError: a .ndex export that does not decrypt with the secret given.
type decryptError struct{ path string }

func (e *decryptError) Error() string {
	return fmt.Sprintf("graph file %s: the export does not decrypt: the export secret is wrong (set %s to the secret of the Nodius server that made it) or the file is damaged", e.path, ndex.SecretEnv)
}

func (e *decryptError) Unwrap() error { return ndex.ErrDecrypt }

// isPayload reports whether doc failed only for want of a graph key in a way an
// export's payload does: a graph object without _key.
func isPayload(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe) && pe.Path == "graph._key"
}

// payloadDocument turns a graph export's payload into a graph file: the graph
// keyed key, each node's and edge's localKey its _key.
func payloadDocument(name, key string, payload []byte) (datasource.Document, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		return datasource.Document{}, &ParseError{File: name, Msg: "invalid JSON in the export: " + err.Error()}
	}
	var graph map[string]json.RawMessage
	if err := json.Unmarshal(top["graph"], &graph); err != nil || graph == nil {
		return datasource.Document{}, &ParseError{File: name, Path: "graph", Msg: "the export holds no graph object"}
	}
	if _, ok := graph["_key"]; !ok {
		graph["_key"], _ = json.Marshal(key)
	}
	top["graph"], _ = json.Marshal(graph)
	for _, list := range []string{"nodes", "edges"} {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(top[list], &items); err != nil {
			return datasource.Document{}, &ParseError{File: name, Path: list, Msg: "expected an array of objects in the export"}
		}
		for _, it := range items {
			if lk, ok := it["localKey"]; ok {
				if _, has := it["_key"]; !has {
					it["_key"] = lk
					delete(it, "localKey")
				}
			}
		}
		top[list], _ = json.Marshal(items)
	}
	data, err := json.Marshal(top)
	if err != nil {
		return datasource.Document{}, err
	}
	doc, _, err := parse(name, data)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Line, pe.Column = 0, 0 // places in the rewritten payload mean nothing
		}
		return datasource.Document{}, err
	}
	doc.Format = datasource.FormatNodius
	return doc, nil
}

// exportNotice says what an export is and lacks.
func exportNotice(path string, kind exportKind, key string) string {
	return fmt.Sprintf("graph file %s is %s: read-only, with no graph key (it is %q, after the file's name) and no node types; `nodius-ai graph convert %s COPY.json` makes a writable copy (add each type's own export with --node-type KEY=FILE to give it its code)", path, kind, key, path)
}

// Load reads the graph file, .ndex export or export payload at path whole, as the
// source would, and returns it as a document.
func Load(ctx context.Context, path string, o Options) (datasource.Document, error) {
	if err := ctx.Err(); err != nil {
		return datasource.Document{}, err
	}
	real, err := realPath(path)
	if err != nil {
		return datasource.Document{}, err
	}
	s := &Source{path: path, real: real, Secret: o.Secret}
	doc, _, _, err := s.read()
	return doc, err
}

// realPath resolves the symbolic links of the graph file at path; the error
// names path.
func realPath(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("graph file %s does not exist: %w", path, err)
		}
		return "", fmt.Errorf("graph file %s: %w", path, err)
	}
	return real, nil
}

// Create writes doc as a new graph file at path, atomically, in doc's format; an
// existing file is replaced only when replace is true.
func Create(path string, doc datasource.Document, replace bool) error {
	if !replace {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s already exists: choose another name, or pass --force to replace it", path)
		}
	}
	if err := writeAtomic(path, 0o644, func(w io.Writer) error { return datasource.WriteDocument(w, doc) }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// LoadTypeExport reads a node type export — a .ndex file of export type 0x03, or
// its JSON payload — as the config of the node type key. Nodius exports a type
// without its key (and without node.type), and gives it a new key on import, so
// nothing in the export says which type of a graph it is: the user says so, and
// the config gets key as its _key and node.type, as Nodius's import does.
func LoadTypeExport(ctx context.Context, path, key, secret string) (datasource.NodeConfig, error) {
	if err := ctx.Err(); err != nil {
		return datasource.NodeConfig{}, err
	}
	if key == "" || datasource.IsBuiltinType(key) {
		return datasource.NodeConfig{}, fmt.Errorf("node type %q: give the key of a custom node type used in the graph", key)
	}
	real, err := realPath(path)
	if err != nil {
		return datasource.NodeConfig{}, err
	}
	data, _, err := readRegular(path, real)
	if err != nil {
		return datasource.NodeConfig{}, err
	}
	payload := data
	if ndex.IsExport(data) {
		if secret == "" {
			secret = ndex.DefaultSecret
		}
		t, p, err := ndex.Decode(data, secret)
		switch {
		case errors.Is(err, ndex.ErrDecrypt):
			return datasource.NodeConfig{}, &decryptError{path: path}
		case err != nil:
			return datasource.NodeConfig{}, fmt.Errorf("node type file %s: %w", path, err)
		case t != ndex.NodeConfig:
			return datasource.NodeConfig{}, fmt.Errorf("node type file %s is a %s export, not a node type's", path, t)
		}
		payload = p
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(payload, &probe); err != nil {
		return datasource.NodeConfig{}, fmt.Errorf("node type file %s is neither a .ndex export nor JSON: %v", path, err)
	}
	if _, ok := probe["node"]; !ok {
		return datasource.NodeConfig{}, fmt.Errorf("node type file %s holds no node type (no \"node\" object): give the export of a node type", path)
	}
	var c datasource.NodeConfig
	if err := json.Unmarshal(payload, &c); err != nil {
		return datasource.NodeConfig{}, fmt.Errorf("node type file %s: %v", path, err)
	}
	c.Key = key
	raw, _ := json.Marshal(key)
	if c.NodeExtra == nil {
		c.NodeExtra = map[string]json.RawMessage{}
	}
	c.NodeExtra["type"] = raw
	return c, nil
}

// AddTypes gives doc the configs of node types it lacks (from LoadTypeExport) and
// resolves its nodes' code through them. A config for a type no node of doc uses,
// or for a type doc already defines, is refused: it would be a guess, or would
// replace a type's code behind the user's back.
func AddTypes(doc *datasource.Document, configs []datasource.NodeConfig) error {
	missing := map[string]bool{}
	for _, t := range datasource.MissingTypes(doc.Nodes, doc.NodeConfigs) {
		missing[t] = true
	}
	for _, c := range configs {
		if !missing[c.Key] {
			for _, have := range doc.NodeConfigs {
				if have.Key == c.Key {
					return fmt.Errorf("node type %q already has a config in the graph", c.Key)
				}
			}
			return fmt.Errorf("no node of the graph has type %q (types without code: %s)", c.Key, strings.Join(datasource.MissingTypes(doc.Nodes, doc.NodeConfigs), ", "))
		}
		delete(missing, c.Key)
		doc.NodeConfigs = append(doc.NodeConfigs, c)
	}
	doc.ResolveCode()
	return nil
}
