package nodiusapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/nodius/nodius-ai/internal/fault"
)

// GraphInstance is the instance id of a graph in the server's cluster: what
// POST /api/sync is asked about before any socket for the graph is opened.
func GraphInstance(graphKey string) string { return "graph-" + graphKey }

// HomeInstance is what a socket that is about no graph (home mode, the
// authentication of a graph creation) is routed by. The web client opens the
// assistant at home with the address it was last given; this client asks for one
// instance id no graph can have, so a server alone and a cluster both answer an
// instance that is up.
const HomeInstance = "home"

// Route is the server's answer to POST /api/sync: where the socket of an instance
// is. A server alone answers itself (with secure and path under HTTPS); in a
// cluster, the instance that manages the graph, which may be a peer (its host and
// its port + 1000, without secure or path).
type Route struct {
	Host   string `json:"host"`
	Port   int    `json:"-"`
	Secure bool   `json:"secure"`
	Path   string `json:"path"`
}

// Sync asks the server which instance manages instanceID (GraphInstance(key)),
// which also makes the answering instance its manager when none is: the real
// server refuses to register an editor of a graph on an instance that does not
// manage it ("This server don't manage graph with key:KEY").
func (c *Client) Sync(ctx context.Context, instanceID string) (Route, error) {
	body, err := c.Call(ctx, http.MethodPost, "/api/sync", map[string]string{"instanceId": instanceID}, "asking where "+instanceID+" is managed (/api/sync)")
	if err != nil {
		return Route{}, err
	}
	var w struct {
		Host   string          `json:"host"`
		Port   json.RawMessage `json:"port"`
		Secure bool            `json:"secure"`
		Path   string          `json:"path"`
	}
	bad := func(why string) error {
		return &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"the Nodius server at %s answered /api/sync with %s — is it a Nodius server?", c.Server(), why)}
	}
	if json.Unmarshal(body, &w) != nil {
		return Route{}, bad("something that is not JSON")
	}
	r := Route{Host: strings.TrimSpace(w.Host), Secure: w.Secure, Path: w.Path}
	var n float64
	var s string
	switch {
	case json.Unmarshal(w.Port, &n) == nil && n == float64(int(n)):
		r.Port = int(n)
	case json.Unmarshal(w.Port, &s) == nil:
		r.Port, _ = strconv.Atoi(s)
	}
	if r.Port < 1 || r.Port > 65535 {
		return Route{}, bad("no usable port")
	}
	if strings.ContainsAny(r.Host, "/?#@ ") {
		return Route{}, bad(fmt.Sprintf("a host that is not one (%q)", r.Host))
	}
	if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
		r.Path = "/" + r.Path
	}
	return r, nil
}

// Address is the WebSocket URL of a route, as the web client builds it
// (ws[s]://HOST:PORT[PATH]), with two guards of the token: a server reached over
// HTTPS keeps TLS for every socket (a peer's answer carries no secure flag; the
// token is never sent in clear text after an https login), and a route without a
// host (or the unspecified 0.0.0.0) means the server's own host.
func (c *Client) Address(r Route) string {
	scheme := "ws"
	if r.Secure || c.base.Scheme == "https" {
		scheme = "wss"
	}
	host := r.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = c.base.Hostname()
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(r.Port)), Path: r.Path}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// SocketAddress claims instanceID through /api/sync and returns where to open
// its socket: the configured override (WSURL) when there is one — the claim is
// still made there, since registrations depend on it; a server that has no
// /api/sync (404, a proxy in front) is then used as configured — else the
// address /api/sync answers.
func (c *Client) SocketAddress(ctx context.Context, instanceID string) (string, error) {
	r, err := c.Sync(ctx, instanceID)
	if c.wsURL != "" {
		if fe, ok := fault.As(err); ok && fe.Status == http.StatusNotFound {
			err = nil
		}
		if err != nil {
			return "", err
		}
		return checkSocketURL(c.wsURL)
	}
	if err != nil {
		return "", err
	}
	return c.Address(r), nil
}

// checkSocketURL checks a configured WebSocket address and returns it without
// credentials.
func checkSocketURL(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return "", &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"the WebSocket address %q is not a ws:// or wss:// URL — use e.g. --ws-url wss://nodius.example.com/ws", fault.MaskCredentials(o))}
	}
	u.User = nil
	return u.String(), nil
}

// IsNotManaged reports whether a registration refusal is the server's "This server
// don't manage graph with key:KEY": the graph is managed by another instance (or
// its claim lapsed), and /api/sync is to be asked again.
func IsNotManaged(serverSaid string) bool {
	return strings.Contains(serverSaid, "don't manage graph") || strings.Contains(serverSaid, "not manage")
}
