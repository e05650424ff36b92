package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nodius/nodius-ai/internal/fault"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/agent/convo"
)

// Options configure a Client. Zero durations get their defaults.
type Options struct {
	// BaseURL is the server's REST base (http:// or https://); the WebSocket is
	// /ws on the same host and port, ws:// or wss:// to match.
	BaseURL string
	// Token is the user's JWT: sent in every ai:* message and as a bearer token on
	// HTTP calls. It is never logged, printed or stored.
	Token string
	// HTTPClient for the REST endpoints and the WebSocket handshake (nil: a default
	// client with a 30 s timeout for REST).
	HTTPClient *http.Client

	// DialTimeout bounds connecting (default 15 s).
	DialTimeout time.Duration
	// PingInterval is how often the connection is checked with a ping (default 15 s);
	// a pong must come back within PingTimeout (default 10 s) or the run ends.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// StallTimeout ends a run that receives no ai:* message for that long while the
	// connection stays up (default 3 min: the model may think quietly for a while).
	StallTimeout time.Duration
	// InterruptGrace is how long, after sending ai:interrupt, the run waits for the
	// server to stop before closing the connection (default 1 s).
	InterruptGrace time.Duration

	Logger *slog.Logger
}

// Client speaks to one Nodius server. It is safe for concurrent use; each run
// opens its own WebSocket connection, as the web client does.
type Client struct {
	opt    Options
	base   *url.URL
	wsURL  string
	log    *slog.Logger
	nextID atomic.Int64
}

// ParseServerURL checks a server URL (http:// or https://, a host, no query) and
// returns it without a trailing slash.
func ParseServerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
			"the server URL %q is not an http:// or https:// URL — use e.g. --agent server:https://nodius.example.com", Redact(raw))}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
			"the server URL %q must not have a query or a fragment", Redact(raw))}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Redact masks a URL's credentials (fault.MaskCredentials): they never leave in
// messages, logs or the thread store.
func Redact(raw string) string { return fault.MaskCredentials(raw) }

// WebSocketURL derives the WebSocket address from the REST base: same host and
// port, ws:// for http:// and wss:// for https://, path /ws, where the Nodius server
// listens.
func WebSocketURL(base *url.URL) string {
	u := *base
	u.User = nil
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/ws"
	return u.String()
}

