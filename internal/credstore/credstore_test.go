package credstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// mapKeyring is a keyring in memory; fail makes every call fail, as on a headless
// machine without a Secret Service.
type mapKeyring struct {
	m    map[string]string
	fail bool
}

func (k *mapKeyring) Get(s, u string) (string, error) {
	if k.fail {
		return "", errors.New("no secret service")
	}
	v, ok := k.m[s+"|"+u]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (k *mapKeyring) Set(s, u, p string) error {
	if k.fail {
		return errors.New("no secret service")
	}
	k.m[s+"|"+u] = p
	return nil
}

func (k *mapKeyring) Delete(s, u string) error {
	if k.fail {
		return errors.New("no secret service")
	}
	if _, ok := k.m[s+"|"+u]; !ok {
		return keyring.ErrNotFound
	}
	delete(k.m, s+"|"+u)
	return nil
}

func TestHost(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://Nodius.Example", "https://nodius.example:443"},
		{"server:https://nodius.example/api?x=1", "https://nodius.example:443"},
		{"https://nodius.example:443/", "https://nodius.example:443"},
		{"http://127.0.0.1:8426", "http://127.0.0.1:8426"},
		{"http://bob:pw@127.0.0.1:8426/x", "http://127.0.0.1:8426"},
		{"http://[::1]:9", "http://[::1]:9"},
		{"http://nodius.example", "http://nodius.example:80"},
	}
	for _, tt := range tests {
		got, err := Host(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Host(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "nodius.example", "ftp://x", "file:/g.json", "arango://db", "https://"} {
		if got, err := Host(bad); err == nil {
			t.Errorf("Host(%q) = %q, want an error", bad, got)
		}
	}
	// A refused URL is quoted without the secret it may carry.
	for _, bad := range []string{"ftp://bob:SECRET@x", "ftp://x/?token=SECRET", "arango://root:SECRET@db", "https://?access_token=SECRET"} {
		if _, err := Host(bad); err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Host(%q) error = %v; want one that hides the secret", bad, err)
		}
	}
	// http and https of one name are different servers, as are two ports.
	a, _ := Host("http://h.example")
	b, _ := Host("https://h.example")
	c, _ := Host("https://h.example:8443")
	if a == b || b == c {
		t.Errorf("host keys collide: %q %q %q", a, b, c)
	}
}

// Without a keyring the token goes to a file only its owner can read, in a
// directory only its owner can enter; each host gets its own token back.
func TestFileFallback(t *testing.T) {
	t.Parallel()
	for _, kr := range []Keyring{nil, &mapKeyring{fail: true}} {
		dir := filepath.Join(t.TempDir(), "nodius-ai")
		s := &Store{Dir: dir, Keyring: kr}
		where, err := s.Save("https://a.example:443", "alice", "tok-a", false)
		if err != nil {
			t.Fatal(err)
		}
		if where != s.Path() {
			t.Errorf("saved to %q, want the file %q", where, s.Path())
		}
		if _, err := s.Save("http://b.example:8426", "bob", "tok-b", false); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
		}
		di, _ := os.Stat(dir)
		if di.Mode().Perm() != 0o700 {
			t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
		}
		for host, want := range map[string]string{"https://a.example:443": "tok-a", "http://b.example:8426": "tok-b"} {
			c, ok, err := s.Token(host)
			if err != nil || !ok || c.Token != want || c.Where != InFile {
				t.Errorf("Token(%s) = %+v %v %v, want %s from the file", host, c, ok, err, want)
			}
		}
		for _, other := range []string{"https://a.example:8443", "http://a.example:80", "https://b.example:443"} {
			if c, ok, _ := s.Token(other); ok {
				t.Errorf("Token(%s) found %s's token", other, c.Host)
			}
		}
		if ok, err := s.Delete("https://a.example:443"); !ok || err != nil {
			t.Fatalf("Delete = %v %v", ok, err)
		}
		if _, ok, _ := s.Token("https://a.example:443"); ok {
			t.Error("a deleted token is still found")
		}
		b, _ := os.ReadFile(s.Path())
		if strings.Contains(string(b), "tok-a") {
			t.Error("the file still holds the deleted token")
		}
		if _, ok, _ := s.Token("http://b.example:8426"); !ok {
			t.Error("deleting one host lost another's token")
		}
	}
}

