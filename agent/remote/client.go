package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// Options configure a Client. Zero durations get their defaults.
type Options struct {
	// BaseURL is the server's REST base (http:// or https://).
	BaseURL string
	// WSURL overrides where the WebSocket is (--ws-url, NODIUS_AI_WS_URL, ws_url);
	// empty, it is derived from BaseURL by nodiusapi.Address.
	WSURL string
	// Token is the user's JWT: sent once in the WebSocket's authenticate frame and
	// as a bearer token on HTTP calls to BaseURL. It is never logged, printed or stored.
	Token string
	// HTTPClient for the REST endpoints and the WebSocket handshake (nil: a default
	// client with a 30 s timeout for REST).
	HTTPClient *http.Client

	// DialTimeout bounds connecting (default 15 s); AuthTimeout the authResult.
	DialTimeout time.Duration
	AuthTimeout time.Duration
	// PingInterval is how often the connection is checked with a ping (default 15 s);
	// a pong must come back within PingTimeout (default 10 s) or the run ends.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// StallTimeout ends a run that receives no ai:* message for that long while the
	// connection stays up (default 3 min: the model may think quietly for a while).
	StallTimeout time.Duration
	// MaxFrameBytes bounds one frame from the server (default nodiusapi.MaxFrameBytes).
	MaxFrameBytes int
	// MaxHTTPBytes bounds one answer of the HTTP API (a long thread's history may
	// be large; default 32 MiB).
	MaxHTTPBytes int

	Logger *slog.Logger
}

// Client speaks to one Nodius server. It is safe for concurrent use; each run
// opens its own WebSocket connection, so that closing it stops that run only.
type Client struct {
	opt Options
	api *nodiusapi.Client
	log *slog.Logger
}

// ParseServerURL checks a server URL (http:// or https://, a host, no query) and
// returns it without a trailing slash.
func ParseServerURL(raw string) (*url.URL, error) {
	u, err := nodiusapi.ParseServerURL(raw)
	if err != nil {
		return nil, &fault.Error{Code: fault.Config, Message: strings.Replace(err.Error(), "use e.g. server:", "use e.g. --agent server:", 1)}
	}
	return u, nil
}

