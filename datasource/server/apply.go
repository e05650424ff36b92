package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// Step kinds: the editing messages a change is made of.
const (
	stepInstructions = "applyInstructionToGraph"
	stepCreate       = "batchCreateElements"
	stepDelete       = "batchDeleteElements"
)

// step is one editing message to send. The server applies each message whole or
// not at all; a change of several messages can stop part-way.
type step struct {
	kind         string
	sheet        string            // create and delete
	instructions []json.RawMessage // {i, sheetId, nodeId|edgeId, hints…}
	nodes, edges []map[string]any  // create
	nodeKeys     []string          // delete
	edgeKeys     []string          // delete
}

func (st step) describe() string {
	switch st.kind {
	case stepInstructions:
		return fmt.Sprintf("%d instruction(s)", len(st.instructions))
	case stepCreate:
		return fmt.Sprintf("the creation of %s on sheet %s", countOf(len(st.nodes), len(st.edges)), st.sheet)
	}
	return fmt.Sprintf("the deletion of %s on sheet %s", countOf(len(st.nodeKeys), len(st.edgeKeys)), st.sheet)
}

func countOf(nodes, edges int) string {
	var parts []string
	if nodes > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s)", nodes))
	}
	if edges > 0 {
		parts = append(parts, fmt.Sprintf("%d edge(s)", edges))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " and ")
}

// onto applies the step to g as the server would (to keep a copy current, or to
// try a change before sending it).
func (st step) onto(g *nodiusgraph.Graph) error {
	switch st.kind {
	case stepInstructions:
		list := make([]nodiusgraph.GraphInstruction, len(st.instructions))
		for i, raw := range st.instructions {
			if err := json.Unmarshal(raw, &list[i]); err != nil {
				return &nodiusgraph.Refusal{Message: "Invalid instruction:" + err.Error()}
			}
		}
		return g.ApplyInstructions(list)
	case stepCreate:
		return g.BatchCreate(st.sheet, st.nodes, st.edges)
	}
	return g.BatchDelete(st.sheet, st.nodeKeys, st.edgeKeys)
}

// send sends the step on the socket and waits for its acknowledgement.
func (st step) send(ctx context.Context, c *nodiusapi.Editor) error {
	switch st.kind {
	case stepInstructions:
		return c.ApplyInstructions(ctx, st.instructions)
	case stepCreate:
		return c.BatchCreate(ctx, st.sheet, rawList(st.nodes), rawList(st.edges))
	}
	return c.BatchDelete(ctx, st.sheet, st.nodeKeys, st.edgeKeys)
}

func rawList(objs []map[string]any) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(objs))
	for _, o := range objs {
		b, _ := json.Marshal(o)
		out = append(out, b)
	}
	return out
}

// chunk splits instruction steps into messages the server takes (at most
// nodiusapi.MaxInstructions each: it closes the socket on more).
func chunk(steps []step) []step {
	var out []step
	for _, st := range steps {
		if st.kind != stepInstructions || len(st.instructions) <= nodiusapi.MaxInstructions {
			out = append(out, st)
			continue
		}
		for i := 0; i < len(st.instructions); i += nodiusapi.MaxInstructions {
			out = append(out, step{kind: stepInstructions, instructions: st.instructions[i:min(i+nodiusapi.MaxInstructions, len(st.instructions))]})
		}
	}
	return out
}

