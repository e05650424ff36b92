package datasource

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The rules a change must follow to fit a graph live here, once, so that an approved
// action passes or fails the same way on every backend: the in-memory store (and so
// the file source and the demo) and ArangoDB check new nodes, new edges and node
// updates with these functions, each over its own view of the graph (Scope). What a
// backend adds is only what it alone can know: whether a key is free, how a
// document is written.

// Scope is the graph a change is checked against, as the backend sees it at that
// moment (for a database, inside the transaction that will write the change).
type Scope interface {
	// Graph is the graph's metadata: its sheets.
	Graph() Graph
	// LookupNode returns the node with that key, if there is one.
	LookupNode(key string) (Node, bool)
	// EdgesOf lists the edges whose source or target is the node.
	EdgesOf(nodeKey string) []Edge
	// LookupConfig returns the graph's node type of that key, if it has one.
	LookupConfig(key string) (NodeConfig, bool)
	// ConfigKeys lists the graph's node types (for the message of an unknown type).
	ConfigKeys() []string
}

// CheckKey refuses keys ArangoDB and the Nodius editor would refuse.
func CheckKey(kind, key string) error {
	if len(key) > 254 {
		return fmt.Errorf("%s key is too long (%d bytes, at most 254)", kind, len(key))
	}
	for _, r := range key {
		if r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%s key %q may not contain spaces, control characters or '/'", kind, key)
		}
	}
	return nil
}

// CheckType accepts a built-in type or one the graph configures.
func CheckType(s Scope, t string) error {
	if t == "" {
		return errors.New("node type is empty")
	}
	if IsBuiltinType(t) {
		return nil
	}
	if _, ok := s.LookupConfig(t); ok {
		return nil
	}
	known := append(slices.Clone(BuiltinTypes), s.ConfigKeys()...)
	return fmt.Errorf("unknown node type %q (known types: %s): %w", t, strings.Join(known, ", "),
		&NotFoundError{Kind: "node type", Key: t})
}

// ResolveSheet accepts a sheet id or a sheet name (case aside) and returns the id;
// used, when given, accepts an id the graph does not name but its nodes use.
func ResolveSheet(g Graph, sheet string, used func(string) bool) (string, error) {
	if _, ok := g.Sheets[sheet]; ok {
		return sheet, nil
	}
	var ids []string
	for id, name := range g.Sheets {
		if strings.EqualFold(name, sheet) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		sort.Strings(ids)
		return ids[0], nil
	}
	if used != nil && used(sheet) {
		return sheet, nil
	}
	return "", &NotFoundError{Kind: "sheet", Key: sheet}
}

// SheetList describes the sheets for error messages: `0 (main), 1 (data-processing)`.
func SheetList(g Graph) string {
	ids := slices.Collect(maps.Keys(g.Sheets))
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s (%s)", id, g.Sheets[id])
	}
	return strings.Join(parts, ", ")
}

// sheetOf resolves the sheet of a new or moved element ("0" when empty; a graph
// that names no sheet has sheet "0").
func sheetOf(s Scope, sheet string) (string, error) {
	if sheet == "" {
		sheet = "0"
	}
	g := s.Graph()
	if len(g.Sheets) == 0 && sheet == "0" {
		return sheet, nil
	}
	id, err := ResolveSheet(g, sheet, nil)
	if err != nil {
		return "", fmt.Errorf("sheet %q does not exist in graph %q (sheets: %s): %w", sheet, g.Key, SheetList(g), err)
	}
	return id, nil
}

// typeConfigs is the graph's config of type t as the list DefaultHandles and
// DefaultSize take (empty for a built-in or unknown type).
func typeConfigs(s Scope, t string) []NodeConfig {
	if c, ok := s.LookupConfig(t); ok {
		return []NodeConfig{c}
	}
	return nil
}

// Finite reports whether f is a number a graph can hold (not NaN or infinite).
func Finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// CheckPosition refuses a position that is not two finite numbers.
func CheckPosition(x, y float64) error {
	if !Finite(x) || !Finite(y) {
		return fmt.Errorf("position must be finite numbers (got %v, %v)", x, y)
	}
	return nil
}

// NewNode checks a node about to be created and completes it: its type known, its
// sheet resolved, its handles checked (or its type's when it has none), its size its
// type's when it has none, its data an object. Whether its key is free is the
// backend's to check.
func NewNode(s Scope, n Node) (Node, error) {
	if n.Key != "" {
		if err := CheckKey("node", n.Key); err != nil {
			return Node{}, err
		}
	}
	if err := CheckType(s, n.Type); err != nil {
		return Node{}, err
	}
	sheet, err := sheetOf(s, n.Sheet)
	if err != nil {
		return Node{}, err
	}
	n.Sheet = sheet
	cfgs := typeConfigs(s, n.Type)
	if len(n.Handles) == 0 {
		n.Handles = DefaultHandles(n.Type, cfgs)
	} else if n.Handles, err = CheckHandles(n.Handles); err != nil {
		return Node{}, fmt.Errorf("handles: %w", err)
	}
	if err := CheckPosition(n.PosX, n.PosY); err != nil {
		return Node{}, err
	}
	if n.Data == nil {
		n.Data = map[string]any{}
	}
	if n.Size.Width <= 0 || n.Size.Height <= 0 || !Finite(n.Size.Width) || !Finite(n.Size.Height) {
		n.Size = DefaultSize(n.Type, cfgs) // the type's node.size
	}
	return n, nil
}

