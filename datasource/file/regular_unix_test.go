//go:build unix

package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nodius/nodius-ai/datasource/file"
)

// A FIFO, a device or an oversized file is refused at once with a sentence saying
// why: reading /dev/zero or a FIFO would never end (or block until a writer comes).
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "graph.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(file.MaxSize + 1); err != nil { // sparse: no disk used
		t.Skipf("truncate: %v", err)
	}
	f.Close()
	link := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"fifo", fifo, "not a regular file (a named pipe)"},
		{"symlink to /dev/zero", link, "not a regular file (a character device)"},
		{"too large", big, "more than the 1073741824"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ name, path, want string }{"/dev/zero", "/dev/zero", "not a regular file"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := file.Open(ctx, c.path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open: %v, want an error containing %q", err, c.want)
			}
			if _, err := file.OpenLazy(ctx, c.path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OpenLazy: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// A graph file replaced by a FIFO after it was opened makes the next read fail
// instead of blocking.
func TestReplacedByFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.json")
	if err := os.WriteFile(path, []byte(`{"graph":{"_key":"g"},"nodes":[],"edges":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := src.Reload(ctx); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Reload: %v, want not a regular file", err)
	}
}
