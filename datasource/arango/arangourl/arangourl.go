// Package arangourl reads an arango:// source URL into the settings of a connection
// to ArangoDB (Config), and names them back without the password. It is the part of
// the ArangoDB source that reads what a person typed, kept apart from the driver so
// that it can be read, tested and fuzzed on its own; package arango connects with it.
package arangourl

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

// DefaultDatabase is used when the URL names none: the database the Nodius server creates.
const DefaultDatabase = "nodius"

// DefaultWorkspace is the workspace of graphs when neither the URL nor the
// configuration names one.
const DefaultWorkspace = "default"

// Config says where an ArangoDB is and which workspace to read. Password is kept out
// of every message (see Describe).
type Config struct {
	// Endpoint is scheme://host:port, without credentials ("http://127.0.0.1:8529").
	Endpoint  string
	User      string
	Password  string
	Database  string
	Workspace string
	// TLS is set by arangos://; InsecureTLS (?insecure=true) accepts self-signed
	// certificates, for local test servers only.
	TLS         bool
	InsecureTLS bool
	// BatchSize is how many documents one cursor round trip carries (0: 1000).
	// Tests lower it to exercise cursor batching.
	BatchSize int
	// MaxResultBytes bounds one answer of the server, a cursor batch or a document
	// (0: DefaultMaxResultBytes; config key max_arango_result_bytes).
	MaxResultBytes int
	// LockWait bounds how long applying an action waits for another writer holding
	// the graph collections (0: DefaultLockWait; config key graph_lock_wait).
	LockWait time.Duration
	// IgnoreLiveServer writes even while a Nodius server runs on the database
	// (config key arango_ignore_server): only for a graph nobody edits.
	IgnoreLiveServer bool
}

// DefaultMaxResultBytes bounds one ArangoDB answer when the config sets nothing.
const DefaultMaxResultBytes = 32 << 20

// Parse reads arango://USER:PASS@HOST:PORT/DB?workspace=W (arangos:// for TLS).
// The port defaults to 8529, the database to "nodius"; the workspace is left empty
// when the URL has none, so that the caller can apply --workspace.
func Parse(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, password included: say it without it.
		return Config{}, configErr("the ArangoDB URL is not a valid URL — expected arango://USER:PASS@HOST:PORT/DB?workspace=W")
	}
	var cfg Config
	switch u.Scheme {
	case "arango":
	case "arangos":
		cfg.TLS = true
	default:
		return Config{}, configErr(fmt.Sprintf("ArangoDB URL scheme must be arango:// or arangos:// (got %q)", u.Scheme+"://"))
	}
	host := u.Hostname()
	if host == "" {
		return Config{}, configErr("the ArangoDB URL has no host — expected arango://USER:PASS@HOST:PORT/DB")
	}
	port := u.Port()
	if port == "" {
		port = "8529"
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return Config{}, configErr(fmt.Sprintf("the ArangoDB URL has an invalid port %q", port))
	}
	scheme := "http"
	if cfg.TLS {
		scheme = "https"
	}
	cfg.Endpoint = scheme + "://" + net.JoinHostPort(host, port)
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	cfg.Database = strings.Trim(u.Path, "/")
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if strings.Contains(cfg.Database, "/") {
		// The path is not echoed: in a mistyped URL it may hold the credentials.
		return Config{}, configErr("the ArangoDB URL path must be a database name only, with no further '/' (arango://USER:PASS@HOST:PORT/DB?workspace=W)")
	}
	q := u.Query()
	cfg.Workspace = q.Get("workspace")
	switch strings.ToLower(q.Get("insecure")) {
	case "", "0", "false":
	default:
		cfg.InsecureTLS = true
	}
	return cfg, nil
}

// Describe names the database without the password: arango://root@host:8529/nodius (workspace W).
func (c Config) Describe() string {
	scheme := "arango"
	if c.TLS {
		scheme = "arangos"
	}
	hostPort := strings.TrimPrefix(strings.TrimPrefix(c.Endpoint, "https://"), "http://")
	return fmt.Sprintf("%s://%s@%s/%s (workspace %s)", scheme, c.User, hostPort, c.Database, c.Workspace)
}

func configErr(msg string) error {
	return &fault.Error{Code: fault.Config, Message: msg}
}
