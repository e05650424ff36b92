package nodiusapi

// The WebSocket of a Nodius server: it carries the assistant (ai:* frames) and the
// editing protocol (registerUserOnGraph, applyInstructionToGraph, ...) on one
// socket, and accepts nothing on it before an {"type":"authenticate","token":…}
// frame answered by authResult. Both the remote assistant (agent/remote) and the
// server data source (datasource/server) dial here, where SocketAddress routed
// them, so the handshake is written once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/internal/fault"
)

// Close codes the server uses when it refuses a socket.
const (
	CloseAuthFailed  = 4001 // a bad, expired or revoked token
	CloseAuthTimeout = 4002 // no authenticate frame within 15 s
)

// DefaultAuthTimeout bounds the handshake: the server answers authResult at once, so
// a refused token is reported well within a second on a healthy connection.
const DefaultAuthTimeout = 10 * time.Second

// MaxFrameBytes bounds one frame read from the server.
const MaxFrameBytes = 32 << 20

// AuthResult is the server's answer to authenticate.
type AuthResult struct {
	Success    bool     `json:"success"`
	UserID     string   `json:"userId"`
	Username   string   `json:"username"`
	Workspaces []string `json:"workspaces"`
	Error      string   `json:"error"`
}

// SocketOptions of DialSocket.
type SocketOptions struct {
	// Token is the user's JWT, sent once in the authenticate frame.
	Token string
	// Server is the server's URL as the user gave it, named in the sentence of a
	// refused token (what to log in to again).
	Server string
	// HTTPClient for the handshake (its Timeout is ignored: a socket lives long).
	HTTPClient *http.Client
	// DialTimeout bounds connecting (default 15 s); AuthTimeout the authResult
	// (default DefaultAuthTimeout).
	DialTimeout time.Duration
	AuthTimeout time.Duration
}

// DialSocket connects to the WebSocket at addr and authenticates. A refused token is a
// fault.Auth error (never retryable); a connection that cannot be made is a
// fault.Network or fault.Timeout error naming addr without credentials.
func DialSocket(ctx context.Context, addr string, opt SocketOptions) (*websocket.Conn, AuthResult, error) {
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 15 * time.Second
	}
	if opt.AuthTimeout <= 0 {
		opt.AuthTimeout = DefaultAuthTimeout
	}
	if strings.TrimSpace(opt.Token) == "" {
		return nil, AuthResult{}, &fault.Error{Code: fault.Auth, Message: "no token for the Nodius server" + at(opt.Server) + " — run 'nodius-ai auth login --server " + serverOr(opt.Server) + "', or give --token or NODIUS_AI_TOKEN"}
	}
	var hc *http.Client
	if opt.HTTPClient != nil {
		c := *opt.HTTPClient
		c.Timeout = 0
		hc = &c
	}
	dctx, cancel := context.WithTimeout(ctx, opt.DialTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, addr, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		if ctx.Err() != nil {
			return nil, AuthResult{}, ctx.Err()
		}
		where := fault.MaskCredentials(addr)
		if resp != nil {
			return nil, AuthResult{}, &fault.Error{Code: fault.Network, Status: resp.StatusCode, Retryable: resp.StatusCode >= 500, Err: err,
				Message: fmt.Sprintf("the server answered %d instead of opening its WebSocket at %s — check the server URL, or give the address with --ws-url", resp.StatusCode, where)}
		}
		if IsTimeout(err) {
			return nil, AuthResult{}, &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
				Message: fmt.Sprintf("could not open the server's WebSocket at %s in time — check the server URL and the network", where)}
		}
		return nil, AuthResult{}, &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("could not open the server's WebSocket at %s (%s) — check that the server is running, or give the address with --ws-url", where, Reason(err))}
	}
	conn.SetReadLimit(MaxFrameBytes)
	res, err := authenticate(ctx, conn, opt)
	if err != nil {
		conn.CloseNow()
		return nil, res, err
	}
	return conn, res, nil
}

func authenticate(ctx context.Context, conn *websocket.Conn, opt SocketOptions) (AuthResult, error) {
	actx, cancel := context.WithTimeout(ctx, opt.AuthTimeout)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"type": "authenticate", "token": opt.Token})
	if err := conn.Write(actx, websocket.MessageText, body); err != nil {
		return AuthResult{}, handshakeError(ctx, err, opt.Server)
	}
	for {
		typ, data, err := conn.Read(actx)
		if err != nil {
			return AuthResult{}, handshakeError(ctx, err, opt.Server)
		}
		if typ != websocket.MessageText {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &head) != nil || head.Type != "authResult" {
			continue // a broadcast or a stray answer: only authResult ends the handshake
		}
		var res AuthResult
		if err := json.Unmarshal(data, &res); err != nil {
			return AuthResult{}, &fault.Error{Code: fault.Internal, Err: err,
				Message: "the server's authResult is not valid JSON — the server may run another version of Nodius"}
		}
		if !res.Success {
			switch res.Error {
			case "Authentication timeout":
				return res, &fault.Error{Code: fault.Timeout, Retryable: true, Message: "the server timed out waiting for authentication — try again"}
			case "Not authenticated. Send authenticate message first.":
				continue // an answer to a frame sent before ours was read: wait for ours
			}
			return res, refused(res.Error, opt.Server)
		}
		return res, nil
	}
}

// refused is the error of a token the server did not accept.
func refused(serverSaid, server string) error {
	why := strings.TrimSpace(serverSaid)
	if why == "" {
		why = "authentication failed"
	}
	return &fault.Error{Code: fault.Auth, Message: fmt.Sprintf(
		"the server%s refused the token (%s): it may have expired or been revoked by a newer login — run 'nodius-ai auth login --server %s' again, or give a fresh --token",
		at(server), strings.TrimSuffix(why, "."), serverOr(server))}
}

// at is " at SERVER", or "" when the server is not known.
func at(server string) string {
	if server == "" {
		return ""
	}
	return " at " + fault.MaskCredentials(server)
}

// serverOr is the server's URL for a command to run, or the placeholder URL.
func serverOr(server string) string {
	if server == "" {
		return "URL"
	}
	return fault.MaskCredentials(server)
}

// handshakeError classifies a failure during authenticate.
func handshakeError(ctx context.Context, err error, server string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch websocket.CloseStatus(err) {
	case CloseAuthFailed:
		return refused("", server)
	case CloseAuthTimeout:
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err, Message: "the server timed out waiting for authentication — try again"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
			Message: "the server did not answer the authentication in time — check that the URL is a Nodius server"}
	}
	return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
		Message: "the connection to the server closed during authentication (" + Reason(err) + ") — check the server URL"}
}

// IsTimeout reports whether a network failure is a timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}
