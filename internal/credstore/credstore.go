// Package credstore keeps the Nodius server tokens that `nodius-ai auth login`
// obtained, one per server, the way gh keeps its tokens: in the OS keyring where
// there is one, else in a file only its owner can read (0600, in a 0700 directory).
//
// A token is stored under its server's host key (scheme, host and port, see Host),
// and looked up by the host a request goes to: a token can only ever be handed to
// the server it was issued for.
//
// The file also records the default server (see Default): the last one logged in
// to, or the one `auth switch` chose. It holds a host key, never a secret.
package credstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/nodius/nodius-ai/internal/fault"
)

// FileName is the file, in the config directory, that lists the servers logged in
// to (and holds their tokens when no keyring took them).
const FileName = "hosts.json"

// service prefixes a keyring entry's service name: "nodius-ai:https://host:443".
const service = "nodius-ai:"

// Where a token is kept.
const (
	InKeyring = "keyring"
	InFile    = "file"
)

// Keyring is the OS credential store (see System); tests give a map.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// System is the OS keyring: the Secret Service over D-Bus on Linux, the Keychain
// on macOS, the Credential Manager on Windows. On a headless machine it fails, and
// the store falls back to its file.
type System struct{}

func (System) Get(s, u string) (string, error) {
	got := make(chan string, 1)
	err := bounded(func() error {
		v, err := keyring.Get(s, u)
		got <- v
		return err
	})
	if err != nil {
		return "", err
	}
	return <-got, nil
}
func (System) Set(s, u, p string) error { return bounded(func() error { return keyring.Set(s, u, p) }) }
func (System) Delete(s, u string) error { return bounded(func() error { return keyring.Delete(s, u) }) }

// keyringWait is how long a keyring call may take: a locked keyring can wait for a
// desktop prompt nobody sees (over SSH); the store then falls back to its file.
const keyringWait = 10 * time.Second

// bounded runs a keyring call, giving up after keyringWait (the call is left to
// finish on its own: the libraries take no context).
func bounded(call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(keyringWait):
		return errors.New("the system keyring did not answer")
	}
}

// Cred is one server's stored login.
type Cred struct {
	Host  string // the host key: "https://nodius.example:443"
	User  string // the username the server returned ("" when unknown)
	Token string `json:"-"` // never printed
	Where string // InKeyring or InFile
}

// entry is one server in the file. Token is set only when the keyring did not take it.
type entry struct {
	User  string `json:"user,omitempty"`
	Where string `json:"where"`
	Token string `json:"token,omitempty"`
}

type fileData struct {
	// Default is the host key of the default server ("" when none): commands use
	// it when nothing else names a server.
	Default string           `json:"default,omitempty"`
	Hosts   map[string]entry `json:"hosts"`
}

// Store is the token store under one directory. Keyring nil means file only.
type Store struct {
	Dir     string
	Keyring Keyring
}

// Path is the store's file.
func (s *Store) Path() string { return filepath.Join(s.Dir, FileName) }

