// Package undo reverses an applied action exactly. When an action is applied, Plan
// records what reversing it needs (the keys it created, the previous values of the
// fields it changed, the previous position of what it moved, the nodes and edges it
// deleted), as steps in reverse order. Undoing checks every step against the graph as
// it is now: a step whose effect is still there is reversed, a step already reversed
// is skipped, and a step whose part of the graph changed since is drift, named in a
// sentence; forced, the undo reverses only what still matches and lists what it left.
//
// Every step is idempotent, so an undo interrupted on a source that cannot change
// several things at once is finished by running it again.
package undo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/changetext"
)

// Op names what a step does to reverse one part of a change.
type Op string

const (
	RemoveNode      Op = "remove_node"      // a node the change created
	RemoveEdge      Op = "remove_edge"      // an edge the change created
	RestoreNode     Op = "restore_node"     // a node the change deleted
	RestoreEdge     Op = "restore_edge"     // an edge the change deleted
	RestoreFields   Op = "restore_fields"   // fields the change updated
	RestorePosition Op = "restore_position" // where a moved node was
	RestoreConfig   Op = "restore_config"   // a node type as it was before the change
	RemoveConfig    Op = "remove_config"    // a node type the change created
	RemoveGraph     Op = "remove_graph"     // a graph the change created (see graphs.go)
)

// Step is one part of a reversal. Node and Edge are as the change left them (remove)
// or as they were before it (restore). Before and After hold the whole top-level
// fields an update touched ("data" for "data.url"), so that a field the update added
// goes away again. From is where a move put the node, To where it was.
type Step struct {
	Op     Op               `json:"op"`
	Key    string           `json:"key"`
	Node   *datasource.Node `json:"node,omitempty"`
	Edge   *datasource.Edge `json:"edge,omitempty"`
	Before map[string]any   `json:"before,omitempty"`
	After  map[string]any   `json:"after,omitempty"`
	From   *Pos             `json:"from,omitempty"`
	To     *Pos             `json:"to,omitempty"`
	// Config is a node type as it was (restore_config) or as the change created
	// it (remove_config); After then holds its fields as the change left them
	// (datasource.TypeFields).
	Config *datasource.NodeConfig `json:"config,omitempty"`
	// Graph is the graph a create_graph made (RemoveGraph).
	Graph *datasource.CreatedGraph `json:"graph,omitempty"`
}

// Pos is a node's position on the canvas.
type Pos struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Reversal is what undoes one applied action: its steps, applied in order.
type Reversal struct {
	Steps []Step `json:"steps"`
}

// Parse reads a recorded reversal and checks that every step can be run: a known
// operation on a named key, with what that operation puts back. A reversal that
// comes from outside (an imported thread) goes through it before it is kept, so that
// a later undo never meets a step it cannot do.
func Parse(b []byte) (Reversal, error) {
	var rev Reversal
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rev); err != nil {
		return Reversal{}, fmt.Errorf("not a reversal: %w", err)
	}
	if dec.More() {
		return Reversal{}, errors.New("not a reversal: more than one JSON value")
	}
	for i, s := range rev.Steps {
		if err := s.validate(); err != nil {
			return Reversal{}, fmt.Errorf("steps[%d]: %w", i, err)
		}
	}
	return rev, nil
}

