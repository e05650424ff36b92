package fault_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/nodius/nodius-ai/internal/fault"
)

func TestAsAndIs(t *testing.T) {
	t.Parallel()
	base := &fault.Error{Code: fault.Config, Message: "bad source"}
	wrapped := fmt.Errorf("opening: %w", base)
	if fe, ok := fault.As(wrapped); !ok || fe != base {
		t.Fatalf("As(%v) = %v, %v", wrapped, fe, ok)
	}
	if !fault.Is(wrapped, fault.Config) || fault.Is(wrapped, fault.Network) || fault.Is(errors.New("x"), fault.Config) {
		t.Error("Is does not match the code in the chain")
	}
	if got := base.Error(); got != "config_error: bad source" {
		t.Errorf("Error() = %q", got)
	}
}

// TestLeaves checks that the data sources and the configuration never import the agent:
// they classify their failures with this package instead.
func TestLeaves(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}",
		"github.com/nodius/nodius-ai/datasource/...", "github.com/nodius/nodius-ai/config", "github.com/nodius/nodius-ai/internal/fault").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/nodius/nodius-ai/agent") || strings.HasPrefix(p, "github.com/nodius/nodius-ai/tui") || strings.HasPrefix(p, "github.com/nodius/nodius-ai/cmd") {
			t.Errorf("a data source or the config depends on %s", p)
		}
	}
}

func TestMaskCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"server:http//u:PW@host", "server:http//u:***@host"},
		{"arango//root:PW@host", "arango//root:***@host"},
		{"arango://root:PW@host:8529/db?workspace=w", "arango://root:***@host:8529/db?workspace=w"},
		{"arangos:/root:p/w@host", "arangos:/root:***@host"},
		{"arango//root:p/w@x@host", "arango//root:***@host"},
		{"server:u:PW@host", "server:***@host"},
		{"https://TOKEN@host/x", "https://***@host/x"},
		{"https://u:PW@[::1", "https://u:***@[::1"},
		{":@PW@/@", ":***@"}, // found by FuzzParseURL: a password that begins with '@'
		{"server:http:/u:@PW@h/@", "server:http:/u:***@"},
		{"demo", "demo"},
		{"file:/tmp/graph.json", "file:/tmp/graph.json"},
		// Well-formed URLs, after a prefix too, and their secret query parameters.
		{"server:https://bob:PW@nodius.example/api", "server:https://bob:***@nodius.example/api"},
		{"server:https://TOKEN@nodius.example", "server:https://***@nodius.example"},
		{"https://nodius.example/api?graph=g&token=TOKEN&Api_Key=TOKEN", "https://nodius.example/api?graph=g&token=***&Api_Key=***"},
		{"https://nodius.example/#access_token=TOKEN&x=1", "https://nodius.example/#access_token=***&x=1"},
		{"arango://root:PW@[::1]:8529/db", "arango://root:***@[::1]:8529/db"},
		{"wss://nodius.example/ws", "wss://nodius.example/ws"},
		// Malformed, with a secret in the query.
		{"https://nodius.example/%zz?token=TOKEN", "https://nodius.example/%zz?token=***"},
		{"arango://root:1?PW@host", "arango://root:***@host"},
	}
	for _, tt := range tests {
		got := fault.MaskCredentials(tt.in)
		if got != tt.want {
			t.Errorf("MaskCredentials(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, "PW") || strings.Contains(got, "p/w") || strings.Contains(got, "TOKEN") {
			t.Errorf("MaskCredentials(%q) leaks: %q", tt.in, got)
		}
		if again := fault.MaskCredentials(got); again != got {
			t.Errorf("MaskCredentials is not stable: %q → %q → %q", tt.in, got, again)
		}
	}
}

func TestStorageRefusal(t *testing.T) {
	t.Parallel()
	at := func(errno syscall.Errno) error {
		return fmt.Errorf("writing graph: %w", &fs.PathError{Op: "write", Path: "/srv/graphs/.g.json.tmp-1", Err: errno})
	}
	tests := []struct {
		err       error
		what, fix string
	}{
		{at(syscall.ENOSPC), "the disk holding /srv/graphs is full (no space left on device)", "free some space"},
		{at(syscall.EDQUOT), "your quota on the disk holding /srv/graphs is used up (disk quota exceeded)", "free some space or raise the quota"},
		{at(syscall.EROFS), "the file system holding /srv/graphs is mounted read-only (read-only file system)", "remount it read-write or use a file on another disk"},
		{at(syscall.EFBIG), "a file on the disk holding /srv/graphs went over the file size limit (file too large)", "raise the limit (ulimit -f)"},
		{syscall.ENOSPC, "the disk is full (no space left on device)", "free some space"},
	}
	for _, tt := range tests {
		what, fix, ok := fault.StorageRefusal(tt.err)
		if !ok || what != tt.what || fix != tt.fix {
			t.Errorf("StorageRefusal(%v) = %q, %q, %v; want %q, %q", tt.err, what, fix, ok, tt.what, tt.fix)
		}
	}
	for _, err := range []error{errors.New("no space left on device"), at(syscall.EACCES), nil} {
		if _, _, ok := fault.StorageRefusal(err); ok {
			t.Errorf("StorageRefusal(%v) recognised a refusal", err)
		}
	}
}
