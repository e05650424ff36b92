package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// follower keeps one graph's live copy current for the life of the Source, as the
// web client keeps its own: it loads the graph once (the saved state, one editing
// socket registered on every sheet, the messages since the save replayed) and
// then applies what the socket receives — other clients' broadcasts and the
// acknowledgements of this client's own edits, in the order the server sent them.
// Every read is answered from the copy.
//
// The server broadcasts an edit to the graph's other *users* only (an instruction
// message to the first socket of each), so an edit by the same user elsewhere (a
// web editor with the same token), or one that went to that user's other socket,
// never arrives. It does announce every edit to every registration first
// (saveStatus with hasUnsavedChanges, one per sheet this socket is registered on),
// in the same burst as the edit's broadcast: an announcement not followed by the
// edit is a gap. Before each read the socket is pinged: the server answers only a
// socket still registered, and once the pong is read every earlier frame has
// been. (One exception makes a needless reload, never a missed edit: a
// batchDeleteElements that deletes nodes awaits a database query between its
// announcement and its broadcast, so a ping or another edit can come in between;
// the reload then reads the deletion, already in the sheet's history.) A gap, a
// closed socket, a broadcast the copy cannot apply or a sheet
// created, renamed or deleted makes the next read load the graph again, once, and
// the user is told the first time.
type follower struct {
	s   *Source
	key string

	// loadMu is held by whoever loads the graph or sends edits on its socket: one
	// load at a time, and reads wait for an apply in progress to finish.
	loadMu sync.Mutex

	mu       sync.Mutex // guards what follows, and every link's fields
	graph    *nodiusgraph.Graph
	lk       *link // nil: not loaded, or only the saved state could be had
	loaded   bool
	stale    string // why the copy must be loaded again ("" when current)
	closed   bool
	version  uint64 // changes with every change of the copy
	configs  []datasource.NodeConfig
	defaults map[string]typeDefaults
	view     datasource.Source // memgraph of version viewVer
	viewVer  uint64
	idle     *time.Timer // releases the socket after Source.idle without a read
}

// link is one editing socket of a follower and what it received.
type link struct {
	conn    *nodiusapi.Editor
	regSeq  map[string]uint64 // each sheet's registration's place among the frames
	lastReg uint64            // the last registration's place: later frames apply whole
	regs    int               // registrations acknowledged (saveStatus copies per edit)
	pending int               // saveStatus announcements not yet followed by their edit
	gap     string            // why what arrived cannot be trusted to be complete
	queue   []nodiusapi.Frame // editing messages received, not yet applied
	queued  int               // their bytes, bounded by the source's maxBytes
}

// onFrame records one frame of lk's socket (on its reading goroutine).
func (f *follower) onFrame(lk *link, fr nodiusapi.Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	missed := func() {
		if lk.pending > 0 && lk.gap == "" {
			lk.gap = notReceived
		}
	}
	switch fr.Type {
	case "applyInstructionToGraph", "batchCreateElements", "batchDeleteElements":
		if fr.Ack && !fr.OK {
			missed() // a refusal is never announced
			return
		}
		lk.pending = 0
		if !fr.Ack {
			f.s.othersEdited(f.key) // a broadcast: another user's edit (session.go)
		}
		if lk.gap != "" {
			return // the copy is loaded again at the next read: nothing to keep
		}
		// A server that sends more than one answer may hold between two reads
		// (max_snapshot_bytes) is not kept in memory: the next read loads again.
		if lk.queued += len(fr.Raw); lk.queued > f.s.api.MaxBytes() {
			lk.queue, lk.queued = nil, 0
			lk.gap = "more edits arrived between two reads than max_snapshot_bytes holds"
			return
		}
		lk.queue = append(lk.queue, fr)
		return
	case "registerUserOnGraph":
		missed()
		if fr.OK {
			lk.regs++
		}
		return
	case "saveStatus":
		var st struct {
			Unsaved bool `json:"hasUnsavedChanges"`
		}
		_ = json.Unmarshal(fr.Raw, &st)
		if !st.Unsaved {
			missed()
			return
		}
		if lk.pending >= max(lk.regs, 1) {
			missed() // a new announcement: the previous one's edit never came
			lk.pending = 0
		}
		lk.pending++
		return
	case "createSheet", "renameSheet", "deleteSheet", "disconnedUserOnGraph":
		// The server sends a sheet's creation, renaming or deletion to every
		// registration on every graph it holds, without the graph's key: one of
		// another graph reloads this one too (needless, but rare and safe).
		if lk.gap == "" {
			lk.gap = "the graph's sheets or its editors changed (" + fr.Type + ")"
		}
		return
	}
	missed()
}