// validate checks one step as Parse does.
func (s Step) validate() error {
	if strings.TrimSpace(s.Key) == "" {
		return fmt.Errorf("step %q names no key", s.Op)
	}
	switch s.Op {
	case RemoveNode, RemoveEdge:
	case RestoreNode:
		if s.Node == nil || s.Node.Key != s.Key {
			return fmt.Errorf("restore_node %s does not carry node %s", s.Key, s.Key)
		}
	case RestoreEdge:
		if s.Edge == nil || s.Edge.Key != s.Key || s.Edge.Source == "" || s.Edge.Target == "" {
			return fmt.Errorf("restore_edge %s does not carry edge %s with its source and target", s.Key, s.Key)
		}
	case RestoreFields:
		if len(s.Before) == 0 {
			return fmt.Errorf("restore_fields %s names no field to put back", s.Key)
		}
	case RestorePosition:
		if s.To == nil {
			return fmt.Errorf("restore_position %s has no position to go back to", s.Key)
		}
	case RestoreConfig, RemoveConfig:
		if s.Config == nil || s.Config.Key != s.Key {
			return fmt.Errorf("%s %s does not carry node type %s", s.Op, s.Key, s.Key)
		}
	case RemoveGraph:
		if s.Graph == nil || s.Graph.Key != s.Key {
			return fmt.Errorf("remove_graph %s does not carry graph %s", s.Key, s.Key)
		}
	default:
		return fmt.Errorf("unknown operation %q (remove_node, remove_edge, restore_node, restore_edge, restore_fields, restore_position, restore_config, remove_config or remove_graph)", s.Op)
	}
	return nil
}

// Describe says what a step does, for people.
func (s Step) Describe() string {
	switch s.Op {
	case RemoveNode:
		return "remove node " + s.Key + " (created by the change)"
	case RemoveEdge:
		if s.Edge != nil {
			return fmt.Sprintf("remove edge %s %s → %s (created by the change)", s.Key, s.Edge.Source, s.Edge.Target)
		}
		return "remove edge " + s.Key + " (created by the change)"
	case RestoreNode:
		if s.Node != nil {
			return fmt.Sprintf("restore node %s (%s)", s.Key, s.Node.Type)
		}
		return "restore node " + s.Key
	case RestoreEdge:
		if s.Edge != nil {
			return fmt.Sprintf("restore edge %s %s → %s", s.Key, s.Edge.Source, s.Edge.Target)
		}
		return "restore edge " + s.Key
	case RestoreFields:
		return fmt.Sprintf("restore %s of node %s", strings.Join(sortedKeys(s.Before), ", "), s.Key)
	case RestorePosition:
		if s.To != nil {
			return fmt.Sprintf("move node %s back to (%g, %g)", s.Key, s.To.X, s.To.Y)
		}
	case RestoreConfig:
		return "restore node type " + s.Key + " as it was"
	case RemoveConfig:
		return "remove node type " + s.Key + " (created by the change)"
	case RemoveGraph:
		return describeGraphStep(s)
	}
	return string(s.Op) + " " + s.Key
}

// Explain is Describe with what the step puts back, for the person deciding on an
// undo: under it, indented, each field it restores, from as it is now to as it
// comes back — a node's data key by key (data.url: "new" → "old"), code as a
// numbered line diff where − is the line the undo takes out and + the one it puts
// back. Texts are not sanitised: callers reveal them.
func (s Step) Explain() string {
	lines := s.restores()
	if len(lines) == 0 {
		return s.Describe()
	}
	return s.Describe() + "\n    " + strings.Join(lines, "\n    ")
}

// restores lists, as changetext.FieldLines, what a step changes back.
func (s Step) restores() []string {
	var out []string
	switch s.Op {
	case RestoreFields:
		for _, f := range sortedKeys(s.Before) {
			now, had := s.After[f]
			out = append(out, changetext.FieldLines(f, now, had, s.Before[f])...)
		}
	case RestoreConfig:
		if s.Config == nil {
			return nil
		}
		back := datasource.TypeFields(*s.Config)
		for _, f := range sortedKeys(back) {
			now, had := s.After[f]
			if s.After == nil && isEmptyField(back[f]) {
				continue // a removed type comes back: its fields that hold something
			}
			out = append(out, changetext.FieldLines(f, now, had, back[f])...)
		}
	}
	return out
}

func isEmptyField(v any) bool { return isEmpty(v) || v == "" }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Plan works out the reversal of a (keys assigned, see datasource.AssignKeys) on the
// graph as it is now, before a is applied: it applies a to an in-memory copy with a
// Recorder. It says what an undo would need; the reversal kept for an applied change
// is the one its apply recorded (see Recorder), which saw the graph it changed.
func Plan(ctx context.Context, src datasource.Source, graphKey string, a datasource.Action) (Reversal, error) {
	if a.Type == datasource.CreateGraphAction {
		return planGraph(a)
	}
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return Reversal{}, err
	}
	snap.Graph.Key = graphKey
	sim, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return Reversal{}, err
	}
	rec := NewRecorder()
	if _, err := sim.ApplyAction(ctx, graphKey, a, datasource.Record(rec)); err != nil {
		return Reversal{}, fmt.Errorf("planning the undo of %s: %w", datasource.Describe(a), err)
	}
	return rec.Reversal()
}

