package nodiusapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// syncServer answers POST /api/sync with answer, and records the bearer.
func syncServer(t *testing.T, answer string, auth *string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/sync" {
			http.NotFound(w, r)
			return
		}
		if auth != nil {
			*auth = r.Header.Get("Authorization")
		}
		var body struct {
			InstanceID string `json:"instanceId"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.InstanceID != "graph-g1" {
			w.WriteHeader(500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSocketAddressFollowsSync(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ answer, want string }{
		{`{"host":"127.0.0.1","port":20426,"secure":false}`, "ws://127.0.0.1:20426/"},
		{`{"host":"nodius.example","port":443,"secure":true,"path":"/ws"}`, "wss://nodius.example:443/ws"},
		{`{"host":"10.0.0.2","port":"9426"}`, "ws://10.0.0.2:9426/"}, // a peer: no secure, no path
	} {
		var auth string
		srv := syncServer(t, tc.answer, &auth)
		c, err := nodiusapi.New(nodiusapi.Options{BaseURL: srv.URL, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.SocketAddress(context.Background(), nodiusapi.GraphInstance("g1"))
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.answer, got, err, tc.want)
		}
		if auth != "Bearer tok" {
			t.Errorf("/api/sync sent Authorization %q", auth)
		}
	}
}

// A server reached over https keeps TLS for a peer whose answer carries no
// secure flag: the token is never sent in clear text.
func TestHTTPSKeepsTLSForAPeer(t *testing.T) {
	t.Parallel()
	c, err := nodiusapi.New(nodiusapi.Options{BaseURL: "https://nodius.example.com", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Address(nodiusapi.Route{Host: "10.0.0.2", Port: 19426}); got != "wss://10.0.0.2:19426/" {
		t.Fatalf("peer address %s", got)
	}
}

// A configured WebSocket address replaces the answer, and the graph is still
// claimed; a server without /api/sync (404) is then used as configured.
func TestOverrideStillClaims(t *testing.T) {
	t.Parallel()
	var auth string
	srv := syncServer(t, `{"host":"127.0.0.1","port":1}`, &auth)
	c, _ := nodiusapi.New(nodiusapi.Options{BaseURL: srv.URL, Token: "tok", WSURL: "wss://proxy.example/ws"})
	got, err := c.SocketAddress(context.Background(), nodiusapi.GraphInstance("g1"))
	if err != nil || got != "wss://proxy.example/ws" || auth == "" {
		t.Fatalf("%q %v (claimed: %v)", got, err, auth != "")
	}
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	c, _ = nodiusapi.New(nodiusapi.Options{BaseURL: none.URL, Token: "tok", WSURL: "wss://proxy.example/ws"})
	if got, err := c.SocketAddress(context.Background(), "graph-g1"); err != nil || got != "wss://proxy.example/ws" {
		t.Fatalf("without /api/sync: %q %v", got, err)
	}
	c, _ = nodiusapi.New(nodiusapi.Options{BaseURL: none.URL, Token: "tok"})
	if _, err := c.SocketAddress(context.Background(), "graph-g1"); err == nil {
		t.Fatal("no /api/sync and no override: no error")
	}
	if _, err := nodiusapi.New(nodiusapi.Options{BaseURL: none.URL, WSURL: "http://x"}); err == nil {
		t.Fatal("an override that is not ws:// was accepted")
	}
}

// One classification, one wording: the code by status, the server in use named.
func TestStatusErrorNamesTheServer(t *testing.T) {
	t.Parallel()
	for status, code := range map[int]fault.Code{401: fault.Auth, 403: fault.Auth, 404: fault.InvalidRequest, 429: fault.RateLimit, 502: fault.ServerError, 400: fault.InvalidRequest} {
		e := nodiusapi.StatusError("https://nodius.example.com", status, []byte(`{"error":"Unauthorized","message":"Invalid token"}`), "listing", true)
		if e.Code != code || e.Status != status || !strings.Contains(e.Message, "https://nodius.example.com") {
			t.Errorf("%d: %+v", status, e)
		}
		if status == 401 && (!strings.Contains(e.Message, "Invalid token") || !strings.Contains(e.Message, "auth login --server https://nodius.example.com")) {
			t.Errorf("401 wording: %s", e.Message)
		}
		if e.Retryable != (status == 429 || status >= 500) {
			t.Errorf("%d retryable %v", status, e.Retryable)
		}
	}
}

// A redirect to another origin (here: another port of the same host, which Go's
// own policy would follow with the Authorization header) is not followed.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	t.Parallel()
	var leaked string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked = r.Header.Get("Authorization") }))
	defer other.Close()
	same := 0
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, "/there", http.StatusTemporaryRedirect)
		case "/there":
			same++
			w.WriteHeader(200)
		default:
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	c, _ := nodiusapi.New(nodiusapi.Options{BaseURL: srv.URL, Token: "secret"})
	if _, err := c.Call(context.Background(), http.MethodGet, "/here", nil, ""); err != nil || same != 1 {
		t.Fatalf("a redirect within the origin: %v (%d)", err, same)
	}
	_, err := c.Call(context.Background(), http.MethodPost, "/away", map[string]string{}, "")
	if err == nil || !strings.Contains(err.Error(), "redirected") || leaked != "" {
		t.Fatalf("error %v, the other origin got %q", err, leaked)
	}
}
