package nodiusapi

// The server's editing protocol: the same authenticated WebSocket the web editor
// uses to register on a graph's sheets and send it changes (registerUserOnGraph,
// applyInstructionToGraph, batchCreateElements, batchDeleteElements, forceSave).
// Each request carries an _id and waits for its acknowledgement, the message
// echoed back with _response {status, message}; the server's refusals come back
// as *RefusedError with its sentence. Messages other clients make reach this one
// as broadcasts (without _id), handed to the OnBroadcast function.
//
// Register returns the messages as the server answers them; the caller replays them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/internal/fault"
)

// DefaultAckTimeout bounds the wait for one acknowledgement: the server answers at
// once, so a silent one means a lost connection or a message it dropped.
const DefaultAckTimeout = 15 * time.Second

// MaxInstructions is how many instructions the server takes in one
// applyInstructionToGraph: it closes the socket on more.
const MaxInstructions = 20

// RefusedError is the server's refusal of one editing request: Op is the message
// type, Message the server's sentence ("Node with id x not found").
type RefusedError struct {
	Op      string
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the Nodius server refused %s: %s", e.Op, e.Message)
}

// ErrClosed is wrapped by the error of a request on a socket the server closed
// (it closes an editing socket that sends before registering, or on a bad request).
var ErrClosed = errors.New("the editing socket was closed")

// EditorOptions of DialEditor.
type EditorOptions struct {
	// Options are the socket's: the token, the HTTP client, the server's name.
	Options SocketOptions
	// AckTimeout bounds each acknowledgement (default DefaultAckTimeout).
	AckTimeout time.Duration
	// OnBroadcast is called, on the reading goroutine, with each editing message
	// another client made (applyInstructionToGraph, batchCreateElements,
	// batchDeleteElements without _id). Nil ignores them.
	// seq is the frame's place in what the socket received: a broadcast with a seq
	// above a registration's Seq happened after that registration's answer.
	OnBroadcast func(msg json.RawMessage, seq uint64)
	// OnFrame, when set, is called on the reading goroutine with every frame but
	// the pong, in the order received, before the request it answers (if any)
	// returns: a follower of the graph sees its own acknowledged edits, the
	// others' broadcasts, the saveStatus announcements and the sheet messages in
	// the server's order.
	OnFrame func(Frame)
}

// Frame is one frame the socket received, as OnFrame sees it.
type Frame struct {
	// Seq is the frame's place in what the socket received (from 1).
	Seq uint64
	// Type is the frame's type, or for an acknowledgement the type of the request
	// it answers (registerUserOnGraph's answer carries none).
	Type string
	// Ack is true for the acknowledgement of a request of this socket; OK for a
	// positive one. An editing message's positive acknowledgement echoes what the
	// server applied (a batch deletion the edges it actually removed).
	Ack, OK bool
	// Raw is the frame as received.
	Raw json.RawMessage
}

// Editor is an authenticated editing socket.
type Editor struct {
	ws   *websocket.Conn
	opt  EditorOptions
	User AuthResult

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	ops     map[int]string // the type of each waiting request
	pings   []chan error   // waiting pings, oldest first (a pong names none)
	pingMu  sync.Mutex     // one ping at a time
	err     error          // set once the reader stops
	done    chan struct{}
	seq     uint64 // frames read, on the reading goroutine only
}

type reply struct {
	raw json.RawMessage
	seq uint64
	err error
}

// DialEditor connects to addr (where SocketAddress routed the graph) and
// authenticates.
func DialEditor(ctx context.Context, addr string, opt EditorOptions) (*Editor, error) {
	ws, user, err := DialSocket(ctx, addr, opt.Options)
	if err != nil {
		return nil, err
	}
	if opt.AckTimeout <= 0 {
		opt.AckTimeout = DefaultAckTimeout
	}
	c := &Editor{ws: ws, opt: opt, User: user, waiting: map[int]chan reply{}, ops: map[int]string{}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

// Close closes the socket, which ends its registrations. There is deliberately no
// disconnedUserOnGraph: the server removes the first registration of the *user* on
// each sheet, which may be the same person's web editor, not this socket.
func (c *Editor) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	return err
}

func (c *Editor) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.stop(err)
			return
		}
		c.seq++
		var head struct {
			Type     string          `json:"type"`
			ID       json.RawMessage `json:"_id"`
			Response *struct {
				Status  bool   `json:"status"`
				Message string `json:"message"`
			} `json:"_response"`
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &head) != nil {
			continue
		}
		var id int
		hasID := len(head.ID) > 0 && string(head.ID) != "null" && json.Unmarshal(head.ID, &id) == nil
		if head.Type == "__pong__" {
			c.pong(nil)
			continue
		}
		if c.opt.OnFrame != nil {
			f := Frame{Seq: c.seq, Type: head.Type, Raw: json.RawMessage(data)}
			if hasID && head.Response != nil {
				f.Ack, f.OK = true, head.Response.Status
				c.mu.Lock()
				if op, ok := c.ops[id]; ok {
					f.Type = op
				}
				c.mu.Unlock()
			}
			c.opt.OnFrame(f)
		}
		switch {
		case hasID && head.Response != nil:
			c.answer(id, reply{raw: data, seq: c.seq})
		case head.Error != "" && head.Type == "":
			// {"error":"Invalid JSON"} names no request: the server's answer to a
			// registration on an unknown graph or sheet. Requests are one at a time.
			c.failAll(&RefusedError{Op: "the request", Message: head.Error})
		case !hasID && c.opt.OnBroadcast != nil:
			switch head.Type {
			case "applyInstructionToGraph", "batchCreateElements", "batchDeleteElements":
				c.opt.OnBroadcast(json.RawMessage(data), c.seq)
			}
		}
	}
}