// With a keyring the file lists the server and user but never the token.
func TestKeyring(t *testing.T) {
	t.Parallel()
	kr := &mapKeyring{m: map[string]string{}}
	s := &Store{Dir: t.TempDir(), Keyring: kr}
	where, err := s.Save("https://a.example:443", "alice", "tok-a", false)
	if err != nil || where != "the system keyring" {
		t.Fatalf("Save = %q, %v", where, err)
	}
	b, _ := os.ReadFile(s.Path())
	if strings.Contains(string(b), "tok-a") || !strings.Contains(string(b), "alice") {
		t.Errorf("file = %s, want the user and no token", b)
	}
	c, ok, err := s.Token("https://a.example:443")
	if err != nil || !ok || c.Token != "tok-a" || c.Where != InKeyring {
		t.Errorf("Token = %+v %v %v", c, ok, err)
	}
	// --insecure-storage moves it to the file and out of the keyring.
	if _, err := s.Save("https://a.example:443", "alice", "tok-a2", true); err != nil {
		t.Fatal(err)
	}
	if len(kr.m) != 0 {
		t.Errorf("keyring still holds %v", kr.m)
	}
	c, _, _ = s.Token("https://a.example:443")
	if c.Token != "tok-a2" || c.Where != InFile {
		t.Errorf("after insecure save: %+v", c)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].User != "alice" {
		t.Errorf("List = %+v %v", list, err)
	}
}

// The last login is the default server; SetDefault chooses another login; deleting
// the default leaves none (no other login is promoted); the default is a host key
// in the file, never a token.
func TestDefault(t *testing.T) {
	t.Parallel()
	s := &Store{Dir: t.TempDir(), Keyring: &mapKeyring{m: map[string]string{}}}
	const a, b = "https://a.example:443", "http://b.example:8426"
	check := func(step, want string) {
		t.Helper()
		got, err := s.Default()
		if err != nil || got != want {
			t.Errorf("%s: Default = %q, %v; want %q", step, got, err, want)
		}
	}
	check("no login", "")
	if _, err := s.Save(a, "alice", "tok-a", false); err != nil {
		t.Fatal(err)
	}
	check("one login", a)
	if _, err := s.Save(b, "bob", "tok-b", true); err != nil {
		t.Fatal(err)
	}
	check("second login", b)
	if err := s.SetDefault(a); err != nil {
		t.Fatal(err)
	}
	check("switched", a)
	if err := s.SetDefault("https://c.example:443"); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("SetDefault of a server never logged in to = %v, want ErrNotLoggedIn", err)
	}
	check("refused switch", a)
	if _, err := s.Delete(b); err != nil {
		t.Fatal(err)
	}
	check("another server logged out", a)
	if _, err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	check("default logged out", "")
	if _, err := s.Save(b, "bob", "tok-b", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(a, "alice", "tok-a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	check("default logged out, another login left", "")

	// A file written before defaults existed has none; a default naming a login
	// that is gone (edited by hand) is none.
	if err := os.WriteFile(s.Path(), []byte(`{"default":"https://gone.example:443","hosts":{"http://b.example:8426":{"user":"bob","where":"file","token":"tok-b"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	check("dangling default", "")
}

// Every command reads the login file for the default server: one that is not a
// regular file, or a huge one, is refused at once with a sentence naming it,
// never read whole nor waited on (a FIFO would block the open forever).
func TestHostileFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", mkfifo, "named pipe"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "directory"},
		{"huge", func(p string) error {
			return os.WriteFile(p, []byte(`{"hosts":{}}`+strings.Repeat(" ", MaxFileBytes)), 0o600)
		}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Store{Dir: t.TempDir()}
			if err := tt.make(s.Path()); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Default()
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				// Unblock the reader so the test binary can end.
				if f, oerr := os.OpenFile(s.Path(), os.O_WRONLY, 0); oerr == nil {
					f.Close()
				}
				t.Fatal("Default is still waiting on the login file")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), s.Path()) {
				t.Errorf("Default = %v, want an error naming %s and saying %q", err, s.Path(), tt.want)
			}
		})
	}
}