// run sends the steps on lk's socket in order, each after the previous one's
// acknowledgement, and stops at the first refusal. Each acknowledgement echoes
// what the server applied and reached the copy's queue before the send returned:
// it is applied to the copy with what other clients did before it. The report
// says what was acknowledged; the error is the refusal.
//
// A step sent but not acknowledged (the socket dropped, the server stayed
// silent) may or may not have been applied. The live graph is then read again — a
// new socket, routed and registered, the editing messages since the save
// replayed — and asked: a step that landed counts as applied and the next ones
// go on the new socket; one that did not land ends the run, nothing after it
// sent; one that cannot be told ends it with Unsure set. So a change is never
// sent twice, and what is reported is what the graph holds.
func run(ctx context.Context, f *follower, lk *link, steps []step) (nodiusapi.ApplyReport, int, error) {
	var rep nodiusapi.ApplyReport
	count := func(st step) {
		switch st.kind {
		case stepInstructions:
			rep.Instructions += len(st.instructions)
		case stepCreate:
			for _, n := range st.nodes {
				rep.NodesCreated = append(rep.NodesCreated, keyOf(n))
			}
			for _, e := range st.edges {
				rep.EdgesCreated = append(rep.EdgesCreated, keyOf(e))
			}
		case stepDelete:
			rep.NodesDeleted = append(rep.NodesDeleted, st.nodeKeys...)
			rep.EdgesDeleted = append(rep.EdgesDeleted, st.edgeKeys...)
		}
	}
	for i, st := range steps {
		if err := st.send(ctx, lk.conn); err != nil {
			rep.Failed = st.kind
			rep.Reason = reasonOf(err)
			var re *nodiusapi.RefusedError
			if errors.As(err, &re) || ctx.Err() != nil {
				f.mu.Lock()
				if st.kind == stepInstructions && re != nil {
					rep.Reason += sheetHint(f.graph, st)
				}
				if re == nil && f.stale == "" {
					// Applied or not, the server did not say: read the graph again.
					f.stale = "an edit of this client was not acknowledged"
				}
				f.mu.Unlock()
				rep.Unsure = re == nil
				return rep, i, err
			}
			landed, lerr := f.landed(ctx, st)
			switch {
			case lerr != nil:
				rep.Unsure = true
				rep.Reason = fmt.Sprintf("it was sent but not acknowledged (%s), and the live graph could not be read to tell whether it landed: %v", rep.Reason, lerr)
				return rep, i, err
			case !landed:
				rep.Reason = fmt.Sprintf("it was sent but not acknowledged (%s), and the live graph read again shows it did not land", rep.Reason)
				return rep, i, err
			}
			rep.Failed, rep.Reason = "", ""
			count(st)
			f.mu.Lock()
			lk = f.lk
			f.mu.Unlock()
			continue
		}
		f.mu.Lock()
		if err := f.drain(lk); err != nil {
			f.stale = err.Error()
		}
		f.mu.Unlock()
		count(st)
	}
	return rep, len(steps), nil
}

// landed reads the live graph again (a new socket: routed, registered, the
// messages since the save replayed) and reports whether st's effect is in it. The
// caller holds f.loadMu.
func (f *follower) landed(ctx context.Context, st step) (bool, error) {
	if err := f.load(ctx, true); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch st.kind {
	case stepInstructions:
		list := make([]nodiusgraph.GraphInstruction, len(st.instructions))
		for i, raw := range st.instructions {
			if err := json.Unmarshal(raw, &list[i]); err != nil {
				return false, err
			}
		}
		holds, known := f.graph.Holds(list)
		if !known {
			return false, errors.New("an instruction whose effect the graph does not show")
		}
		return holds, nil
	case stepCreate:
		var nodes, edges []string
		for _, n := range st.nodes {
			nodes = append(nodes, keyOf(n))
		}
		for _, e := range st.edges {
			edges = append(edges, keyOf(e))
		}
		has, _ := f.graph.Has(st.sheet, nodes, edges)
		return has, nil
	}
	_, none := f.graph.Has(st.sheet, st.nodeKeys, st.edgeKeys)
	return none, nil
}

// save asks the server to save the graph now (forceSave) on the follower's
// socket, once more on a new one when the first is lost: "done" then means the
// change is in the server's database. It returns why it could not ("" when
// saved). The caller holds f.loadMu.
func (f *follower) save(ctx context.Context) string {
	why := ""
	for try := 0; try < 2; try++ {
		if try > 0 {
			if err := f.load(ctx, true); err != nil {
				return why + "; and no editing socket could be had again: " + err.Error()
			}
		}
		f.mu.Lock()
		lk := f.lk
		f.mu.Unlock()
		if lk == nil {
			why = "no editing socket"
			continue
		}
		err := lk.conn.ForceSave(ctx, f.key)
		if err == nil {
			return ""
		}
		why = reasonOf(err)
		var re *nodiusapi.RefusedError
		if errors.As(err, &re) || ctx.Err() != nil {
			break
		}
	}
	return why
}

