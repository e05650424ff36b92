package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CreatedGraph is what an approved create_graph made on a source: the new graph's
// key and nodes, where it is, and what it held when made, so that undo removes it
// only while nothing changed it since.
type CreatedGraph struct {
	Key string `json:"key"`
	// AssignedKey is the key the action assigned when the source chose another
	// (a Nodius server answers its own): what ties this graph to its action.
	AssignedKey string `json:"assignedKey,omitempty"`
	Name        string `json:"name"`
	Type        string `json:"type"` // "graph" or "htmlClass"
	// HTMLClass is the key of the HTML class made with it (Type "htmlClass").
	HTMLClass string `json:"htmlClass,omitempty"`
	// Nodes are the local keys of the nodes made with it (Starter and Return, or
	// the HTML root).
	Nodes []string `json:"nodes"`
	// Path is the new graph file (a file: source makes one file per graph).
	Path string `json:"path,omitempty"`
	// File is Path made absolute: where undo finds it from any directory.
	File string `json:"file,omitempty"`
	// Digest is what the graph held when made, as the source compares it (a file's
	// SHA-256, a store's version, ArangoDB's document revisions); empty when it was
	// not recorded (undo then leaves the graph alone).
	Digest string `json:"digest,omitempty"`
	// Open says how to open it ("--source file:./x.json", "--graph KEY").
	Open string `json:"open,omitempty"`
	// Note is what else the person should know ("the demo graph lives in this
	// process's memory…").
	Note string `json:"note,omitempty"`
}

// Sentence says what was made and how to open it, for the person and the model.
func (g CreatedGraph) Sentence() string {
	what := "graph"
	if g.Type == "htmlClass" {
		what = "HTML class " + fmt.Sprintf("%q", g.Name) + " with its graph"
	} else {
		what += fmt.Sprintf(" %q", g.Name)
	}
	s := fmt.Sprintf("created %s (key %s)", what, g.Key)
	if g.Path != "" {
		s = fmt.Sprintf("created %s in graph file %s", what, g.Path)
	}
	if g.Open != "" {
		s += " — open it with " + g.Open
	}
	if g.Note != "" {
		s += "; " + g.Note
	}
	return s
}

// GraphCreator is implemented by sources that can make a new graph the way the
// Nodius server's POST /api/graph/create does (NewGraphContent), and remove one they
// made. Apply routes an approved create_graph to it.
type GraphCreator interface {
	// CanCreateGraph says why this source cannot make graphs now (nil when it
	// can): a read-only export, a database a Nodius server is writing.
	CanCreateGraph(ctx context.Context) error
	// CreateGraph makes the graph (and, for Type "htmlClass", its HTML class) with
	// key as its graph key (the source chooses one when key is empty).
	CreateGraph(ctx context.Context, p CreateGraphPayload, key string) (CreatedGraph, error)
	// DeleteCreatedGraph removes a graph CreateGraph made, only while it is still
	// as made: one changed since is a *GraphChangedError, one already gone an error
	// wrapping ErrNotFound. With dryRun it only checks.
	DeleteCreatedGraph(ctx context.Context, g CreatedGraph, dryRun bool) error
}

// GraphChangedError refuses to remove a created graph that changed since it was
// made (or whose state at creation was not recorded): Why says what, for people.
type GraphChangedError struct{ Why string }

func (e *GraphChangedError) Error() string { return e.Why }

// GraphRecorder is implemented by an apply's recorder (datasource.Record) that also
// keeps what a create_graph made, so that undo can remove it.
type GraphRecorder interface {
	RecordGraph(g CreatedGraph)
}

// NewGraph is what the Nodius server's POST /api/graph/create makes: the graph
// document, its nodes (on sheet "0"), and for an HTML class the class document.
type NewGraph struct {
	Graph Graph
	Nodes []Node
	// HTMLClass is the nodius_html_class document (nil for a workflow graph).
	HTMLClass map[string]any
}