// New returns a Client for the server at opt.BaseURL.
func New(opt Options) (*Client, error) {
	base, err := ParseServerURL(opt.BaseURL)
	if err != nil {
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
	if opt.InterruptGrace <= 0 {
		opt.InterruptGrace = time.Second
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{opt: opt, base: base, wsURL: WebSocketURL(base), log: log}, nil
}

// Server is the server's URL without credentials: what is shown and stored.
func (c *Client) Server() string { return Redact(c.base.String()) }

// newID numbers a request. Numbers are unique for the life of the client.
func (c *Client) newID() int64 { return c.nextID.Add(1) }

// handler receives the run's messages in order. It returns done when the run is
// over (ai:complete, ai:error).
type handler func(Inbound) (done bool, err error)

// errDropped marks a connection lost in the middle of a run.
var errDropped = errors.New("connection to the server lost")

// stream runs one request on its own connection: it sends req, hands every message
// numbered id to h until h says done, and on cancellation sends ai:interrupt for id.
// threadID returns the server's thread id for the interrupt (it may be learnt
// during the run).
func (c *Client) stream(ctx context.Context, id int64, req any, threadID func() string, h handler) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	// The connection's own context: cancelling the caller's must not tear the
	// socket down before ai:interrupt is sent.
	connCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer conn.CloseNow()

	body, err := json.Marshal(req)
	if err != nil {
		return &convo.Error{Code: convo.CodeInternal, Message: "could not encode the request: " + err.Error(), Err: err}
	}
	if err := c.write(connCtx, conn, body); err != nil {
		return c.lost(err)
	}

	frames := make(chan frame, 64)
	go func() {
		for {
			typ, data, err := conn.Read(connCtx)
			if err != nil {
				frames <- frame{err: err}
				close(frames)
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			frames <- frame{data: data}
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

	stall := time.NewTimer(c.opt.StallTimeout)
	defer stall.Stop()
	for {
		select {
		case <-ctx.Done():
			c.interrupt(connCtx, conn, id, threadID(), frames)
			conn.Close(websocket.StatusNormalClosure, "interrupted")
			return ctx.Err()
		case err := <-pingFail:
			c.log.Warn("server did not answer a ping", "error", err.Error())
			return &convo.Error{Code: convo.CodeNetwork, Retryable: true, Err: errDropped,
				Message: "the server stopped answering (no pong to a ping): what arrived is kept — check the network and ask again"}
		case <-stall.C:
			conn.Close(websocket.StatusNormalClosure, "stalled")
			return &convo.Error{Code: convo.CodeTimeout, Retryable: true, Message: fmt.Sprintf(
				"the server's assistant sent nothing for %s: what arrived is kept — ask again", roundForPeople(c.opt.StallTimeout))}
		case f, open := <-frames:
			if ctx.Err() != nil {
				// Cancelled while a message was arriving: stop the run all the same.
				c.interrupt(connCtx, conn, id, threadID(), frames)
				conn.Close(websocket.StatusNormalClosure, "interrupted")
				return ctx.Err()
			}
			if !open {
				return c.lost(errDropped)
			}
			if f.err != nil {
				return c.lost(f.err)
			}
			in, ok, err := ParseInbound(f.data)
			if err != nil {
				conn.Close(websocket.StatusProtocolError, "malformed message")
				return &convo.Error{Code: convo.CodeInternal, Message: err.Error() + " — the server may run another version of Nodius", Err: err}
			}
			if !ok {
				continue
			}
			// Only this run's messages; an ai:error without _id (a request the server
			// could not even parse) is this run's too, the connection being ours alone.
			if in.HasID && in.ID != id || !in.HasID && in.Type != TypeError {
				continue
			}
			if !stall.Stop() {
				select {
				case <-stall.C:
				default:
				}
			}
			stall.Reset(c.opt.StallTimeout)
			done, err := h(in)
			if err != nil && ctx.Err() != nil {
				c.interrupt(connCtx, conn, id, threadID(), frames)
				conn.Close(websocket.StatusNormalClosure, "interrupted")
				return ctx.Err()
			}
			if err != nil || done {
				conn.Close(websocket.StatusNormalClosure, "")
				return err
			}
		}
	}
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

// interrupt asks the server to stop run id (ai:interrupt with the same _id), then
// waits a moment for the run's last word or the connection's end.
func (c *Client) interrupt(ctx context.Context, conn *websocket.Conn, id int64, threadID string, frames <-chan frame) {
	req := InterruptRequest{Type: TypeInterrupt, ID: id, ThreadID: threadID, Token: c.opt.Token}
	body, err := json.Marshal(req)
	if err != nil || c.write(ctx, conn, body) != nil {
		return
	}
	c.log.Debug("sent ai:interrupt", "id", id)
	grace := time.NewTimer(c.opt.InterruptGrace)
	defer grace.Stop()
	for {
		select {
		case <-grace.C:
			return
		case f, open := <-frames:
			if !open || f.err != nil {
				return
			}
			if in, ok, err := ParseInbound(f.data); err != nil || ok && in.ID == id && (in.Type == TypeComplete || in.Type == TypeError) {
				return
			}
		}
	}
}

func (c *Client) write(ctx context.Context, conn *websocket.Conn, body []byte) error {
	wctx, cancel := context.WithTimeout(ctx, c.opt.PingTimeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, body)
}

// lost is the error of a connection that went away mid-run.
func (c *Client) lost(err error) error {
	c.log.Warn("connection to the server lost", "error", err.Error())
	return &convo.Error{Code: convo.CodeNetwork, Retryable: true, Err: errors.Join(errDropped, err),
		Message: "the connection to the server was lost mid-run (the server stops the run when its client goes): what arrived is kept, marked interrupted — ask again"}
}

// dial opens the run's WebSocket connection.
func (c *Client) dial(ctx context.Context) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, c.opt.DialTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, c.wsURL, &websocket.DialOptions{HTTPClient: c.wsHTTPClient()})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if resp != nil {
			return nil, statusError(resp.StatusCode, "opening the assistant's WebSocket "+Redact(c.wsURL))
		}
		return nil, c.networkError("open the assistant's WebSocket at "+Redact(c.wsURL), err)
	}
	conn.SetReadLimit(32 << 20)
	return conn, nil
}

// wsHTTPClient is the HTTP client for the handshake: the configured one without
// its overall timeout (which would cut a long-lived connection).
func (c *Client) wsHTTPClient() *http.Client {
	hc := *c.opt.HTTPClient
	hc.Timeout = 0
	return &hc
}

func (c *Client) networkError(what string, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return &convo.Error{Code: convo.CodeTimeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("could not %s in time — check the server URL and the network", what)}
	}
	return &convo.Error{Code: convo.CodeNetwork, Retryable: true, Err: err,
		Message: fmt.Sprintf("could not %s (%s) — check the server URL and that the server is running", what, netReason(err))}
}

// netReason is a short, credential-free reason for a network failure.
func netReason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return "network error"
}

