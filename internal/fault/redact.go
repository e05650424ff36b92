package fault

import (
	"net/url"
	"strings"
)

// MaskCredentials is the one credential redactor: every message, log line or screen
// that shows a URL or a data source passes it through here. It hides the password or
// token of anything that looks like a URL with credentials, however malformed
// ("server:http//u:PW@host", "arango//root:PW@host", "arangos:/root:p/w@host"), and
// the value of every query parameter whose name says it may hold a secret (token,
// key, password…), so that nothing a user typed as a secret is ever printed. The user
// name stays when it can be told apart ("root:***@host"): it says which account was
// used. A URL that parses is masked as url.URL.Redacted masks it, with "***" and its
// query too; the result is stable (masking it again changes nothing).
func MaskCredentials(s string) string {
	if m, ok := maskURL(s); ok {
		return m
	}
	return maskSecretParams(maskEveryUserinfo(maskUserinfo(s)))
}

// maskURL masks a URL that parses whole, after an optional prefix such as "server:".
// It reports false when s does not parse, or parses with its '@' somewhere user info
// cannot be ("arango://u:1?w@host": a password cut at '?'), for the string rules.
func maskURL(s string) (string, bool) {
	i := strings.Index(s, "://")
	if i < 0 {
		return "", false
	}
	prefix, raw := "", s
	if k := strings.LastIndex(s[:i], ":"); k >= 0 {
		prefix, raw = s[:k+1], s[k+1:]
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.User == nil && strings.Contains(raw, "@")) {
		return "", false
	}
	user := ""
	if u.User != nil {
		name := u.User.Username()
		_, hasPassword := u.User.Password()
		switch {
		case hasPassword:
			user = url.User(name).String() + ":***@"
		case name != "":
			user = "***@" // a token alone
		}
		u.User = nil
	}
	u.RawQuery = maskPairs(u.RawQuery)
	if u.Fragment != "" {
		u.RawFragment = maskPairs(u.EscapedFragment())
		if f, err := url.PathUnescape(u.RawFragment); err == nil {
			u.Fragment = f
		}
	}
	out := u.String() // scheme://host...: the user info goes back after the "//"
	return prefix + out[:len(u.Scheme)+3] + user + out[len(u.Scheme)+3:], true
}

// maskSecretParams masks the secret query parameters of a string that is not a URL.
func maskSecretParams(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	return s[:q+1] + maskPairs(s[q+1:])
}

// maskPairs masks the value of each name=value pair (separated by '&') whose name may
// hold a credential; a fragment after '#' is masked the same way.
func maskPairs(query string) string {
	if query == "" {
		return query
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	pairs := strings.Split(query, "&")
	for i, p := range pairs {
		if name, _, ok := strings.Cut(p, "="); ok && SecretParam(name) {
			pairs[i] = name + "=***"
		}
	}
	out := strings.Join(pairs, "&")
	if hasFrag {
		out += "#" + maskPairs(frag)
	}
	return out
}

// SecretParam reports whether a URL query parameter may hold a credential, by its name.
func SecretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, s := range []string{"token", "key", "secret", "pass", "pwd", "auth", "jwt", "sig", "cred", "session"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// maskEveryUserinfo masks what a malformed URL with several '@' (or a leading ':')
// may still show after maskUserinfo: a password can hold '@' and '/' itself
// ("USER:0@SECRET@/x"), so everything from the first "USER:" to the last '@' is
// masked. It may hide more than the password; it never shows part of one.
func maskEveryUserinfo(s string) string {
	if strings.Count(s, "@") < 2 && !strings.HasPrefix(s, ":") {
		return s
	}
	at := strings.LastIndex(s, "@")
	for i := 0; i < at; i++ {
		if s[i] != ':' || strings.HasPrefix(s[i:], "://") {
			continue
		}
		if s[i+1:at] == "***" || i+1 == at {
			return s
		}
		return s[:i+1] + "***" + s[at:]
	}
	return s
}

// maskUserinfo masks the credentials before the last '@' of a URL, however
// malformed its scheme.
func maskUserinfo(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	start := 0
	slashes := strings.Index(s[:at], "//")
	switch {
	case slashes >= 0:
		start = slashes + 2
	case strings.Contains(s[:at], "/"):
		start = strings.Index(s[:at], "/") + 1
	}
	cred := s[start:at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		return s[:start] + user + ":***" + s[at:]
	}
	if slashes >= 0 && cred != "" {
		return s[:start] + "***" + s[at:] // a token alone
	}
	return s
}