func (c *Editor) answer(id int, r reply) {
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	delete(c.ops, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

func (c *Editor) failAll(err error) {
	c.mu.Lock()
	for id, ch := range c.waiting {
		delete(c.waiting, id)
		delete(c.ops, id)
		ch <- reply{err: err}
	}
	c.mu.Unlock()
}

// pong answers the oldest waiting ping (err nil), or every one (the socket closed).
func (c *Editor) pong(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		for _, ch := range c.pings {
			ch <- err
		}
		c.pings = nil
		return
	}
	if len(c.pings) > 0 {
		c.pings[0] <- nil
		c.pings = c.pings[1:]
	}
}

func (c *Editor) stop(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	why := "the connection was lost"
	if s := websocket.CloseStatus(err); s != -1 {
		why = fmt.Sprintf("the server closed it (code %d)", s)
	}
	ferr := &fault.Error{Code: fault.Network, Err: fmt.Errorf("%w: %w", ErrClosed, err),
		Message: "the editing socket to the Nodius server closed before the answer: " + why}
	c.failAll(ferr)
	c.pong(ferr)
}

// Err is nil while the socket is open, and why it closed once it is.
func (c *Editor) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Ping sends __ping__ and waits for the pong. The server answers it only on a
// socket registered on one of the graph's sheets (it closes any other), and
// everything it sent before the pong has been read (and handed to OnFrame) when
// Ping returns: a follower pings to know its registration holds and that no
// announced edit is still on its way.
func (c *Editor) Ping(ctx context.Context) error {
	c.pingMu.Lock()
	defer c.pingMu.Unlock()
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return &fault.Error{Code: fault.Network, Err: ErrClosed, Message: "the editing socket to the Nodius server is closed"}
	}
	c.pings = append(c.pings, ch)
	c.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, c.opt.AckTimeout)
	defer cancel()
	forget := func() {
		c.mu.Lock()
		c.pings = slices.DeleteFunc(c.pings, func(x chan error) bool { return x == ch })
		c.mu.Unlock()
	}
	if err := c.ws.Write(wctx, websocket.MessageText, []byte(`{"type":"__ping__"}`)); err != nil {
		forget()
		return &fault.Error{Code: fault.Network, Err: err, Message: "could not ping the Nodius server's editing socket"}
	}
	select {
	case err := <-ch:
		return err
	case <-wctx.Done():
		forget()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &fault.Error{Code: fault.Timeout, Message: fmt.Sprintf("the Nodius server did not answer a ping within %s", c.opt.AckTimeout)}
	}
}