// ErrNotRecorded says that an apply reported no reversal: the source did not run the
// recorder, or a change failed while it ran.
var ErrNotRecorded = errors.New("the apply did not record how to reverse it")

// Recorder builds the reversal of an action from inside its apply (it is a
// datasource.Recorder: pass it with datasource.Record). Each single change is looked
// at on the graph the apply changes, just before it is made, so that the reversal
// puts back what the change replaced, even if another writer changed the graph
// since the proposal was shown or the undo planned. Steps come out in reverse order.
type Recorder struct {
	mu      sync.Mutex
	wrapped bool
	steps   []Step
	err     error
}

// NewRecorder returns a recorder that has recorded nothing yet.
func NewRecorder() *Recorder { return &Recorder{} }

// Wrap starts a new recording of changes made on w (an earlier one is dropped: the
// applier runs the action again).
func (r *Recorder) Wrap(w datasource.WorkingCopy) datasource.Changes {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrapped, r.steps, r.err = true, nil, nil
	if cc, ok := w.(datasource.ConfigChanges); ok {
		return &configRecording{recording{w: w, r: r}, cc}
	}
	return &recording{w: w, r: r}
}

// Reversal returns what reverses the changes recorded, or ErrNotRecorded (wrapped)
// when the apply did not run the recorder to its end.
func (r *Recorder) Reversal() (Reversal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.wrapped:
		return Reversal{}, ErrNotRecorded
	case r.err != nil:
		return Reversal{}, fmt.Errorf("%w: %w", ErrNotRecorded, r.err)
	}
	return Reversal{Steps: append([]Step(nil), r.steps...)}, nil
}

// add puts the steps reversing one single change before those of earlier changes;
// a change that failed, or whose before could not be read, spoils the recording.
func (r *Recorder) add(steps []Step, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return
	}
	r.steps = append(steps, r.steps...)
}

// recording is the datasource.Changes a Recorder hands the applier.
type recording struct {
	w datasource.WorkingCopy
	r *Recorder
}

func (c *recording) CreateNode(n datasource.Node) (datasource.Node, error) {
	out, err := c.w.CreateNode(n)
	if err != nil {
		c.r.add(nil, err)
		return out, err
	}
	if now, ok := c.w.LookupNode(out.Key); ok {
		out = now
	}
	c.r.add([]Step{{Op: RemoveNode, Key: out.Key, Node: &out}}, nil)
	return out, nil
}

func (c *recording) CreateEdge(e datasource.Edge) (datasource.Edge, error) {
	out, err := c.w.CreateEdge(e)
	if err != nil {
		c.r.add(nil, err)
		return out, err
	}
	if now, ok := c.w.LookupEdge(out.Key); ok {
		out = now
	}
	c.r.add([]Step{{Op: RemoveEdge, Key: out.Key, Edge: &out}}, nil)
	return out, nil
}

func (c *recording) UpdateNode(key string, changes map[string]any) (datasource.Node, error) {
	old, ok := c.w.LookupNode(key)
	out, err := c.w.UpdateNode(key, changes)
	if err != nil || !ok {
		c.r.add(nil, cmp.Or(err, unread("node", key)))
		return out, err
	}
	now, ok := c.w.LookupNode(key)
	if !ok {
		now = out
	}
	bm, am := datasource.NodeFields(old), datasource.NodeFields(now)
	s := Step{Op: RestoreFields, Key: key, Before: map[string]any{}, After: map[string]any{}}
	for path := range changes {
		top, _, _ := strings.Cut(path, ".")
		s.Before[top], s.After[top] = bm[top], am[top]
	}
	c.r.add([]Step{s}, nil)
	return out, nil
}