// Host returns the host key of a server URL: its scheme, lower-cased host and port
// (80 or 443 when the URL names none), without user info, path or query. A
// "server:" prefix is allowed. Only http and https URLs with a host have one.
func Host(raw string) (string, error) {
	raw = strings.TrimPrefix(strings.TrimSpace(raw), "server:")
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a server URL like https://nodius.example", fault.MaskCredentials(raw))
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return "", fmt.Errorf("%q is not a server URL: it must start with http:// or https://", fault.MaskCredentials(raw))
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return "", fmt.Errorf("%q is not a server URL: it names no host", fault.MaskCredentials(raw))
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// Save stores host's token and user: in the keyring unless insecure (or the keyring
// fails), else in the file, and makes host the default server (the last login is
// the default, as with gh). It returns where the token went, for the user: "the
// system keyring" or the file's path. A token saved earlier for host elsewhere is
// removed.
func (s *Store) Save(host, user, token string, insecure bool) (string, error) {
	d, err := s.read()
	if err != nil {
		return "", err
	}
	old, had := d.Hosts[host]
	e := entry{User: user, Where: InFile, Token: token}
	if !insecure && s.Keyring != nil {
		if kerr := s.Keyring.Set(service+host, user, token); kerr == nil {
			e = entry{User: user, Where: InKeyring}
		}
	}
	d.Hosts[host] = e
	d.Default = host
	if err := s.write(d); err != nil {
		if e.Where == InKeyring {
			_ = s.Keyring.Delete(service+host, user)
		}
		return "", err
	}
	if had && old.Where == InKeyring && (e.Where != InKeyring || old.User != user) && s.Keyring != nil {
		_ = s.Keyring.Delete(service+host, old.User)
	}
	if e.Where == InKeyring {
		return "the system keyring", nil
	}
	return s.Path(), nil
}

// Token returns host's stored login; ok is false when there is none.
func (s *Store) Token(host string) (c Cred, ok bool, err error) {
	d, err := s.read()
	if err != nil {
		return Cred{}, false, err
	}
	e, ok := d.Hosts[host]
	if !ok {
		return Cred{}, false, nil
	}
	c = Cred{Host: host, User: e.User, Where: e.Where, Token: e.Token}
	if e.Where == InKeyring {
		if s.Keyring == nil {
			return Cred{}, false, fmt.Errorf("the token for %s is in the system keyring, which cannot be read here", host)
		}
		tok, err := s.Keyring.Get(service+host, e.User)
		if errors.Is(err, keyring.ErrNotFound) {
			return Cred{}, false, nil
		}
		if err != nil {
			return Cred{}, false, fmt.Errorf("cannot read the token for %s from the system keyring: %w", host, err)
		}
		c.Token = tok
	}
	return c, c.Token != "", nil
}

// List returns every stored login, by host, tokens included.
func (s *Store) List() ([]Cred, error) {
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	hosts := make([]string, 0, len(d.Hosts))
	for h := range d.Hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	out := make([]Cred, 0, len(hosts))
	for _, h := range hosts {
		c, ok, err := s.Token(h)
		if err != nil || !ok {
			e := d.Hosts[h]
			c = Cred{Host: h, User: e.User, Where: e.Where}
		}
		out = append(out, c)
	}
	return out, nil
}

// Default returns the host key of the default server, "" when there is none (no
// login yet, the default was logged out of, or the file predates defaults). A
// default whose login is gone is none.
func (s *Store) Default() (string, error) {
	d, err := s.read()
	if err != nil {
		return "", err
	}
	if _, ok := d.Hosts[d.Default]; !ok {
		return "", nil
	}
	return d.Default, nil
}

// ErrNotLoggedIn is SetDefault's answer for a server with no stored login.
var ErrNotLoggedIn = errors.New("not logged in to that server")

// SetDefault makes host, which must have a stored login, the default server.
func (s *Store) SetDefault(host string) error {
	d, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := d.Hosts[host]; !ok {
		return ErrNotLoggedIn
	}
	d.Default = host
	return s.write(d)
}

// Delete forgets host's token; ok is false when there was none. When host was the
// default server, there is no default any more (no other login is promoted: which
// server commands use never changes behind the user's back).
func (s *Store) Delete(host string) (ok bool, err error) {
	d, err := s.read()
	if err != nil {
		return false, err
	}
	e, ok := d.Hosts[host]
	if !ok {
		return false, nil
	}
	if e.Where == InKeyring && s.Keyring != nil {
		if err := s.Keyring.Delete(service+host, e.User); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return false, fmt.Errorf("cannot remove the token for %s from the system keyring: %w", host, err)
		}
	}
	delete(d.Hosts, host)
	if d.Default == host {
		d.Default = ""
	}
	return true, s.write(d)
}

func (s *Store) read() (fileData, error) {
	d := fileData{Hosts: map[string]entry{}}
	b, err := readRegular(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("cannot read the login file %s: %w", s.Path(), err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("the login file %s is not valid (remove it and log in again): %w", s.Path(), err)
	}
	if d.Hosts == nil {
		d.Hosts = map[string]entry{}
	}
	return d, nil
}

// MaxFileBytes bounds the login file: a few logins take a few kilobytes, and a
// bound keeps a file replaced by something huge from being read whole into memory
// by every command.
const MaxFileBytes = 1 << 20

// readRegular reads path when it is a regular file of at most MaxFileBytes. Every
// command reads the login file (for the default server): a FIFO there would block
// each of them on open, a device would never end. The type is checked before
// opening and again on the open file (the path may be replaced in between).
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("it is larger than %d KiB (remove it and log in again)", MaxFileBytes>>10)
	}
	return b, nil
}

// regular refuses what is not a regular file of at most MaxFileBytes, naming it.
func regular(fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular() && fi.Size() > MaxFileBytes:
		return fmt.Errorf("it is larger than %d KiB (remove it and log in again)", MaxFileBytes>>10)
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("it is a directory, not a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("it is a named pipe, not a regular file (remove it and log in again)")
	default:
		return errors.New("it is not a regular file (remove it and log in again)")
	}
}

// write replaces the file atomically, readable by its owner only, in a directory
// only its owner can enter.
func (s *Store) write(d fileData) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", s.Dir, err)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".hosts-*.json")
	if err != nil {
		return fmt.Errorf("cannot write the login file in %s: %w", s.Dir, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write the login file %s: %w", s.Path(), err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write the login file %s: %w", s.Path(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write the login file %s: %w", s.Path(), err)
	}
	if err := os.Rename(tmp.Name(), s.Path()); err != nil {
		return fmt.Errorf("cannot write the login file %s: %w", s.Path(), err)
	}
	return nil
}