// NewEdge checks an edge about to be created and completes it: both ends are
// nodes of one sheet, the edge's sheet is theirs, its handles name an output of the
// source and an input of the target (resolved to point ids), and no edge already
// joins the same points. Whether its key is free is the backend's to check.
func NewEdge(s Scope, e Edge) (Edge, error) {
	src, ok := s.LookupNode(e.Source)
	if !ok {
		return Edge{}, fmt.Errorf("source: %w", &NotFoundError{Kind: "node", Key: e.Source})
	}
	dst, ok := s.LookupNode(e.Target)
	if !ok {
		return Edge{}, fmt.Errorf("target: %w", &NotFoundError{Kind: "node", Key: e.Target})
	}
	if e.Key != "" {
		if err := CheckKey("edge", e.Key); err != nil {
			return Edge{}, err
		}
	}
	if src.Sheet != dst.Sheet {
		return Edge{}, fmt.Errorf("nodes %q (sheet %s) and %q (sheet %s) are on different sheets; an edge joins nodes of one sheet",
			src.Key, src.Sheet, dst.Key, dst.Sheet)
	}
	if e.Sheet == "" {
		e.Sheet = src.Sheet
	} else {
		id, err := sheetOf(s, e.Sheet)
		if err != nil {
			return Edge{}, err
		}
		if id != src.Sheet {
			return Edge{}, fmt.Errorf("edge sheet %s differs from the sheet of its nodes (%s)", id, src.Sheet)
		}
		e.Sheet = id
	}
	var err error
	if e.SourceHandle, err = ResolveHandle(src.Key, EffectiveHandles(src, typeConfigs(s, src.Type)), e.SourceHandle, "out"); err != nil {
		return Edge{}, err
	}
	if e.TargetHandle, err = ResolveHandle(dst.Key, EffectiveHandles(dst, typeConfigs(s, dst.Type)), e.TargetHandle, "in"); err != nil {
		return Edge{}, err
	}
	for _, old := range s.EdgesOf(e.Source) {
		if old.Source == e.Source && old.SourceHandle == e.SourceHandle && old.Target == e.Target && old.TargetHandle == e.TargetHandle {
			return Edge{}, fmt.Errorf("an edge already joins %s:%s to %s:%s (%s)", e.Source, e.SourceHandle, e.Target, e.TargetHandle, old.Key)
		}
	}
	return e, nil
}

// UpdatePaths lists the paths PatchNode accepts, for the error message.
const UpdatePaths = "process, type, data, data.<path>, handles, sheet, posX, posY, size, size.width, size.height, name, description"

