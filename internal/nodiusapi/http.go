// Package nodiusapi is the client of a Nodius server's HTTP API as nodius-ai
// speaks to it: one request function that sends the bearer token to the server it
// was issued for and nowhere else (a redirect to another origin is refused, never
// followed with the token), one classification of the server's refusals (401,
// 403, 404, 429, 5xx) into fault codes with one wording that names the server in
// use, and the routing of sockets the web client does (POST /api/sync: which
// instance of a cluster manages a graph, and where its WebSocket is). It knows
// the wire only: it imports nothing of the agent or the data sources, so every
// part of nodius-ai that talks to the server (the server: source, the server's
// assistant, auth, thread sync) can stand on it.
package nodiusapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/nodius/nodius-ai/internal/fault"
)

// DefaultTimeout bounds one HTTP request (headers and body).
const DefaultTimeout = 30 * time.Second

// DefaultMaxBytes bounds one answer: far above any real graph, low enough that a
// broken or hostile server cannot exhaust memory.
const DefaultMaxBytes = 32 << 20

// Options of New.
type Options struct {
	// BaseURL is the server's REST base (http:// or https://, no query).
	BaseURL string
	// Token is the user's JWT, sent as a bearer token to BaseURL's origin only.
	Token string
	// WSURL, when set, is where the server's WebSocket is (--ws-url, ws_url): it
	// replaces the address /api/sync answers (the graph is still claimed there).
	WSURL string
	// HTTPClient sends the requests (nil: a client with Timeout). Its redirect
	// policy is replaced: only redirects within the server's origin are followed.
	HTTPClient *http.Client
	// Timeout bounds each request (default DefaultTimeout).
	Timeout time.Duration
	// MaxBytes bounds one answer (default DefaultMaxBytes; config key
	// max_snapshot_bytes).
	MaxBytes int
}

// Client talks to one Nodius server over HTTP. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	token    string
	wsURL    string
	hc       *http.Client
	timeout  time.Duration
	maxBytes int
}

// ParseServerURL checks a server URL (http:// or https://, a host, no query, no
// fragment) and returns it without a trailing slash. Credentials in it are kept
// for Server (masked) but never sent.
func ParseServerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"the server URL %q is not an http:// or https:// URL — use e.g. server:https://nodius.example.com", fault.MaskCredentials(raw))}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"the server URL %q must not have a query or a fragment", fault.MaskCredentials(raw))}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// New returns a Client of the server at opt.BaseURL; it sends nothing.
func New(opt Options) (*Client, error) {
	base, err := ParseServerURL(opt.BaseURL)
	if err != nil {
		return nil, err
	}
	if o := strings.TrimSpace(opt.WSURL); o != "" {
		if _, err := checkSocketURL(o); err != nil {
			return nil, err
		}
	}
	c := &Client{base: base, token: opt.Token, wsURL: strings.TrimSpace(opt.WSURL), timeout: opt.Timeout, maxBytes: opt.MaxBytes}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	var hc http.Client
	if opt.HTTPClient != nil {
		hc = *opt.HTTPClient
	} else {
		hc = http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: c.timeout,
			MaxIdleConns:          8,
			IdleConnTimeout:       90 * time.Second,
		}}
	}
	hc.Timeout = 0 // each request has its own deadline (a socket's handshake has none)
	hc.CheckRedirect = sameOrigin(base)
	c.hc = &hc
	return c, nil
}

// sameOrigin is the redirect policy: Go's own keeps the Authorization header on a
// redirect to another port of the same host, which would hand the token to
// whatever listens there. A redirect is followed only within the server's origin
// (scheme, host and port); any other stops with the redirect as the answer.
func sameOrigin(base *url.URL) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return http.ErrUseLastResponse
		}
		if !SameOrigin(base, req.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// SameOrigin reports whether u is on base's origin (scheme, host, port; the
// default port of the scheme counts as given).
func SameOrigin(base, u *url.URL) bool {
	return base.Scheme == u.Scheme && strings.EqualFold(base.Hostname(), u.Hostname()) && portOf(base) == portOf(u)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" || u.Scheme == "wss" {
		return "443"
	}
	return "80"
}

// Server is the server's URL as shown, logged and stored (no credentials).
func (c *Client) Server() string { return fault.MaskCredentials(c.base.String()) }

// Base is a copy of the server's URL.
func (c *Client) Base() *url.URL { u := *c.base; return &u }

// Token is the bearer token (for the WebSocket's authenticate frame).
func (c *Client) Token() string { return c.token }

// HTTPClient is the client requests go through (for the WebSocket's handshake:
// the same transport, the same redirect policy).
func (c *Client) HTTPClient() *http.Client { return c.hc }

// MaxBytes is the bound of one answer.
func (c *Client) MaxBytes() int { return c.maxBytes }

// Answer is one HTTP answer: its status and body (at most MaxBytes).
type Answer struct {
	Status int
	Body   []byte
}