// saveNote is what a report says of a save that was not confirmed.
func saveNote(why string) string {
	return "the server did not confirm it saved the change (" + why + "): it is in the graph its editors see, and the server saves it on its own within about 30 s"
}

func keyOf(o map[string]any) string { s, _ := o["_key"].(string); return s }

func reasonOf(err error) string {
	var re *nodiusapi.RefusedError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// sheetHint explains a "not found" of an instruction naming the wrong sheet: the
// server's converter always names sheet "0", so a node of another sheet is not
// found there.
func sheetHint(g *nodiusgraph.Graph, st step) string {
	for _, raw := range st.instructions {
		var in nodiusgraph.GraphInstruction
		if json.Unmarshal(raw, &in) != nil {
			continue
		}
		if in.NodeID != "" {
			if sh, ok := g.NodeSheet(in.NodeID); ok && sh != in.SheetID {
				return fmt.Sprintf(" (node %s is on sheet %s, the instruction names sheet %s)", in.NodeID, sh, in.SheetID)
			}
		}
		if in.EdgeID != "" {
			if sh, ok := g.EdgeSheet(in.EdgeID); ok && sh != in.SheetID {
				return fmt.Sprintf(" (edge %s is on sheet %s, the instruction names sheet %s)", in.EdgeID, sh, in.SheetID)
			}
		}
	}
	return ""
}

// ApplyServerAction applies an ai:apply_action of the server's assistant the way
// the Nodius web client does: the instructions (applyInstructionToGraph), then the
// nodes and edges to create (batchCreateElements), then the keys to delete with the
// deleted nodes' edges added (batchDeleteElements), each after the previous
// acknowledgement, then forceSave. The report says what was applied, also when a
// step is refused; the error then says it in a sentence.
func (s *Source) ApplyServerAction(ctx context.Context, graphKey string, a nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error) {
	if a.Empty() {
		return nodiusapi.ApplyReport{}, nil
	}
	p, err := s.PrepareServerApply(ctx, graphKey)
	if err != nil {
		// Nothing was sent: the report says the first step never happened.
		return nodiusapi.ApplyReport{Failed: "registerUserOnGraph", Reason: err.Error()}, err
	}
	defer p.Release()
	return p.Apply(ctx, a)
}

// PrepareServerApply registers on the graph (routed through /api/sync, every
// sheet) and holds the registration for one Apply: the server's assistant is
// approved only once this succeeded (nodiusapi.Preparer).
func (s *Source) PrepareServerApply(ctx context.Context, graphKey string) (nodiusapi.Prepared, error) {
	f, err := s.follow(graphKey)
	if err != nil {
		return nil, err
	}
	end, err := f.begin(ctx, true)
	if err != nil {
		return nil, err
	}
	return &prepared{s: s, f: f, end: end}, nil
}

// prepared is a held registration (nodiusapi.Prepared).
type prepared struct {
	s        *Source
	f        *follower
	end      func()
	mu       sync.Mutex
	released bool
}

func (p *prepared) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.released {
		p.released = true
		p.end()
	}
}

