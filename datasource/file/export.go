package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

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

// Bounds of an export's payload, proportional to what a Nodius export holds: the
// Nodius server imports at most 10,000 nodes and 50,000 edges, about 30 JSON values
// a node. These are three to four times that. Decoding the most a hostile payload
// can pack under them (empty nodes and edges of a few bytes, a million empty
// objects as data) stays under 300 MB, where a payload of tens of megabytes of
// empty objects would otherwise take gigabytes.
const (
	MaxExportNodes  = 40_000
	MaxExportEdges  = 200_000
	MaxExportValues = 1_000_000
)

// payloadDocument turns a graph export's payload into a graph file: the graph
// keyed key, each node's and edge's localKey its _key. Its shape is checked first
// by a scan that allocates nothing per value (exportShape), then it is decoded
// once, not through a generic map of the whole payload (ten times its size).
func payloadDocument(name, key string, payload []byte) (datasource.Document, error) {
	if !json.Valid(payload) {
		return datasource.Document{}, &ParseError{File: name, Msg: "invalid JSON in the export: " + json.Unmarshal(payload, new(any)).Error()}
	}
	sh := exportShape(payload)
	if sh.kinds["graph"] != '{' {
		return datasource.Document{}, &ParseError{File: name, Path: "graph", Msg: "the export holds no graph object"}
	}
	for _, list := range []string{"nodes", "edges"} {
		if k := sh.kinds[list]; k != '[' && k != 'n' {
			return datasource.Document{}, &ParseError{File: name, Path: list, Msg: "expected an array of objects in the export"}
		}
	}
	for _, b := range []struct {
		what     string
		n, limit int
	}{{"nodes", sh.nodes, MaxExportNodes}, {"edges", sh.edges, MaxExportEdges}, {"JSON values", sh.values, MaxExportValues}} {
		if b.n > b.limit {
			return datasource.Document{}, &ParseError{File: name, Msg: fmt.Sprintf("the export holds more than %d %s, more than a Nodius export holds", b.limit, b.what)}
		}
	}
	var doc datasource.Document
	if err := doc.UnmarshalJSON(payload); err != nil {
		var de *datasource.DecodeError
		if errors.As(err, &de) {
			return datasource.Document{}, &ParseError{File: name, Path: de.Path, Msg: de.Msg}
		}
		return datasource.Document{}, &ParseError{File: name, Msg: "invalid JSON in the export: " + err.Error()}
	}
	if doc.Graph.Key == "" {
		doc.Graph.Key = key
	}
	for i := range doc.Nodes {
		if err := takeLocalKey(&doc.Nodes[i].Key, doc.Nodes[i].Extra); err != nil {
			return datasource.Document{}, &ParseError{File: name, Path: "nodes[" + strconv.Itoa(i) + "].localKey", Msg: err.Error()}
		}
	}
	for i := range doc.Edges {
		if err := takeLocalKey(&doc.Edges[i].Key, doc.Edges[i].Extra); err != nil {
			return datasource.Document{}, &ParseError{File: name, Path: "edges[" + strconv.Itoa(i) + "].localKey", Msg: err.Error()}
		}
	}
	if err := validate(doc); err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = name
		}
		return datasource.Document{}, err
	}
	doc.Format = datasource.FormatNodius
	return doc, nil
}

// shape is what exportShape finds in a payload.
type shape struct {
	kinds                map[string]jsontext.Kind // of each top-level member
	nodes, edges, values int
}

// exportShape counts the values of the JSON object data (valid JSON), and the
// elements of its top-level nodes and edges arrays, and says what kind of value
// each top-level member is ('{', '[', '"', '0', 't', 'f', 'n'). It reads tokens in
// place and keeps none, so a hostile payload costs no memory here.
func exportShape(data []byte) shape {
	sh := shape{kinds: map[string]jsontext.Kind{}}
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	top := ""
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return sh
		}
		k := tok.Kind()
		if k == '}' || k == ']' {
			continue
		}
		parent := dec.StackDepth()
		if k == '{' || k == '[' {
			parent--
		}
		if parent == 0 {
			continue // the document itself
		}
		pk, n := dec.StackIndex(parent)
		if pk == '{' && n%2 == 1 { // a member name
			if parent == 1 {
				top = tok.String()
			}
			continue
		}
		sh.values++
		switch {
		case parent == 1:
			sh.kinds[top] = k
		case parent == 2 && pk == '[' && top == "nodes":
			sh.nodes++
		case parent == 2 && pk == '[' && top == "edges":
			sh.edges++
		}
	}
}

// takeLocalKey makes an exported record's localKey its key, when it has no key of
// its own.
func takeLocalKey(key *string, extra map[string]json.RawMessage) error {
	raw, ok := extra["localKey"]
	if !ok || *key != "" {
		return nil
	}
	if err := json.Unmarshal(raw, key); err != nil {
		return errors.New("expected a string")
	}
	delete(extra, "localKey")
	return nil
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
	if !json.Valid(payload) {
		return datasource.NodeConfig{}, fmt.Errorf("node type file %s is neither a .ndex export nor JSON: %v", path, json.Unmarshal(payload, new(any)))
	}
	if n := exportShape(payload).values; n > MaxExportValues {
		return datasource.NodeConfig{}, fmt.Errorf("node type file %s holds more than %d JSON values, more than a Nodius export holds", path, MaxExportValues)
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
