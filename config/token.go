package config

import (
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/internal/credstore"
	"github.com/nodius/nodius-ai/internal/fault"
)

// OriginThread is the origin of a source taken from a thread's record (approve,
// undo, threads show --pictures of a thread started elsewhere): a source the user
// did not name, which the configured token is never sent to.
const OriginThread = "the thread's recorded source"

// StoredToken looks up the token `nodius-ai auth login` stored for a host key
// (credstore.Host): the token and where it is kept, "" when there is none.
type StoredToken func(host string) (token, where string, err error)

// ServerToken returns the bearer token to send to the Nodius server at serverURL,
// and where it came from (for messages; "" when there is none):
//
//   - the configured token (--token, NODIUS_AI_TOKEN, the config file's token), but
//     only when serverURL is on a server the configuration names: the agent
//     (server:URL), or a server: source the user set (not one adopted from a
//     thread's record, see OriginThread, nor the default server of auth login,
//     which gets its own stored token);
//   - else the token auth login stored for exactly serverURL's host (scheme, host and
//     port), asked of c.Stored;
//   - else none (also when serverURL is not an http or https URL with a host).
//
// So a token never reaches a host it was not meant for: a configured token goes to
// the configured server only, a stored token to its own host only.
func (c *Config) ServerToken(serverURL string) (token, origin string, err error) {
	host, err := credstore.Host(serverURL)
	if err != nil {
		// Not an http(s) URL with a host: no token, and the opener says what is wrong
		// with the URL in its own words.
		return "", "", nil
	}
	if c.Token != "" && c.configuredServer(host) {
		return c.Token, c.Origins["token"], nil
	}
	if c.Stored == nil {
		return "", "", nil
	}
	tok, where, err := c.Stored(host)
	if err != nil {
		return "", "", &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
	}
	if tok == "" {
		return "", "", nil
	}
	return tok, fmt.Sprintf("auth login for %s (%s)", host, where), nil
}

// configuredServers are the servers the user named, agent first: the server:
// agent, and a server: source that was not adopted from a thread's record. The
// default server of auth login is not named: it is what applies when nothing is.
func (c *Config) configuredServers() []string {
	var named []string
	if u, ok := strings.CutPrefix(c.Agent, "server:"); ok && c.Origins["agent"] != OriginLogin {
		named = append(named, u)
	}
	if u, ok := strings.CutPrefix(c.Source, "server:"); ok && c.Origins["source"] != OriginThread && c.Origins["source"] != OriginLogin {
		named = append(named, u)
	}
	return named
}

// configuredServer reports whether host is the host of a server the user named.
func (c *Config) configuredServer(host string) bool {
	for _, s := range c.configuredServers() {
		if h, err := credstore.Host(s); err == nil && h == host {
			return true
		}
	}
	return false
}

// ConfiguredServer is the server the configuration names ("" when none): the agent
// when it is a server, else a server: source; config shows the token for it.
func (c *Config) ConfiguredServer() string {
	if named := c.configuredServers(); len(named) > 0 {
		return named[0]
	}
	return ""
}

// Server is the Nodius server commands talk to ("" when none) and where it comes
// from: the server the configuration names (ConfiguredServer, origin the setting
// that names it), else the default server of auth login when it is in effect as
// the agent or the source (origin OriginLogin).
func (c *Config) Server() (server, origin string) {
	if s := c.ConfiguredServer(); s != "" {
		if strings.TrimPrefix(c.Agent, "server:") == s {
			return s, c.Origins["agent"]
		}
		return s, c.Origins["source"]
	}
	if c.Origins["agent"] == OriginLogin || c.Origins["source"] == OriginLogin {
		return c.Login, OriginLogin
	}
	return "", ""
}