// New returns a Client for the server at opt.BaseURL.
func New(opt Options) (*Client, error) {
	if _, err := ParseServerURL(opt.BaseURL); err != nil {
		return nil, err
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 15 * time.Second
	}
	if opt.PingInterval <= 0 {
		opt.PingInterval = 15 * time.Second
	}
	if opt.PingTimeout <= 0 {
		opt.PingTimeout = 10 * time.Second
	}
	if opt.StallTimeout <= 0 {
		opt.StallTimeout = 3 * time.Minute
	}
	if opt.MaxFrameBytes <= 0 {
		opt.MaxFrameBytes = nodiusapi.MaxFrameBytes
	}
	if opt.MaxHTTPBytes <= 0 {
		opt.MaxHTTPBytes = 32 << 20
	}
	api, err := nodiusapi.New(nodiusapi.Options{BaseURL: opt.BaseURL, Token: opt.Token, WSURL: opt.WSURL,
		HTTPClient: opt.HTTPClient, MaxBytes: opt.MaxHTTPBytes})
	if err != nil {
		return nil, err
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{opt: opt, api: api, log: log}, nil
}

// API is the client of the server's HTTP API the runs route through.
func (c *Client) API() *nodiusapi.Client { return c.api }

// Server is the server's URL without credentials (masked): what is shown, logged
// and stored.
func (c *Client) Server() string { return c.api.Server() }

// newID numbers a request. The real server keeps its running sessions in one map
// keyed by _id for every connection of every user, so a small counter (the web
// client's 1, 2, 3…) would let a disconnect abort another user's run of the same
// number: the id is drawn at random in [2^40, 2^52), exact in a JavaScript number.
func (c *Client) newID() int64 { return 1<<40 + rand.Int64N(1<<52-1<<40) }

// handler receives the run's messages in order. It returns done when the run is
// over (ai:complete, ai:error, or the handler's own decision to stop).
type handler func(Inbound) (done bool, err error)

// errDropped marks a connection lost in the middle of a run.
var errDropped = errors.New("connection to the server lost")

// stream runs one request on its own authenticated connection: it sends req and
// hands every message numbered id to h until h says done. Cancelling ctx closes the
// connection: the server's disconnect cleanup then aborts the sessions of this
// socket only (ai:interrupt would abort every session on the server, other users'
// too: docs/protocol.md, "the server's assistant").
func (c *Client) stream(ctx context.Context, graphKey string, id int64, req any, h handler) error {
	return c.streamAuthed(ctx, graphKey, id, func(nodiusapi.AuthResult) (any, error) { return req, nil }, h)
}

// streamAuthed is stream with the request built once the connection is
// authenticated, from what the server said of the user (authResult): an approved
// create_graph first creates the graph in the user's workspace, and the decision
// sent says what became of it. An error from build ends the run before anything is
// sent.
func (c *Client) streamAuthed(ctx context.Context, graphKey string, id int64, build func(nodiusapi.AuthResult) (any, error), h handler) error {
	conn, auth, err := c.dial(ctx, graphKey)
	if err != nil {
		return err
	}
	connCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer conn.CloseNow()

	req, err := build(auth)
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return &fault.Error{Code: fault.Internal, Message: "could not encode the request: " + err.Error(), Err: err}
	}
	if err := c.write(connCtx, conn, body); err != nil {
		return c.lost(err)
	}

	frames := make(chan frame, 64)
	go func() {
		defer close(frames)
		for {
			typ, data, err := conn.Read(connCtx)
			if err != nil {
				select {
				case frames <- frame{err: err}:
				case <-connCtx.Done():
				}
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			select {
			case frames <- frame{data: data}:
			case <-connCtx.Done():
				return
			}
		}
	}()
	pingFail := make(chan error, 1)
	go func() {
		t := time.NewTicker(c.opt.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-connCtx.Done():
				return
			case <-t.C:
				pctx, cancel := context.WithTimeout(connCtx, c.opt.PingTimeout)
				err := conn.Ping(pctx)
				cancel()
				if err != nil && connCtx.Err() == nil {
					pingFail <- err
					return
				}
			}
		}
	}()

	stopRun := func() error {
		conn.Close(websocket.StatusNormalClosure, "stopped by the user")
		c.log.Debug("closed the socket to stop the run", "id", id)
		return ctx.Err()
	}
	stall := time.NewTimer(c.opt.StallTimeout)
	defer stall.Stop()
	for {
		select {
		case <-ctx.Done():
			return stopRun()
		case err := <-pingFail:
			c.log.Warn("server did not answer a ping", "error", err.Error())
			return &fault.Error{Code: fault.Network, Retryable: true, Err: errDropped,
				Message: "the server stopped answering (no pong to a ping): what arrived is kept — check the network and ask again"}
		case <-stall.C:
			conn.Close(websocket.StatusNormalClosure, "stalled")
			return &fault.Error{Code: fault.Timeout, Retryable: true, Message: fmt.Sprintf(
				"the server's assistant sent nothing for %s: what arrived is kept — ask again", roundForPeople(c.opt.StallTimeout))}
		case f, open := <-frames:
			if ctx.Err() != nil {
				return stopRun()
			}
			if !open {
				return c.lost(errDropped)
			}
			if f.err != nil {
				if tooBig(f.err) {
					return fault.Limit("a message from the server", "max_stream_line_bytes", c.opt.MaxFrameBytes)
				}
				return c.lost(f.err)
			}
			in, ok, err := ParseInbound(f.data)
			if err != nil {
				conn.Close(websocket.StatusProtocolError, "malformed message")
				return &fault.Error{Code: fault.Internal, Message: err.Error() + " — the server may run another version of Nodius", Err: err}
			}
			if !ok {
				continue
			}
			// Only this run's messages; an ai:error that names no run (a request the
			// server could not read answers _id 0 or the id it was sent) is this run's
			// too, the connection being ours alone.
			if in.HasID && in.ID != id && !(in.Type == TypeError && in.ID == 0) || !in.HasID && in.Type != TypeError {
				continue
			}
			stall.Reset(c.opt.StallTimeout) // no stale tick survives a Reset (Go 1.23 timers)
			done, err := h(in)
			if ctx.Err() != nil {
				return stopRun()
			}
			if err != nil || done {
				conn.Close(websocket.StatusNormalClosure, "")
				return err
			}
		}
	}
}