func (c *recording) MoveNode(key string, x, y float64) error {
	old, ok := c.w.LookupNode(key)
	if err := c.w.MoveNode(key, x, y); err != nil || !ok {
		c.r.add(nil, cmp.Or(err, unread("node", key)))
		return err
	}
	to := Pos{x, y}
	if now, ok := c.w.LookupNode(key); ok {
		to = Pos{now.PosX, now.PosY}
	}
	c.r.add([]Step{{Op: RestorePosition, Key: key, From: &to, To: &Pos{old.PosX, old.PosY}}}, nil)
	return nil
}

func (c *recording) DeleteNode(key string) ([]datasource.Edge, error) {
	old, ok := c.w.LookupNode(key)
	edges := c.w.EdgesOf(key)
	out, err := c.w.DeleteNode(key)
	if err != nil || !ok {
		c.r.add(nil, cmp.Or(err, unread("node", key)))
		return out, err
	}
	// The edges the delete reports taking are the ones it took (a source changed
	// one call at a time reads them in the same step as the delete); when they are
	// the ones read just before, that read's order is kept.
	if out != nil && !sameKeys(edges, out) {
		edges = out
	}
	steps := []Step{{Op: RestoreNode, Key: key, Node: &old}}
	for i := range edges {
		steps = append(steps, Step{Op: RestoreEdge, Key: edges[i].Key, Edge: &edges[i]})
	}
	c.r.add(steps, nil)
	return out, nil
}

func (c *recording) DeleteEdge(key string) error {
	old, ok := c.w.LookupEdge(key)
	if err := c.w.DeleteEdge(key); err != nil || !ok {
		c.r.add(nil, cmp.Or(err, unread("edge", key)))
		return err
	}
	c.r.add([]Step{{Op: RestoreEdge, Key: key, Edge: &old}}, nil)
	return nil
}

// sameKeys reports whether two lists hold edges of the same keys.
func sameKeys(a, b []datasource.Edge) bool {
	if len(a) != len(b) {
		return false
	}
	keys := map[string]bool{}
	for _, e := range a {
		keys[e.Key] = true
	}
	for _, e := range b {
		if !keys[e.Key] {
			return false
		}
	}
	return true
}

// unread is the failure to read what a change replaced (it was made all the same).
func unread(kind, key string) error {
	return fmt.Errorf("could not read %s %s before changing it", kind, key)
}

// nodeFields are the fields compared to tell whether a node was edited: what a
// person or the model can change (a source may add bookkeeping fields of its own).
var nodeFields = []string{"type", "sheet", "process", "handles", "data", "posX", "posY", "size"}

// editedFields lists the fields in which two versions of a node differ.
func editedFields(was, now datasource.Node) []string {
	a, b := datasource.NodeFields(was), datasource.NodeFields(now)
	var out []string
	for _, f := range nodeFields {
		if !sameField(f, a[f], b[f]) {
			out = append(out, f)
		}
	}
	return out
}