// request sends msg with a fresh _id and returns the acknowledgement. A refusal is
// a *RefusedError; a silent server is a fault.Timeout error saying the request may
// or may not have been applied.
func (c *Editor) request(ctx context.Context, msg map[string]any) (json.RawMessage, uint64, error) {
	op, _ := msg["type"].(string)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, 0, &fault.Error{Code: fault.Network, Err: ErrClosed, Message: "the editing socket to the Nodius server is closed"}
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	c.ops[id] = op
	c.mu.Unlock()
	msg["_id"] = id
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, 0, fmt.Errorf("encode %s: %w", op, err)
	}
	wctx, cancel := context.WithTimeout(ctx, c.opt.AckTimeout)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, body); err != nil {
		c.forget(id)
		return nil, 0, &fault.Error{Code: fault.Network, Err: err, Message: "could not send " + op + " to the Nodius server's editing socket"}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			var re *RefusedError
			if errors.As(r.err, &re) && re.Op == "the request" {
				return nil, 0, &RefusedError{Op: op, Message: re.Message}
			}
			return nil, 0, r.err
		}
		var ack struct {
			Response struct {
				Status  bool   `json:"status"`
				Message string `json:"message"`
			} `json:"_response"`
		}
		_ = json.Unmarshal(r.raw, &ack)
		if !ack.Response.Status {
			msg := ack.Response.Message
			if msg == "" {
				msg = "no reason given"
			}
			return r.raw, r.seq, &RefusedError{Op: op, Message: msg}
		}
		return r.raw, r.seq, nil
	case <-wctx.Done():
		c.forget(id)
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, &fault.Error{Code: fault.Timeout, Retryable: false,
			Message: fmt.Sprintf("the Nodius server did not acknowledge %s within %s: it may or may not have been applied — look at the graph", op, c.opt.AckTimeout)}
	}
}

func (c *Editor) forget(id int) {
	c.mu.Lock()
	delete(c.waiting, id)
	delete(c.ops, id)
	c.mu.Unlock()
}

// Register registers this socket as an editor of one sheet of a graph and returns
// the editing messages the sheet received after fromTimestamp (ms), oldest first.
// name is what other editors see.
func (c *Editor) Register(ctx context.Context, graphKey, sheetID, name string, fromTimestamp int64) (Registration, error) {
	raw, seq, err := c.request(ctx, map[string]any{"type": "registerUserOnGraph", "graphKey": graphKey, "sheetId": sheetID,
		"name": name, "fromTimestamp": fromTimestamp})
	if err != nil {
		return Registration{}, err
	}
	var ans struct {
		Missing []json.RawMessage `json:"missingMessages"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Registration{}, &fault.Error{Code: fault.ServerError, Err: err, Message: "the Nodius server's answer to registerUserOnGraph is malformed"}
	}
	return Registration{Missing: ans.Missing, Seq: seq}, nil
}

// Registration is the answer to registerUserOnGraph.
type Registration struct {
	// Missing are the sheet's editing messages after fromTimestamp, oldest first.
	Missing []json.RawMessage
	// Seq places the answer among the frames received (see Options.OnBroadcast).
	Seq uint64
}

// ApplyInstructions sends one applyInstructionToGraph (at most MaxInstructions
// instructions, each {i, sheetId, nodeId|edgeId, ...}). The server applies all or
// none of one message.
func (c *Editor) ApplyInstructions(ctx context.Context, instructions []json.RawMessage) error {
	if len(instructions) > MaxInstructions {
		return fmt.Errorf("%d instructions in one message: the server takes at most %d", len(instructions), MaxInstructions)
	}
	_, _, err := c.request(ctx, map[string]any{"type": "applyInstructionToGraph", "instructions": nonNil(instructions)})
	return err
}

// BatchCreate sends batchCreateElements: nodes and edges (JSON objects carrying
// graphKey and sheet) added to one sheet, all or none.
func (c *Editor) BatchCreate(ctx context.Context, sheetID string, nodes, edges []json.RawMessage) error {
	_, _, err := c.request(ctx, map[string]any{"type": "batchCreateElements", "sheetId": sheetID, "nodes": nonNil(nodes), "edges": nonNil(edges)})
	return err
}

// BatchDelete sends batchDeleteElements: nodes and edges of one sheet removed, all
// or none. The server does not remove a node's edges: name them.
func (c *Editor) BatchDelete(ctx context.Context, sheetID string, nodeKeys, edgeKeys []string) error {
	if nodeKeys == nil {
		nodeKeys = []string{}
	}
	if edgeKeys == nil {
		edgeKeys = []string{}
	}
	_, _, err := c.request(ctx, map[string]any{"type": "batchDeleteElements", "sheetId": sheetID, "nodeKeys": nodeKeys, "edgeKeys": edgeKeys})
	return err
}

func nonNil(v []json.RawMessage) []json.RawMessage {
	if v == nil {
		return []json.RawMessage{}
	}
	return v
}

// ForceSave asks the server to save the graph now (forceSave {_id, graphKey}):
// it writes the graph from its memory to the database, tells every editor
// (saveStatus, hasUnsavedChanges false), then acknowledges. Without it an edit
// reaches the database with the next autosave, up to 30 s later (or never, when
// the server stops meanwhile). The server answers only a socket registered on the
// graph (it closes any other).
func (c *Editor) ForceSave(ctx context.Context, graphKey string) error {
	_, _, err := c.request(ctx, map[string]any{"type": "forceSave", "graphKey": graphKey})
	return err
}