// NewGraphContent builds what the server makes for p (its graph creation route and
// the web client's AIInterruptModal: docs/protocol.md): a workflow graph holds a
// Starter node "root" at (0, 0) and a Return node "return" at (300, 0); an HTML class
// gets a graph named "NAME-graph" holding one html node "root" (its HTML object
// empty) and a class document linking both ways. Every graph has the sheet
// {"0": "main"}, category "default", version and permission 0. Nodes carry what
// the server's createNodeFromConfig gives them (type, typeVersion 1, size, handles
// and position of the built-in type), never code: a built-in type keeps it.
func NewGraphContent(p CreateGraphPayload, graphKey, htmlKey, workspace string, now time.Time) NewGraph {
	ms := now.UnixMilli()
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	g := Graph{Key: graphKey, Name: p.Name, Workspace: workspace, Sheets: map[string]string{"0": "main"},
		Extra: map[string]json.RawMessage{
			"category": raw("default"), "version": raw(0), "permission": raw(0),
			"createdTime": raw(ms), "lastUpdatedTime": raw(ms),
		}}
	node := func(key, typ string, x float64, size Size, handles map[string]HandleGroup, data any) Node {
		return Node{Key: key, Type: typ, Sheet: "0", PosX: x, Size: size, Handles: handles, Data: data,
			Extra: map[string]json.RawMessage{"graphKey": raw(graphKey), "typeVersion": raw(1)}}
	}
	if p.Type == "htmlClass" {
		g.Name = p.Name + "-graph"
		g.Extra["htmlKeyLinked"] = raw(htmlKey)
		root := node("root", "html", 0, DefaultSize("html", nil),
			DefaultHandles("html", nil), map[string]any{})
		class := map[string]any{
			"_key": htmlKey, "name": p.Name, "description": p.Description, "category": "default",
			"workspace": workspace, "permission": 0, "htmlNodeKey": graphKey + "-root", "graphKeyLinked": graphKey,
			"createdTime": ms, "lastUpdatedTime": ms, "version": 0,
		}
		return NewGraph{Graph: g, Nodes: []Node{root}, HTMLClass: class}
	}
	g.Description = p.Description
	starter := node("root", "starter", 0, DefaultSize("starter", nil), DefaultHandles("starter", nil), nil)
	ret := node("return", "return", 300, DefaultSize("return", nil), DefaultHandles("return", nil), nil)
	return NewGraph{Graph: g, Nodes: []Node{starter, ret}}
}

// NodeKeys lists the local keys of the new graph's nodes.
func (n NewGraph) NodeKeys() []string {
	keys := make([]string, len(n.Nodes))
	for i, x := range n.Nodes {
		keys[i] = x.Key
	}
	return keys
}

// applyCreateGraph carries out an approved create_graph on a source that makes
// graphs; a recorder that keeps graphs is told what was made.
func applyCreateGraph(ctx context.Context, src Source, a Action, opts []ApplyOption) (ApplyResult, error) {
	gc, ok := src.(GraphCreator)
	if !ok || a.CreateGraph == nil {
		return ApplyResult{}, notLocal(a)
	}
	g, err := gc.CreateGraph(ctx, *a.CreateGraph, a.CreateGraph.Key)
	if err != nil {
		return ApplyResult{}, err
	}
	if r, ok := ApplyOptionsOf(opts).Record.(GraphRecorder); ok {
		r.RecordGraph(g)
	}
	return ApplyResult{Applied: true, Created: Created{Nodes: []string{}, Edges: []string{}}, Graph: &g, Note: g.Sentence()}, nil
}

// CreatedGraphFinder is implemented by sources whose new graphs are not among the
// graphs they read (a file: source writes each to a new file): it tells whether a
// create_graph of p with that key made its graph.
type CreatedGraphFinder interface {
	MadeGraph(ctx context.Context, p CreateGraphPayload, key string) (bool, error)
}

// landedGraph reports whether a create_graph (key assigned) made its graph: the
// source finds it (CreatedGraphFinder), else reads a graph of that key.
func landedGraph(ctx context.Context, src Source, a Action) (bool, error) {
	if a.CreateGraph == nil || a.CreateGraph.Key == "" {
		return false, nil
	}
	if f, ok := src.(CreatedGraphFinder); ok {
		return f.MadeGraph(ctx, *a.CreateGraph, a.CreateGraph.Key)
	}
	if _, err := src.Graph(ctx, a.CreateGraph.Key); err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