// sameField compares one field of two versions of a node. A source may keep a
// node's default handles implicit and its empty data as null (ArangoDB stores what
// it was given): an empty value matches an empty one, and empty handles match any.
func sameField(f string, a, b any) bool {
	if datasource.SameJSON(a, b) {
		return true
	}
	switch f {
	case "data":
		return isEmpty(a) && isEmpty(b)
	case "handles":
		return isEmpty(a) || isEmpty(b)
	}
	return false
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func sameEdge(a, b datasource.Edge) bool {
	return a.Key == b.Key && a.Source == b.Source && a.Target == b.Target && a.SourceHandle == b.SourceHandle &&
		a.TargetHandle == b.TargetHandle && a.Sheet == b.Sheet && a.Label == b.Label
}

// Report says what an undo did or would do.
type Report struct {
	Reversed []string // steps reversed (or to reverse), each with what it puts back (Step.Explain)
	Already  []string // steps whose effect was already reversed
	Left     []string // forced: what was left as it is, and why
	Drift    []string // what changed in the graph since the change, one sentence each
	// Plan is the reversal reduced to the steps reversed: what a claim records.
	Plan Reversal
}

// DriftError refuses an undo because the graph changed since the change.
type DriftError struct{ Drift []string }

func (e *DriftError) Error() string {
	return "the graph changed since: " + strings.Join(e.Drift, "; ")
}

// IsDrift reports whether err refuses an undo because the graph changed.
func IsDrift(err error) (*DriftError, bool) {
	var d *DriftError
	ok := errors.As(err, &d)
	return d, ok
}

// Run reverses rev on w, step by step, checking each first. Without force, any
// drift is a DriftError after every step was checked (the caller discards w's
// changes); with force, drifted steps are left and listed.
func Run(w datasource.WorkingCopy, rev Reversal, force bool) (Report, error) {
	return run(w, rev, force, false)
}

// run is Run; with abort, a step that fails stops the undo with its error (a
// source that changes one thing at a time: the network, the database).
func run(w datasource.WorkingCopy, rev Reversal, force, abort bool) (Report, error) {
	var r Report
	for _, s := range rev.Steps {
		state, why := check(w, s)
		switch state {
		case done:
			r.Already = append(r.Already, s.Describe())
			continue
		case drifted:
			r.Drift = append(r.Drift, why)
			r.Left = append(r.Left, s.Describe()+" — left: "+why)
			continue
		}
		if err := apply(w, s); err != nil {
			if abort {
				return r, fmt.Errorf("%s: %w", s.Describe(), err)
			}
			why := fmt.Sprintf("%s cannot be done: %v", s.Describe(), err)
			r.Drift = append(r.Drift, why)
			r.Left = append(r.Left, s.Describe()+" — left: "+err.Error())
			continue
		}
		r.Reversed = append(r.Reversed, s.Explain())
		r.Plan.Steps = append(r.Plan.Steps, s)
	}
	if len(r.Drift) > 0 && !force {
		return r, &DriftError{Drift: r.Drift}
	}
	return r, nil
}

type stepState int

const (
	todo stepState = iota
	done
	drifted
)

// check tells whether a step is still to do, already done, or no longer matches.
func check(w datasource.WorkingCopy, s Step) (stepState, string) {
	switch s.Op {
	case RemoveNode:
		n, ok := w.LookupNode(s.Key)
		if !ok {
			return done, ""
		}
		if s.Node != nil {
			if f := editedFields(*s.Node, n); len(f) > 0 {
				return drifted, fmt.Sprintf("node %s was edited since (%s)", s.Key, strings.Join(f, ", "))
			}
		}
		if edges := w.EdgesOf(s.Key); len(edges) > 0 {
			keys := make([]string, len(edges))
			for i, e := range edges {
				keys[i] = e.Key
			}
			return drifted, fmt.Sprintf("node %s got new edges since (%s)", s.Key, strings.Join(keys, ", "))
		}
	case RemoveEdge:
		e, ok := w.LookupEdge(s.Key)
		if !ok {
			return done, ""
		}
		if s.Edge != nil && !sameEdge(*s.Edge, e) {
			return drifted, fmt.Sprintf("edge %s was changed since", s.Key)
		}
	case RestoreNode:
		n, ok := w.LookupNode(s.Key)
		if ok && s.Node != nil && len(editedFields(*s.Node, n)) == 0 {
			return done, ""
		}
		if ok {
			return drifted, fmt.Sprintf("a node %s exists again", s.Key)
		}
	case RestoreEdge:
		e, ok := w.LookupEdge(s.Key)
		if ok && s.Edge != nil && sameEdge(*s.Edge, e) {
			return done, ""
		}
		if ok {
			return drifted, fmt.Sprintf("an edge %s exists again", s.Key)
		}
		if s.Edge != nil {
			for _, k := range []string{s.Edge.Source, s.Edge.Target} {
				if _, ok := w.LookupNode(k); !ok {
					return drifted, fmt.Sprintf("edge %s cannot come back: node %s is gone", s.Key, k)
				}
			}
		}
	case RestoreFields:
		n, ok := w.LookupNode(s.Key)
		if !ok {
			return drifted, fmt.Sprintf("node %s was deleted since", s.Key)
		}
		cur := datasource.NodeFields(n)
		if matches(cur, s.Before) {
			return done, ""
		}
		var changed []string
		for _, f := range sortedKeys(s.After) {
			if !datasource.SameJSON(cur[f], s.After[f]) {
				changed = append(changed, f)
			}
		}
		if len(changed) > 0 {
			return drifted, fmt.Sprintf("node %s was edited since (%s)", s.Key, strings.Join(changed, ", "))
		}
	case RestorePosition:
		n, ok := w.LookupNode(s.Key)
		if !ok {
			return drifted, fmt.Sprintf("node %s was deleted since", s.Key)
		}
		if s.To != nil && n.PosX == s.To.X && n.PosY == s.To.Y {
			return done, ""
		}
		if s.From != nil && (n.PosX != s.From.X || n.PosY != s.From.Y) {
			return drifted, fmt.Sprintf("node %s was moved since (now at %g, %g)", s.Key, n.PosX, n.PosY)
		}
	case RestoreConfig, RemoveConfig:
		return checkConfig(w, s)
	default:
		return drifted, fmt.Sprintf("unknown undo step %q", s.Op)
	}
	return todo, ""
}

func matches(cur, want map[string]any) bool {
	for k, v := range want {
		if !datasource.SameJSON(cur[k], v) {
			return false
		}
	}
	return true
}

// apply makes one step on w.
func apply(w datasource.WorkingCopy, s Step) error {
	switch s.Op {
	case RemoveNode:
		_, err := w.DeleteNode(s.Key)
		return err
	case RemoveEdge:
		return w.DeleteEdge(s.Key)
	case RestoreNode:
		if s.Node == nil {
			return errors.New("the node was not recorded")
		}
		_, err := w.CreateNode(*s.Node)
		return err
	case RestoreEdge:
		if s.Edge == nil {
			return errors.New("the edge was not recorded")
		}
		if r, ok := w.(datasource.EdgeRestorer); ok {
			// As it was: an edge between two sheets, which a new edge may not be.
			_, err := r.RestoreEdge(*s.Edge)
			return err
		}
		_, err := w.CreateEdge(*s.Edge)
		return err
	case RestoreFields:
		_, err := w.UpdateNode(s.Key, s.Before)
		return err
	case RestorePosition:
		if s.To == nil {
			return errors.New("the position was not recorded")
		}
		return w.MoveNode(s.Key, s.To.X, s.To.Y)
	case RestoreConfig, RemoveConfig:
		return applyConfig(w, s)
	}
	return fmt.Errorf("unknown undo step %q", s.Op)
}

// Check runs rev on an in-memory copy of the graph as it is now and reports what
// undoing would do (the dry run, and the check before a claim). The source is not
// changed.
func Check(ctx context.Context, src datasource.Source, graphKey string, rev Reversal, force bool) (Report, error) {
	if g, ok := graphStep(rev); ok {
		return runGraph(ctx, src, g, force, true)
	}
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return Report{}, err
	}
	snap.Graph.Key = graphKey
	sim, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return Report{}, err
	}
	var rep Report
	err = sim.Change(ctx, graphKey, func(w datasource.WorkingCopy) error {
		var err error
		rep, err = Run(w, rev, force)
		return err
	})
	return rep, err
}