func (p *prepared) Apply(ctx context.Context, a nodiusapi.ApplyAction) (nodiusapi.ApplyReport, error) {
	if a.Empty() {
		return nodiusapi.ApplyReport{}, nil
	}
	p.mu.Lock()
	if p.released {
		// Let go meanwhile (the run went on to other frames): taken again.
		end, err := p.f.begin(ctx, true)
		if err != nil {
			p.mu.Unlock()
			return nodiusapi.ApplyReport{Failed: "registerUserOnGraph", Reason: err.Error()}, err
		}
		p.end, p.released = end, false
	}
	p.mu.Unlock()
	f := p.f
	// The assistant answered in between: the socket may have dropped, or the
	// registration been lost. Made current again (routed and registered anew if
	// need be) before anything is sent.
	if err := f.ready(ctx, true); err != nil {
		return nodiusapi.ApplyReport{Failed: "registerUserOnGraph", Reason: err.Error()}, err
	}
	f.mu.Lock()
	lk := f.lk
	f.mu.Unlock()
	if lk == nil {
		err := &fault.Error{Code: fault.Network, Message: "no editing socket to the Nodius server"}
		return nodiusapi.ApplyReport{Failed: "registerUserOnGraph", Reason: err.Message}, err
	}
	sheet := a.SheetID
	if sheet == "" {
		sheet = "0"
	}
	var steps []step
	if len(a.Instructions) > 0 {
		steps = append(steps, step{kind: stepInstructions, instructions: a.Instructions})
	}
	if len(a.NodesToCreate) > 0 || len(a.EdgesToCreate) > 0 {
		st := step{kind: stepCreate, sheet: sheet}
		for _, list := range []struct {
			raw []json.RawMessage
			dst *[]map[string]any
		}{{a.NodesToCreate, &st.nodes}, {a.EdgesToCreate, &st.edges}} {
			for _, r := range list.raw {
				var o map[string]any
				if err := json.Unmarshal(r, &o); err != nil || o == nil {
					return nodiusapi.ApplyReport{Failed: stepCreate, Reason: "malformed node or edge in ai:apply_action"},
						&fault.Error{Code: fault.ServerError, Message: "the server's ai:apply_action holds a node or edge that is not a JSON object: nothing was applied"}
				}
				*list.dst = append(*list.dst, o)
			}
		}
		steps = append(steps, st)
	}
	if len(a.NodeKeysToDelete) > 0 || len(a.EdgeKeysToDelete) > 0 {
		f.mu.Lock()
		steps = append(steps, step{kind: stepDelete, sheet: sheet, nodeKeys: a.NodeKeysToDelete,
			edgeKeys: withNodeEdges(f.graph, sheet, a.NodeKeysToDelete, a.EdgeKeysToDelete)})
		f.mu.Unlock()
	}
	// Instructions are sent as they came, in messages the server takes.
	rep, sent, err := run(ctx, f, lk, chunk(steps))
	if sent > 0 || err == nil {
		if why := f.save(ctx); why == "" {
			rep.Saved = true
		} else {
			rep.SaveNote = saveNote(why)
		}
	}
	if err != nil {
		return rep, &fault.Error{Code: fault.InvalidRequest, Err: err, Message: "the approved change was not fully applied: " + reportSentence(rep)}
	}
	return rep, nil
}

