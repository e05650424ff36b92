package mcpserver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// CheckLoopback accepts only an address of this machine's loopback interface
// (127.0.0.0/8, ::1, localhost) with a port: the HTTP transport gives whoever reaches
// it the graph and a way to file proposals, so it is never offered to the network.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--http takes a loopback address with a port, such as 127.0.0.1:8765 (got %q)", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s is not a loopback address: nodius-ai serves MCP over HTTP only to this machine — use 127.0.0.1:PORT (or [::1]:PORT)", addr)
}

// NewToken returns a random bearer token (256 bits, URL-safe).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a bearer token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// RequireBearer lets through only requests that carry "Authorization: Bearer token";
// the others get 401 with a sentence saying what to send.
func RequireBearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nodius-ai"`)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, "nodius-ai: missing or wrong bearer token — send the token nodius-ai mcp printed (or was given with --token) as 'Authorization: Bearer TOKEN'")
			return
		}
		next.ServeHTTP(w, r)
	})
}