// follow returns the follower of a graph, made on first use.
func (s *Source) follow(graphKey string) (*follower, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &fault.Error{Code: fault.Internal, Message: "the server: source was used after it was closed"}
	}
	f := s.follows[graphKey]
	if f == nil {
		f = &follower{s: s, key: graphKey}
		s.follows[graphKey] = f
	}
	return f, nil
}

// ready makes the copy current: loaded, its socket still registered, nothing
// missed, what arrived applied. A copy that cannot be trusted is loaded again, at
// most once per call. socket asks for a registered socket (to send edits on).
// The caller holds f.loadMu.
func (f *follower) ready(ctx context.Context, socket bool) error {
	for fresh := false; ; fresh = true {
		f.mu.Lock()
		lk, loaded, stale := f.lk, f.loaded, f.stale
		f.mu.Unlock()
		why, err := f.check(ctx, lk, loaded, stale, fresh, socket)
		if err != nil {
			return err
		}
		if why == "" {
			f.mu.Lock()
			err := f.drain(lk)
			if err != nil {
				f.stale = err.Error() // served as it is now; the next read loads again
			}
			f.mu.Unlock()
			if err == nil || fresh {
				return nil
			}
			why = err.Error()
		}
		if loaded && lk != nil {
			f.s.note("reload", "", fmt.Sprintf("the live copy of graph %q was read again from the Nodius server: %s (later reloads are not reported)", f.key, why))
		}
		if err := f.load(ctx, socket); err != nil {
			return err
		}
	}
}

// check says why the copy must be loaded again, "" when it can be served. A copy
// just loaded is served as it is.
func (f *follower) check(ctx context.Context, lk *link, loaded bool, stale string, fresh, socket bool) (string, error) {
	switch {
	case fresh:
		return "", nil
	case !loaded:
		return "first read", nil
	case lk == nil:
		// Only the saved state could be had: nothing keeps it current, so every
		// read asks again.
		return "saved state only", nil
	case stale != "":
		return stale, nil
	}
	if err := lk.conn.Ping(ctx); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "the editing socket closed or stopped answering", nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if lk.pending > 0 && lk.gap == "" {
		// Everything sent before the pong has been read: the edit announced
		// before it is not coming.
		lk.gap = notReceived
	}
	return lk.gap, nil
}

const notReceived = "an edit was announced but not received (made by the same user elsewhere, or sent to that user's other editor)"

// close closes the follower's socket (see nodiusapi.Editor.Close for why it sends
// no disconnedUserOnGraph).
func (f *follower) close() {
	f.mu.Lock()
	lk := f.lk
	f.lk, f.closed = nil, true
	if f.idle != nil {
		f.idle.Stop()
	}
	f.mu.Unlock()
	if lk != nil {
		_ = lk.conn.Close()
	}
}

