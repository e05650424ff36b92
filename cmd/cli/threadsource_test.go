package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A thread records its source without credentials: no password, token, user info
// of a server URL or secret query parameter survives, however malformed the URL,
// and the parts that tell sources apart stay.
func TestSourceSpecStripsCredentials(t *testing.T) {
	t.Parallel()
	secrets := []string{"s3cr3t", "p4ss", "tok123", "k3y"}
	abs, _ := filepath.Abs("g.json")
	tests := []struct{ in, want string }{
		{"", "demo"},
		{"demo", "demo"},
		{"file:g.json", "file:" + abs},
		{"file:/srv/g.json", "file:/srv/g.json"},

		{"arango://root:s3cr3t@db.local:8529/nodius?workspace=w1", "arango://root@db.local:8529/nodius?workspace=w1"},
		{"arangos://root:s3cr3t@db.local/nodius?workspace=w1&insecure=true", "arangos://root@db.local/nodius?insecure=true&workspace=w1"},
		{"arango://:s3cr3t@db.local/nodius", "arango://db.local/nodius"},
		{"arango://root@db.local/nodius", "arango://root@db.local/nodius"},
		{"arango://db.local/nodius?workspace=w1&password=s3cr3t&jwt=tok123", "arango://db.local/nodius?workspace=w1"},
		{"arango://root:s3cr3t@db.local/nodius#tok123", "arango://root@db.local/nodius"},
		// Malformed: the password holds characters a URL does not allow there.
		{"arango://root:s3%zzcr3t@db.local/nodius?workspace=w1", "arango://db.local/nodius"},
		{"arango://root:s3cr3t@p4ss@db.local/nodius", "arango://root@db.local/nodius"},
		{"arango://root:s3/cr3t@db.local/nodius", "arango://db.local/nodius"},
		{"arango://root:s3?cr3t@db.local/nodius", "arango://db.local/nodius"},
		{"arango://root:s3#cr3t@db.local/nodius", "arango://db.local/nodius"},
		{"arango://root:1?s3cr3t@db.local/nodius", "arango://db.local/nodius"},
		{"arango://root:s3cr3t@", "arango://"},
		{"arango://root:s3cr3t@[::1/nodius", "arango://[::1/nodius"},

		{"server:https://nodius.example/api", "server:https://nodius.example/api"},
		{"server:https://bob:tok123@nodius.example/api", "server:https://nodius.example/api"},
		{"server:https://tok123@nodius.example", "server:https://nodius.example"},
		{"server:https://nodius.example/api?token=tok123&graph=g", "server:https://nodius.example/api?graph=g"},
		{"server:https://nodius.example/?access_token=tok123&api_key=k3y&apikey=k3y&Auth=tok123&sig=tok123&x-api-key=k3y", "server:https://nodius.example/"},
		{"server:https://nodius.example/#token=tok123", "server:https://nodius.example/"},
		{"server:http://bob:p4ss@127.0.0.1:8080", "server:http://127.0.0.1:8080"},
		// Malformed.
		{"server:https://bob:p%zz4ss@nodius.example/api", "server:https://nodius.example/api"},
		{"server:https://bob:s3cr3t@p4ss@nodius.example", "server:https://nodius.example"},
		{"server:tok123@nodius.example", "server:nodius.example"},
		{"server:https://nodius.example/%zz?token=tok123", "server:https://nodius.example/%zz"},
		{"server:://tok123@", "server:://"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := sourceSpec(tt.in)
			if got != tt.want {
				t.Errorf("sourceSpec(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, s := range secrets {
				if strings.Contains(got, s) {
					t.Errorf("sourceSpec(%q) = %q keeps the secret %q", tt.in, got, s)
				}
			}
			if again := sourceSpec(got); again != got {
				t.Errorf("sourceSpec is not stable: %q → %q → %q", tt.in, got, again)
			}
		})
	}
}