// PatchNode applies the changes of an update_node to n and returns the new node;
// n is not modified. A change is a path (UpdatePaths: "data.url" sets one entry
// inside data and keeps the rest, an array index included) and its new value. The
// result must still fit the graph: its type known, its sheet one of the graph's, its
// size positive, and its edges kept — a node with edges cannot change sheet, and a
// new type or new handles must keep every point an edge uses.
func PatchNode(s Scope, n Node, changes map[string]any) (Node, error) {
	if len(changes) == 0 {
		return Node{}, errors.New("no changes given")
	}
	old := n
	paths := slices.Collect(maps.Keys(changes))
	sort.Strings(paths) // "data" before "data.x": a whole value first, then nested sets into it
	dataCopied := false
	for _, path := range paths {
		val := changes[path]
		fail := func(format string, args ...any) (Node, error) {
			return Node{}, fmt.Errorf("change %q: %s", path, fmt.Sprintf(format, args...))
		}
		switch {
		case path == "process":
			str, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describeJSON(val))
			}
			n.Process = str
		case path == "type":
			str, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describeJSON(val))
			}
			if err := CheckType(s, str); err != nil {
				return Node{}, fmt.Errorf("change %q: %w", path, err)
			}
			n.Type = str
		case path == "data":
			n.Data = DeepCopy(val)
			dataCopied = true
		case strings.HasPrefix(path, "data."):
			if !dataCopied {
				n.Data = DeepCopy(n.Data)
				dataCopied = true
			}
			nd, err := setPath(n.Data, strings.Split(strings.TrimPrefix(path, "data."), "."), DeepCopy(val))
			if err != nil {
				return fail("%v", err)
			}
			n.Data = nd
		case path == "handles":
			h, err := toHandles(val)
			if err != nil {
				return fail("%v", err)
			}
			if h, err = CheckHandles(h); err != nil {
				return fail("%v", err)
			}
			n.Handles = h
		case path == "sheet":
			str, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describeJSON(val))
			}
			id, err := sheetOf(s, str)
			if err != nil {
				return Node{}, fmt.Errorf("change %q: %w", path, err)
			}
			n.Sheet = id
		case path == "posX", path == "posY", path == "size.width", path == "size.height":
			f, ok := toFloat(val)
			if !ok || !Finite(f) {
				return fail("expected a number, got %s", describeJSON(val))
			}
			switch path {
			case "posX":
				n.PosX = f
			case "posY":
				n.PosY = f
			case "size.width":
				n.Size.Width = f
			case "size.height":
				n.Size.Height = f
			}
		case path == "size":
			m, ok := val.(map[string]any)
			if !ok {
				return fail("expected an object {width, height}, got %s", describeJSON(val))
			}
			w, okw := toFloat(m["width"])
			h, okh := toFloat(m["height"])
			if !okw || !okh || !Finite(w) || !Finite(h) {
				return fail("expected numbers width and height")
			}
			n.Size = Size{Width: w, Height: h}
		case path == "name", path == "description":
			// Nodius nodes carry these as members of their own (the server's
			// update_node sets them); kept with the node's other members. nil removes
			// one (an undo of a change that added it).
			extra := maps.Clone(n.Extra)
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			switch v := val.(type) {
			case nil:
				delete(extra, path)
			case string:
				extra[path], _ = json.Marshal(v)
			default:
				return fail("expected a string, got %s", describeJSON(val))
			}
			n.Extra = extra
		case path == "_key", path == "key":
			return fail("the key of a node cannot be changed; create a new node and delete this one")
		default:
			return fail("unknown field path; use one of %s", UpdatePaths)
		}
	}
	if n.Size.Width <= 0 || n.Size.Height <= 0 {
		return Node{}, fmt.Errorf("size must be positive (got %vx%v)", n.Size.Width, n.Size.Height)
	}
	// The node's edges must still fit: same sheet, points still there (a node
	// without handles has its type's, so a new type may drop points too).
	_, handlesChanged := changes["handles"]
	if old.Sheet == n.Sheet && !handlesChanged && old.Type == n.Type {
		return n, nil
	}
	edges := s.EdgesOf(n.Key)
	if old.Sheet != n.Sheet {
		for _, e := range edges {
			return Node{}, fmt.Errorf("node %q cannot move to sheet %s: edge %s keeps it on sheet %s (delete the edge first)", n.Key, n.Sheet, e.Key, e.Sheet)
		}
	}
	if err := CheckEdgesKeepHandles(n, EffectiveHandles(n, typeConfigs(s, n.Type)), edges); err != nil {
		return Node{}, err
	}
	return n, nil
}

// setPath sets root.seg[0].seg[1]... = val, creating objects on the way, and returns
// the new root. root has been deep-copied by the caller.
func setPath(root any, segs []string, val any) (any, error) {
	if len(segs) == 0 || segs[0] == "" {
		return nil, errors.New("empty path segment")
	}
	seg := segs[0]
	switch cur := root.(type) {
	case nil:
		m := map[string]any{}
		if len(segs) == 1 {
			m[seg] = val
			return m, nil
		}
		child, err := setPath(nil, segs[1:], val)
		if err != nil {
			return nil, err
		}
		m[seg] = child
		return m, nil
	case map[string]any:
		if len(segs) == 1 {
			cur[seg] = val
			return cur, nil
		}
		child, err := setPath(cur[seg], segs[1:], val)
		if err != nil {
			return nil, err
		}
		cur[seg] = child
		return cur, nil
	case []any:
		idx, err := strconv.Atoi(seg)
		if err != nil || idx < 0 || idx >= len(cur) {
			return nil, fmt.Errorf("%q is not an index of an array of %d items", seg, len(cur))
		}
		if len(segs) == 1 {
			cur[idx] = val
			return cur, nil
		}
		child, err := setPath(cur[idx], segs[1:], val)
		if err != nil {
			return nil, err
		}
		cur[idx] = child
		return cur, nil
	default:
		return nil, fmt.Errorf("cannot set %q inside %s", seg, describeJSON(root))
	}
}

// DeepCopy copies free JSON values (maps and slices) so a change never writes into
// a value a published view or a caller still holds.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = DeepCopy(e)
		}
		return s
	}
	return v
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func toHandles(v any) (map[string]HandleGroup, error) {
	if h, ok := v.(map[string]HandleGroup); ok {
		return CloneHandles(h), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("handles: %w", err)
	}
	var h map[string]HandleGroup
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("handles must be an object of sides {\"L\": {\"position\", \"point\": [{\"id\",\"type\",\"accept\"}]}}: %w", err)
	}
	return h, nil
}

// describeJSON names the JSON kind of a value for error messages.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("a %T", x)
	}
}