// load reads the graph again: the saved state, a new socket registered on every
// sheet from its save time, the messages since replayed. A socket that cannot be
// opened or registered leaves the saved state, said once, unless the token is
// refused (an auth error) or socket is true (applying needs the socket).
func (f *follower) load(ctx context.Context, socket bool) error {
	s := f.s
	f.mu.Lock()
	old := f.lk
	f.lk = nil
	f.mu.Unlock()
	if old != nil {
		_ = old.conn.Close()
	}
	g, err := s.saved(ctx, f.key)
	if err != nil {
		return err
	}
	lk := &link{regSeq: map[string]uint64{}}
	refused := false // the token itself was refused: an error, not a notice
	var replayed, failed int
	// Routed as the web client routes: /api/sync names (and makes) the instance
	// that manages the graph. An instance that says it does not manage it (the
	// claim lapsed, a cluster moved it) is asked about again, once.
	for try := 0; ; try++ {
		var conn *nodiusapi.Editor
		conn, err = s.dial(ctx, f.key, nodiusapi.EditorOptions{
			AckTimeout: s.ackWait,
			OnFrame:    func(fr nodiusapi.Frame) { f.onFrame(lk, fr) },
		})
		if err != nil {
			var fe *fault.Error
			refused = errors.As(err, &fe) && fe.Code == fault.Auth
			break
		}
		lk.conn = conn
		replayed, failed, err = s.register(ctx, g, lk)
		if err != nil {
			_ = conn.Close()
			if try == 0 && notManaged(err) && ctx.Err() == nil {
				*lk = link{regSeq: map[string]uint64{}}
				continue
			}
		}
		break
	}
	if err != nil && (socket || refused || ctx.Err() != nil) {
		return err
	}
	// The node types, with the graph: a new load reads them again.
	configs, defaults, terr := s.nodeConfigs(ctx, workspaceOf(g))
	if terr != nil {
		var fe *fault.Error
		if errors.As(terr, &fe) && fe.Code == fault.Auth {
			if lk.conn != nil && err == nil {
				_ = lk.conn.Close()
			}
			return terr
		}
		s.note("types", "node types unavailable", "the Nodius server's node types could not be read ("+terr.Error()+"): nodes are shown without their type's description")
		configs, defaults = []datasource.NodeConfig{}, map[string]typeDefaults{}
	}
	f.mu.Lock()
	f.graph, f.loaded, f.stale = g, true, ""
	f.configs, f.defaults = configs, defaults
	f.version++
	closed := f.closed
	if err == nil && !closed {
		f.lk = lk
	}
	f.mu.Unlock()
	if err == nil && closed {
		_ = lk.conn.Close()
	}
	switch {
	case err != nil:
		s.note("saved", "saved state only", fmt.Sprintf("only the state the Nodius server last saved could be read for graph %q (it saves about every 30 s, so recent edits may be missing): %s", f.key, err.Error()))
	case failed > 0:
		s.note("replay", fmt.Sprintf("live, %d editing messages not replayed", failed), fmt.Sprintf(
			"%d of the %d editing messages made since graph %q was last saved could not be replayed: what is shown may differ from the editors' graph", failed, failed+replayed, f.key))
	default:
		s.note("live", fmt.Sprintf("live: saved state + %d editing messages", replayed), "")
	}
	return nil
}

// register registers lk's socket on every sheet of g from its save time and, once
// all are registered, replays the messages each answered: a registration refused
// part-way leaves the saved state untouched, which is what the note then says.
// The server files an instruction message under each sheet it touches and a batch
// under the sender's sheet, so each is replayed once.
func (s *Source) register(ctx context.Context, g *nodiusgraph.Graph, lk *link) (replayed, failed int, err error) {
	from := g.LastUpdated()
	ids := g.SheetIDs()
	missing := make([][]json.RawMessage, len(ids))
	regSeq := map[string]uint64{}
	for i, id := range ids {
		reg, err := lk.conn.Register(ctx, g.Key(), id, s.name, from)
		if err != nil {
			var re *nodiusapi.RefusedError
			if errors.As(err, &re) {
				code := fault.ServerError
				if strings.Contains(re.Message, "Access denied") {
					code = fault.Auth
				}
				return 0, 0, &fault.Error{Code: code, Err: err, Message: fmt.Sprintf(
					"the Nodius server would not register this client as an editor of graph %q (sheet %s): %s", g.Key(), id, re.Message)}
			}
			return 0, 0, err
		}
		missing[i] = reg.Missing
		regSeq[id] = reg.Seq
	}
	for i, id := range ids {
		for _, m := range missing[i] {
			if err := g.Replay(m, id); err != nil {
				failed++
			} else {
				replayed++
			}
		}
	}
	// Broadcasts that came during the registrations are applied by drain, once
	// the copy is adopted; it needs to know where each registration was.
	lk.regSeq = regSeq
	for _, seq := range regSeq {
		lk.lastReg = max(lk.lastReg, seq)
	}
	return replayed, failed, nil
}

// drain applies the editing messages lk received to the copy, in the order
// received. A message that reached the socket before the registration of a sheet
// it touches is in that registration's answer: only its parts for sheets
// registered before it are applied, and a batch counted twice that way (refused
// by the copy: its keys exist, or are gone) changes nothing. A message after the
// registrations that the copy cannot apply means the copy differs from the
// server's graph: the error says so and the caller loads again. f.mu is held.
func (f *follower) drain(lk *link) error {
	if lk == nil {
		return nil // only the saved state: nothing arrives
	}
	queue := lk.queue
	lk.queue, lk.queued = nil, 0
	for _, fr := range queue {
		var m nodiusgraph.Message
		if err := json.Unmarshal(fr.Raw, &m); err != nil {
			return fmt.Errorf("an editing message from the server is not JSON: %w", err)
		}
		late := fr.Seq > lk.lastReg
		before := func(sheet string) bool { seq, ok := lk.regSeq[sheet]; return late || (ok && seq < fr.Seq) }
		var err error
		switch m.Type {
		case "applyInstructionToGraph":
			var mine []nodiusgraph.GraphInstruction
			for _, in := range m.Instructions {
				if before(in.SheetID) {
					mine = append(mine, in)
				}
			}
			if len(mine) > 0 {
				err = f.graph.ApplyInstructions(mine)
			}
		case "batchCreateElements":
			if before(m.SheetID) {
				err = f.graph.BatchCreate(m.SheetID, orEmpty(m.Nodes), orEmpty(m.Edges))
			}
		case "batchDeleteElements":
			if before(m.SheetID) {
				err = f.graph.BatchDelete(m.SheetID, m.NodeKeys, m.EdgeKeys)
			}
		}
		f.version++
		if err != nil && late {
			// What follows is dropped: the copy is loaded again.
			return fmt.Errorf("a change the server sent (%s) does not apply to the copy: %v", m.Type, err)
		}
	}
	return nil
}