// statusError classifies an HTTP status from the server.
func statusError(status int, what string) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &convo.Error{Code: convo.CodeAuth, Status: status, Message: fmt.Sprintf(
			"the server refused the credentials (%d) %s — check --token or NODIUS_AI_TOKEN (a fresh JWT from your Nodius login)", status, what)}
	case status == http.StatusTooManyRequests:
		return &convo.Error{Code: convo.CodeRateLimit, Status: status, Retryable: true, Message: fmt.Sprintf(
			"the server is busy (429) %s — wait a moment and try again", what)}
	case status >= 500:
		return &convo.Error{Code: convo.CodeServerError, Status: status, Retryable: true, Message: fmt.Sprintf(
			"the server failed (%d) %s — try again later", status, what)}
	case status == http.StatusNotFound:
		return &convo.Error{Code: convo.CodeInvalidRequest, Status: status, Message: fmt.Sprintf(
			"the server has no such resource (404) %s — check the server URL and the id", what)}
	}
	return &convo.Error{Code: convo.CodeInvalidRequest, Status: status, Message: fmt.Sprintf(
		"the server refused the request (%d) %s", status, what)}
}

// serverError maps an ai:error to the error classes of local runs: the same codes,
// the same exit codes.
func serverError(in Inbound) *convo.Error {
	code := convo.ErrorCode(in.Code)
	switch code {
	case convo.CodeRateLimit, convo.CodeServerError, convo.CodeAuth, convo.CodeTimeout, convo.CodeNetwork,
		convo.CodeContentFilter, convo.CodeContextLength, convo.CodeBudgetExceeded, convo.CodeInvalidRequest, convo.CodeInternal:
	case "":
		code = convo.CodeInternal
	default:
		code = convo.CodeInternal
	}
	msg := strings.TrimSpace(in.Error)
	if msg == "" {
		msg = "an error with no message"
	}
	hint := ""
	switch code {
	case convo.CodeAuth:
		hint = " — check --token or NODIUS_AI_TOKEN"
	case convo.CodeRateLimit, convo.CodeServerError, convo.CodeTimeout, convo.CodeNetwork:
		hint = " — try again in a moment"
	case convo.CodeContextLength:
		hint = " — start a new thread"
	}
	return &convo.Error{Code: code, Retryable: in.Retryable, Message: "the server's assistant: " + msg + hint}
}