// tooBig reports whether a read failed on the frame size bound.
func tooBig(err error) bool {
	return websocket.CloseStatus(err) == websocket.StatusMessageTooBig || strings.Contains(err.Error(), "read limited at")
}

// roundForPeople rounds d to the second, or to the millisecond under a second, so
// that a short timeout never reads "0s".
func roundForPeople(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// frame is one read from the connection.
type frame struct {
	data []byte
	err  error
}

func (c *Client) write(ctx context.Context, conn *websocket.Conn, body []byte) error {
	wctx, cancel := context.WithTimeout(ctx, c.opt.PingTimeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, body)
}

// lost is the error of a connection that went away mid-run.
func (c *Client) lost(err error) error {
	c.log.Warn("connection to the server lost", "error", err.Error())
	return &fault.Error{Code: fault.Network, Retryable: true, Err: errors.Join(errDropped, err),
		Message: "the connection to the server was lost mid-run (the server stops the run when its client goes): what arrived is kept, marked interrupted — ask again"}
}

// dial opens the run's WebSocket connection where the server routes the graph
// (POST /api/sync, as the web client asks before it opens the assistant: in a
// cluster only the graph's manager reads it live) and authenticates it. Home mode
// (graph "home", or none) is routed as no graph.
func (c *Client) dial(ctx context.Context, graphKey string) (*websocket.Conn, nodiusapi.AuthResult, error) {
	instance := nodiusapi.HomeInstance
	if graphKey != "" && !tools.IsHome(graphKey) {
		instance = nodiusapi.GraphInstance(graphKey)
	}
	addr, err := c.api.SocketAddress(ctx, instance)
	if err != nil {
		return nil, nodiusapi.AuthResult{}, err
	}
	conn, auth, err := nodiusapi.DialSocket(ctx, addr, nodiusapi.SocketOptions{Token: c.opt.Token, HTTPClient: c.api.HTTPClient(), Server: c.Server(),
		DialTimeout: c.opt.DialTimeout, AuthTimeout: c.opt.AuthTimeout})
	if err != nil {
		return nil, auth, err
	}
	conn.SetReadLimit(int64(c.opt.MaxFrameBytes))
	return conn, auth, nil
}

// serverError maps an ai:error to the error classes of local runs: the same codes,
// the same exit codes.
func serverError(in Inbound) *fault.Error {
	code := fault.Code(in.Code)
	switch code {
	case fault.RateLimit, fault.ServerError, fault.Auth, fault.Timeout, fault.Network,
		fault.ContentFilter, fault.ContextLength, fault.BudgetExceeded, fault.InvalidRequest, fault.Internal:
	default: // none, or one this client does not know
		code = fault.Internal
	}
	msg := strings.TrimSpace(in.Error)
	if msg == "" {
		msg = "an error with no message"
	}
	hint := ""
	if strings.HasPrefix(msg, "No pending action") {
		// The server's answer to a resume with nothing waiting (05b): a decision
		// that cannot be taken, exit 2 as for the in-process agent, not a failure.
		code = fault.Decision
		hint = " — nothing waits for a decision in this thread (it was decided already, here or in the web client)"
	}
	if msg == "Graph not found: home" {
		// 04m/04n: the real server (378c336) looks the graph "home" up when its
		// assistant stops at a proposal in home mode over the WebSocket, and fails.
		hint = " — the Nodius server could not hold its proposal of a new graph (a server bug in home mode over the WebSocket): create the graph in the Nodius web client, then ask about it with --graph KEY"
	}
	switch code {
	case fault.Auth:
		// The socket is already authenticated: an ai:error auth_error is the model
		// provider refusing the server's own API key (errorClassifier.ts), not the
		// user's token.
		hint = " — the server's key for its model was refused: tell the server's administrator (your token is fine)"
	case fault.RateLimit, fault.ServerError, fault.Timeout, fault.Network:
		hint = " — try again in a moment"
	case fault.ContextLength:
		hint = " — start a new thread"
	}
	if in.Details != "" {
		msg += " (" + in.Details + ")"
	}
	return &fault.Error{Code: code, Retryable: in.Retryable, Message: "the server's assistant: " + termtext.Strip(msg) + hint}
}