// Do sends one request to path on the server (the body: nil, []byte as it is, or a
// value encoded as JSON) with the bearer token, and returns the answer whatever its
// status. A transport failure, an answer too large, a redirect elsewhere are
// *fault.Error naming the server; a status is the caller's to read (see Call).
func (c *Client) Do(ctx context.Context, method, path string, body any) (Answer, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return Answer{}, fmt.Errorf("encode request: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	u.User = nil
	u.Path = strings.TrimRight(c.base.Path, "/") + path
	u.RawPath = ""
	if strings.Contains(path, "%") {
		u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + path
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return Answer{}, &fault.Error{Code: fault.Internal, Err: err, Message: "could not build the request: " + err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Answer{}, c.netError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			where := loc
			if lu, err := req.URL.Parse(loc); err == nil {
				where = fault.MaskCredentials(lu.Scheme + "://" + lu.Host)
			}
			return Answer{}, &fault.Error{Code: fault.InvalidRequest, Status: resp.StatusCode, Message: fmt.Sprintf(
				"the Nodius server at %s redirected %s to %s; nodius-ai does not send your token to another address — if that is the server, use its URL", c.Server(), path, where)}
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxBytes)+1))
	if err != nil {
		return Answer{}, c.netError(ctx, err)
	}
	if len(data) > c.maxBytes {
		return Answer{}, fault.Limit("the Nodius server's answer", "max_snapshot_bytes", c.maxBytes)
	}
	return Answer{Status: resp.StatusCode, Body: data}, nil
}

// Call is Do that returns the body of a 2xx answer, and any other status as the
// one classified error (StatusError) saying what was being done.
func (c *Client) Call(ctx context.Context, method, path string, body any, what string) ([]byte, error) {
	a, err := c.Do(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	if a.Status < 200 || a.Status > 299 {
		return nil, c.StatusError(a.Status, a.Body, what)
	}
	return a.Body, nil
}

// StatusError classifies a status of this server's answer, once for every caller:
// 401 and 403 are auth_error, 404 invalid_request, 429 rate_limit, 5xx
// server_error (both retryable), anything else invalid_request. The sentence names
// the server, what was being done (what, e.g. "listing the threads"), the
// server's own words when it gave some, and what to do.
func (c *Client) StatusError(status int, body []byte, what string) *fault.Error {
	return StatusError(c.Server(), status, body, what, c.token != "")
}

// StatusError is Client.StatusError for a server named by its URL; withToken says
// whether a token was sent.
func StatusError(server string, status int, body []byte, what string, withToken bool) *fault.Error {
	said := ServerMessage(body)
	during := ""
	if what != "" {
		during = " while " + what
	}
	switch {
	case status == http.StatusUnauthorized && !withToken:
		return &fault.Error{Code: fault.Auth, Status: status, Message: fmt.Sprintf(
			"the Nodius server at %s wants a token (401%s)%s — run 'nodius-ai auth login --server %s', or give --token or NODIUS_AI_TOKEN", server, said, during, server)}
	case status == http.StatusUnauthorized:
		return &fault.Error{Code: fault.Auth, Status: status, Message: fmt.Sprintf(
			"the Nodius server at %s refused the token (401%s)%s — it may have expired or been revoked by a newer login: run 'nodius-ai auth login --server %s' again, or give a fresh --token", server, said, during, server)}
	case status == http.StatusForbidden:
		return &fault.Error{Code: fault.Auth, Status: status, Message: fmt.Sprintf(
			"the Nodius server at %s refused access (403%s)%s — the token's user may not use this workspace", server, said, during)}
	case status == http.StatusNotFound:
		return &fault.Error{Code: fault.InvalidRequest, Status: status, Message: fmt.Sprintf(
			"the Nodius server at %s has no such resource (404%s)%s — check the server URL and the key or id", server, said, during)}
	case status == http.StatusTooManyRequests:
		return &fault.Error{Code: fault.RateLimit, Status: status, Retryable: true, Message: fmt.Sprintf(
			"the Nodius server at %s is busy (429%s)%s — wait a moment and try again", server, said, during)}
	case status >= 500:
		return &fault.Error{Code: fault.ServerError, Status: status, Retryable: true, Message: fmt.Sprintf(
			"the Nodius server at %s failed (%d%s)%s — try again later, or look at the server's log", server, status, said, during)}
	}
	return &fault.Error{Code: fault.InvalidRequest, Status: status, Message: fmt.Sprintf(
		"the Nodius server at %s refused the request (%d%s)%s — is it a Nodius server?", server, status, said, during)}
}

// ServerMessage is ": " and the server's words in an error body ({"error": "..."}
// or {"message": "..."}, cut to 200 bytes), or "".
func ServerMessage(body []byte) string {
	var m struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	msg := ""
	if s, ok := m.Error.(string); ok {
		msg = s
	}
	if m.Message != "" && (msg == "" || msg == "Unauthorized") {
		msg = m.Message // the real server's 401: {"error":"Unauthorized","message":"Invalid token"}
	}
	msg = strings.TrimSpace(strings.ReplaceAll(msg, "\n", " "))
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// netError classifies a failed request, naming the server without credentials.
func (c *Client) netError(ctx context.Context, err error) error {
	where := c.Server()
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return &fault.Error{Code: fault.Interrupted, Err: err, Message: "the request to the Nodius server at " + where + " was cancelled"}
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err, Message: fmt.Sprintf(
			"the Nodius server at %s did not answer within %s — check that it is up and the network, then retry", where, c.timeout)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err, Message: fmt.Sprintf(
			"cannot connect to the Nodius server at %s (connection refused) — is it running, and is the URL right?", where)}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &fault.Error{Code: fault.Network, Err: err, Message: fmt.Sprintf(
			"cannot resolve the Nodius server's host %q — check the server URL", dns.Name)}
	}
	return &fault.Error{Code: fault.Network, Retryable: true, Err: err, Message: fmt.Sprintf(
		"cannot reach the Nodius server at %s (%s) — check the network and the server URL", where, Reason(err))}
}

// Reason is a short, credential-free reason for a network failure (the HTTP
// API's and the WebSocket's alike).
func Reason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	if s := websocket.CloseStatus(err); s != -1 {
		return fmt.Sprintf("closed with code %d", s)
	}
	return "network error"
}
