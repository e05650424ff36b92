package arangourl_test

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango/arangourl"
	"github.com/nodius/nodius-ai/internal/fault"
)

// FuzzParseURL: no source URL makes the parser panic, and neither its errors nor the
// masked form of the URL ever show the password, however malformed the URL.
func FuzzParseURL(f *testing.F) {
	for _, s := range [][3]string{{"arango://root:", "@localhost:8529/nodius?workspace=w", "PW"}, {"arango//root:", "@host", "PW"},
		{"arangos:/u:", "@h", "s3cret"}, {"server:http//u:", "@host", "PW"}, {"arango://u:", "@[::1]:x/db/extra", "p/w"}} {
		f.Add(s[0], s[2], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, password, suffix string) {
		if len(password) < 4 || strings.ContainsAny(password, "@:/") || strings.Contains(prefix+suffix, password) ||
			strings.Contains("arango://root:***@localhost:8529/nodius?workspace=", password) {
			return // too short or not a password the URL's syntax can delimit
		}
		raw := prefix + password + suffix
		if !strings.HasPrefix(suffix, "@") || strings.LastIndex(prefix, ":") < strings.LastIndex(prefix, "/") || !strings.Contains(prefix, ":") {
			return // the password must sit where credentials do: after USER: and before @
		}
		if _, err := arangourl.Parse(raw); err != nil && strings.Contains(err.Error(), password) {
			t.Fatalf("Parse(%q) error shows the password: %v", raw, err)
		}
		if m := fault.MaskCredentials(raw); strings.Contains(m, password) {
			t.Fatalf("MaskCredentials(%q) = %q shows the password", raw, m)
		}
	})
}