// withNodeEdges adds to edgeKeys the edges of the nodes to delete, on their sheet,
// as the web client does (the server does not remove a node's edges itself).
func withNodeEdges(g *nodiusgraph.Graph, sheet string, nodeKeys, edgeKeys []string) []string {
	out := append([]string{}, edgeKeys...)
	seen := map[string]bool{}
	for _, k := range out {
		seen[k] = true
	}
	sh := g.Sheets[sheet]
	if sh == nil {
		return out
	}
	for _, n := range nodeKeys {
		for _, e := range sh.EdgesOf(n) {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// reportSentence says what a report holds: what was applied and what was refused.
func reportSentence(r nodiusapi.ApplyReport) string {
	var done []string
	if r.Instructions > 0 {
		done = append(done, fmt.Sprintf("%d instruction(s)", r.Instructions))
	}
	if n := len(r.NodesCreated) + len(r.EdgesCreated); n > 0 {
		done = append(done, "created "+countOf(len(r.NodesCreated), len(r.EdgesCreated)))
	}
	if n := len(r.NodesDeleted) + len(r.EdgesDeleted); n > 0 {
		done = append(done, "deleted "+countOf(len(r.NodesDeleted), len(r.EdgesDeleted)))
	}
	applied := "nothing was applied"
	if len(done) > 0 {
		applied = "applied " + strings.Join(done, ", ")
	}
	if r.Complete() {
		return applied
	}
	if r.Unsure {
		return fmt.Sprintf("%s; %s may or may not have been applied (%s) and nothing after it was sent", applied, r.Failed, r.Reason)
	}
	return fmt.Sprintf("%s; the server refused %s (%s) and nothing after it was sent", applied, r.Failed, r.Reason)
}

// ApplyAction applies an approved action of the local agent through the editing
// socket, as the edits of a web editor, so that the graph's editors see it at once.
//
// The socket is registered on every sheet first, which gives the live graph. On it:
// the expectation (datasource.Expect: what the person approving was shown) is
// checked, and the action is tried on a copy; a difference or a step the graph does
// not allow refuses the whole action (*datasource.ConflictError) before anything is
// sent. The action's steps are then sent in order, consecutive steps of one kind
// merged into one message (the server applies each message whole); a refusal
// part-way stops there, and the error says what was applied and what was not. An
// edit another client makes in the instant between the check and the server's
// receipt of a message is not seen (the server has no compare-and-set); edits seen
// before sending are caught up and checked again. A refusal after part of the
// action was applied is a *datasource.ConflictError too, whose sentence says what
// was applied: the approval is then recorded as such, never left pending to be
// applied twice.
func (s *Source) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	o := datasource.ApplyOptionsOf(opts)
	if a.Type == datasource.ConfigureNodeTypeAction && a.ConfigureNodeType != nil {
		return s.applyNodeTypeAction(ctx, graphKey, *a.ConfigureNodeType, o) // nodetype.go
	}
	f, err := s.follow(graphKey)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	end, err := f.begin(ctx, true)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	defer end()
	// The node types give new nodes their handles and size; without them a node is
	// created bare (an empty handles object), as the server's converter does.
	f.mu.Lock()
	lk, defaults := f.lk, f.defaults
	f.mu.Unlock()
	steps, created, snap, err := s.prepare(f, a, o.Expect, defaults)
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	// Edits other clients made while this was prepared: check again on them.
	f.mu.Lock()
	late := len(lk.queue)
	err = f.drain(lk)
	f.mu.Unlock()
	if err != nil {
		return datasource.ApplyResult{}, &datasource.ConflictError{Err: fmt.Errorf("%w: %v", datasource.ErrGraphChanged, err)}
	}
	if late > 0 {
		if steps, created, snap, err = s.prepare(f, a, o.Expect, defaults); err != nil {
			return datasource.ApplyResult{}, err
		}
	}
	if o.Record != nil {
		if err := recordOn(ctx, graphKey, snap, a, o.Record); err != nil {
			return datasource.ApplyResult{}, err
		}
	}
	rep, sent, err := run(ctx, f, lk, chunk(steps))
	note := "applied through the Nodius server's editing socket and saved: the graph's editors see it now"
	if sent > 0 {
		if why := f.save(ctx); why != "" {
			note = "applied through the Nodius server's editing socket; " + saveNote(why)
		}
	}
	if err != nil && rep.Unsure {
		// It may be in the graph: recorded (not left pending), so that approving
		// again cannot apply it twice.
		return datasource.ApplyResult{Applied: false, Created: datasource.Created{Nodes: nonNil(rep.NodesCreated), Edges: nonNil(rep.EdgesCreated)},
				Note: "may be partly applied"}, &datasource.ConflictError{Err: &fault.Error{Code: fault.Network, Err: err,
				Message: fmt.Sprintf("the change may or may not have reached graph %q: %s — look at the graph in the editor", graphKey, reportSentence(rep))}}
	}
	if err != nil {
		if sent == 0 {
			var re *nodiusapi.RefusedError
			if errors.As(err, &re) {
				return datasource.ApplyResult{}, &datasource.ConflictError{Err: fmt.Errorf(
					"%w: the Nodius server refused the change (%s); nothing was applied", datasource.ErrGraphChanged, re.Message)}
			}
			if ctx.Err() != nil {
				return datasource.ApplyResult{}, err
			}
			// Sent, not acknowledged, and the live graph shows it did not land:
			// nothing was applied, and approving again is safe.
			return datasource.ApplyResult{}, &fault.Error{Code: fault.Network, Retryable: true, Err: err, Message: fmt.Sprintf(
				"nothing was applied to graph %q: %s — the proposal is still pending; approve it again", graphKey, reportSentence(rep))}
		}
		// Part of it is in the graph: the decision is recorded with this sentence
		// (a ConflictError is recorded, not left pending), so that approving again
		// cannot apply the first part twice.
		return datasource.ApplyResult{Applied: false, Created: datasource.Created{Nodes: nonNil(rep.NodesCreated), Edges: nonNil(rep.EdgesCreated)},
				Note: "partly applied"}, &datasource.ConflictError{Err: &fault.Error{Code: fault.InvalidRequest, Err: err,
				Message: fmt.Sprintf("only part of the change reached graph %q: %s — look at the graph in the editor", graphKey, reportSentence(rep))}}
	}
	return datasource.ApplyResult{Applied: true, Created: created, Note: note}, nil
}

func workspaceOf(g *nodiusgraph.Graph) string { ws, _ := g.Doc["workspace"].(string); return ws }

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// prepare checks the expectation on the copy, converts the action into editing
// steps and tries them on a clone of it. snap is the copy it was checked on.
func (s *Source) prepare(f *follower, a datasource.Action, expect *datasource.Action, defaults map[string]typeDefaults) (steps []step, created datasource.Created, snap datasource.Snapshot, err error) {
	f.mu.Lock()
	snap, err = f.graph.Snapshot()
	try := f.graph.Clone()
	f.mu.Unlock()
	if err != nil {
		return nil, datasource.Created{}, snap, err
	}
	if expect != nil {
		if err := datasource.CheckShown(datasource.SnapshotLookup(snap), *expect); err != nil {
			return nil, datasource.Created{}, snap, &datasource.ConflictError{Err: err}
		}
	}
	c := converter{g: try, defaults: defaults, created: datasource.Created{Nodes: []string{}, Edges: []string{}}}
	if err := c.action(a, 0); err != nil {
		var r *nodiusgraph.Refusal
		if errors.As(err, &r) {
			return nil, datasource.Created{}, snap, &datasource.ConflictError{Err: err}
		}
		return nil, datasource.Created{}, snap, err
	}
	return merge(c.steps), c.created, snap, nil
}

// recordOn feeds a recorder (undo) with the action made on an in-memory copy of
// the graph as it is right before sending.
func recordOn(ctx context.Context, graphKey string, snap datasource.Snapshot, a datasource.Action, r datasource.Recorder) error {
	sim, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return err
	}
	// The copy refusing the action leaves the recorder with that failure: the
	// server, not the copy, decides.
	_, _ = sim.ApplyAction(ctx, graphKey, a, datasource.Record(r))
	return nil
}

// merge joins consecutive steps of one kind (and sheet, for batches) into one
// message, so that most actions are one message the server applies whole.
func merge(steps []step) []step {
	var out []step
	for _, st := range steps {
		if n := len(out); n > 0 && out[n-1].kind == st.kind && (st.kind == stepInstructions || out[n-1].sheet == st.sheet) {
			last := &out[n-1]
			last.instructions = append(last.instructions, st.instructions...)
			last.nodes = append(last.nodes, st.nodes...)
			last.edges = append(last.edges, st.edges...)
			last.nodeKeys = append(last.nodeKeys, st.nodeKeys...)
			last.edgeKeys = appendNew(last.edgeKeys, st.edgeKeys...)
			continue
		}
		out = append(out, st)
	}
	return out
}

func appendNew(dst []string, keys ...string) []string {
	for _, k := range keys {
		dup := false
		for _, d := range dst {
			dup = dup || d == k
		}
		if !dup {
			dst = append(dst, k)
		}
	}
	return dst
}

// newKey makes a key as the server does for what its assistant creates: 64 hex digits.
func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