func orEmpty(v []map[string]any) []map[string]any {
	if v == nil {
		return []map[string]any{}
	}
	return v
}

// begin makes the copy current and holds it for the caller (an apply, which sends
// on the socket): end releases it. Every read, failed or not, arms the idle
// countdown once it no longer holds loadMu: an idle release that fired during the
// read found loadMu held and did nothing, so the read must arm it again, and
// arming while still holding loadMu could let the countdown fire into the same
// held lock (with a short IdleRelease) and never be armed again.
func (f *follower) begin(ctx context.Context, socket bool) (end func(), err error) {
	f.loadMu.Lock()
	if err := f.ready(ctx, socket); err != nil {
		f.loadMu.Unlock()
		f.arm() // a socket may still be open (a ping cut short by ctx)
		return nil, err
	}
	return func() {
		f.loadMu.Unlock()
		f.arm()
	}, nil
}

// arm (re)starts the idle countdown after a read.
func (f *follower) arm() {
	if f.s.idle < 0 || f.s.held() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if f.idle == nil {
		f.idle = time.AfterFunc(f.s.idle, f.release)
		return
	}
	f.idle.Reset(f.s.idle)
}

// release closes the socket of a graph nobody read for a while; the next read
// loads it again (without a notice: nothing was missed). A read in progress
// keeps it, and arms the countdown again when it ends.
func (f *follower) release() {
	if !f.loadMu.TryLock() {
		return
	}
	defer f.loadMu.Unlock()
	f.mu.Lock()
	lk := f.lk
	f.lk, f.loaded, f.stale = nil, false, ""
	// The next read loads again, and a new load makes a new view: the index of
	// this one would only hold memory until then. (The graph stays: a read that
	// made the copy current just before may still convert it.)
	f.view = nil
	f.mu.Unlock()
	if lk != nil {
		_ = lk.conn.Close()
	}
}

// current makes the copy current and returns what reads need of it.
func (f *follower) current(ctx context.Context) error {
	end, err := f.begin(ctx, false)
	if err != nil {
		return err
	}
	end()
	return nil
}

// snapshot converts the copy, with the node types of its workspace.
func (f *follower) snapshot() (datasource.Snapshot, uint64, error) {
	f.mu.Lock()
	snap, err := f.graph.Snapshot()
	configs, ver := f.configs, f.version
	f.mu.Unlock()
	if err != nil {
		return datasource.Snapshot{}, 0, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q has a node or edge this client cannot read: %v", f.key, err)}
	}
	snap.Configs = append([]datasource.NodeConfig{}, configs...)
	// A node's code is its type's (node.process of the node type): resolved here so
	// that retrieval, the read tools and the pictures find it. A node of a type
	// without code keeps what it carries itself (a built-in type's node).
	datasource.CodeFromTypes(snap.Nodes, snap.Configs)
	return snap, ver, nil
}

// viewOf returns a read-only source over the copy as it is, made once per
// version of the copy.
func (f *follower) viewOf() (datasource.Source, error) {
	f.mu.Lock()
	v, ok := f.view, f.view != nil && f.viewVer == f.version
	f.mu.Unlock()
	if ok {
		return v, nil
	}
	snap, ver, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	st, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		return nil, &fault.Error{Code: fault.ServerError, Err: err,
			Message: fmt.Sprintf("the Nodius server's graph %q is inconsistent: %v", f.key, err)}
	}
	f.mu.Lock()
	if ver >= f.viewVer {
		f.view, f.viewVer = st, ver
	}
	f.mu.Unlock()
	return st, nil
}