// ErrNotUndoable is returned by Apply for a source that can change nothing.
var ErrNotUndoable = errors.New("this source cannot be changed by undo")

// Apply reverses rev on the source: on a source that changes a working copy at once
// (file, memory, and ArangoDB in one stream transaction), all of it or nothing, any
// drift refusing the whole; on another Mutable source (a Nodius server, through its
// apply endpoint), step by step, leaving and listing what no longer matches
// (running it again finishes an interrupted undo: steps are idempotent).
func Apply(ctx context.Context, src datasource.Source, graphKey string, rev Reversal) (Report, error) {
	if g, ok := graphStep(rev); ok {
		return runGraph(ctx, src, g, false, false)
	}
	if len(rev.Steps) == 0 {
		return Report{}, nil // everything was found reversed already
	}
	if c, ok := src.(datasource.WorkingCopyChanger); ok {
		var rep Report
		err := c.Change(ctx, graphKey, func(w datasource.WorkingCopy) error {
			var err error
			rep, err = Run(w, rev, false)
			return err
		})
		return rep, err
	}
	if m, ok := src.(datasource.Mutable); ok {
		return run(datasource.MutableCopy(ctx, m, graphKey), rev, true, true)
	}
	return Report{}, ErrNotUndoable
}

// Belongs checks that every step of rev reverses part of a (keys assigned, as it was
// applied): a reversal read from outside (an imported or synced thread, a database
// edited by hand) may name any node, and undo would remove or overwrite it as
// "created by the change". A step may remove only what a created, restore only what
// a deleted (an edge: one a deleted node took with it), put back the fields only of
// a node a updated and the position only of one it moved.
func Belongs(rev Reversal, a datasource.Action) error {
	var (
		createdNodes, createdEdges = map[string]bool{}, map[string]bool{}
		deletedNodes, deletedEdges = map[string]bool{}, map[string]bool{}
		updated, moved             = map[string]bool{}, map[string]bool{}
		configured, createdTypes   = map[string]bool{}, map[string]bool{}
	)
	var walk func(a datasource.Action)
	walk = func(a datasource.Action) {
		switch {
		case a.Type == datasource.CreateNodeAction && a.CreateNode != nil:
			createdNodes[a.CreateNode.NodeKey] = true
		case a.Type == datasource.CreateEdgeAction && a.CreateEdge != nil:
			createdEdges[a.CreateEdge.EdgeKey] = true
		case a.Type == datasource.DeleteNodeAction && a.DeleteNode != nil:
			deletedNodes[a.DeleteNode.NodeKey] = true
		case a.Type == datasource.DeleteEdgeAction && a.DeleteEdge != nil:
			deletedEdges[a.DeleteEdge.EdgeKey] = true
		case a.Type == datasource.UpdateNodeAction && a.UpdateNode != nil:
			updated[a.UpdateNode.NodeKey] = true
		case a.Type == datasource.MoveNodeAction && a.MoveNode != nil:
			moved[a.MoveNode.NodeKey] = true
		case a.Type == datasource.BatchAction && a.Batch != nil:
			for _, s := range a.Batch.Actions {
				walk(s)
			}
		case a.Type == datasource.ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
			c := a.ConfigureNodeType
			configured[c.TypeKey] = true
			createdTypes[c.TypeKey] = c.Mode == "create"
			for _, k := range c.Nodes { // where the code lives on the nodes
				updated[k] = true
			}
			if l, ok := datasource.Lower(a, func() string { return "" }); ok {
				walk(l)
			}
		}
	}
	walk(a)
	// A create without a key (an action recorded before keys were assigned) lets the
	// source choose it: any removal of that kind may be it.
	for i, s := range rev.Steps {
		ok := false
		switch s.Op {
		case RemoveNode:
			ok = createdNodes[s.Key] || createdNodes[""]
		case RemoveEdge:
			ok = createdEdges[s.Key] || createdEdges[""]
		case RestoreNode:
			ok = deletedNodes[s.Key]
		case RestoreEdge:
			ok = deletedEdges[s.Key] || (s.Edge != nil && (deletedNodes[s.Edge.Source] || deletedNodes[s.Edge.Target]))
		case RestoreFields:
			ok = updated[s.Key]
		case RestorePosition:
			ok = moved[s.Key]
		case RestoreConfig:
			ok = configured[s.Key] && !createdTypes[s.Key]
		case RemoveConfig:
			ok = createdTypes[s.Key]
		case RemoveGraph:
			ok = createsGraph(a, s)
		}
		if !ok {
			return fmt.Errorf("steps[%d] (%s) is not part of the change %s", i, s.Describe(), datasource.Describe(a))
		}
	}
	return nil
}
