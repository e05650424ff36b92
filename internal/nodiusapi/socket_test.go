package nodiusapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

func server(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m struct{ Type, Token string }
		_ = json.Unmarshal(b, &m)
		write := func(s string) { _ = c.Write(ctx, websocket.MessageText, []byte(s)) }
		switch m.Token {
		case "good":
			write(`{"type":"saveStatus"}`) // a broadcast before the answer is skipped
			write(`{"type":"authResult","success":true,"userId":"u1","username":"alice","workspaces":["w"]}`)
			_, _, _ = c.Read(ctx)
		case "slow":
			write(`{"type":"authResult","success":false,"error":"Authentication timeout"}`)
			c.Close(4002, "Authentication timeout")
		case "drop":
			c.Close(4001, "Authentication failed")
		default:
			write(`{"type":"authResult","success":false,"error":"Invalid token"}`)
			c.Close(4001, "Authentication failed")
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

func TestDial(t *testing.T) {
	t.Parallel()
	addr := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, res, err := nodiusapi.DialSocket(ctx, addr, nodiusapi.SocketOptions{Token: "good"})
	if err != nil || res.Username != "alice" || res.UserID != "u1" {
		t.Fatalf("%+v %v", res, err)
	}
	conn.CloseNow()

	for _, tc := range []struct {
		token     string
		code      fault.Code
		retryable bool
		word      string
	}{
		{"bad-secret-token", fault.Auth, false, "Invalid token"},
		{"drop", fault.Auth, false, "refused the token"},
		{"slow", fault.Timeout, true, "timed out"},
		{"", fault.Auth, false, "no token"},
	} {
		// An authentication timeout of an hour: only the server's answer (or its
		// close) can end the handshake within ctx's 5 s, so a refusal that is not
		// read as one fails the checks below with ctx's deadline instead.
		_, _, err := nodiusapi.DialSocket(ctx, addr, nodiusapi.SocketOptions{Token: tc.token, AuthTimeout: time.Hour})
		fe, ok := fault.As(err)
		if !ok || fe.Code != tc.code || fe.Retryable != tc.retryable || !strings.Contains(fe.Message, tc.word) {
			t.Fatalf("%q: %v", tc.token, err)
		}
		if tc.token != "" && strings.Contains(err.Error(), tc.token) {
			t.Fatalf("the token is in the error: %v", err)
		}
	}
}

func TestDialUnreachable(t *testing.T) {
	t.Parallel()
	_, _, err := nodiusapi.DialSocket(context.Background(), "ws://127.0.0.1:1/ws", nodiusapi.SocketOptions{Token: "t", DialTimeout: time.Second})
	fe, ok := fault.As(err)
	if !ok || (fe.Code != fault.Network && fe.Code != fault.Timeout) || !fe.Retryable {
		t.Fatalf("%v", err)
	}
}

func TestApplyActionDecodes(t *testing.T) {
	t.Parallel()
	var a nodiusapi.ApplyAction
	raw := `{"instructions":[{"i":{"o":1,"p":["posX"],"v":555},"sheetId":"0","nodeId":"fetch_api","animatePos":true}],"nodesToCreate":[],"edgesToCreate":[],"nodeKeysToDelete":["error_handler"],"edgeKeysToDelete":[],"sheetId":"0"}`
	if err := json.Unmarshal([]byte(raw), &a); err != nil || len(a.Instructions) != 1 || a.NodeKeysToDelete[0] != "error_handler" || a.SheetID != "0" || a.Empty() {
		t.Fatalf("%+v %v", a, err)
	}
	if !(nodiusapi.ApplyAction{}).Empty() {
		t.Fatal("an empty action is not empty")
	}
	if (nodiusapi.ApplyReport{}).Complete() != true || (nodiusapi.ApplyReport{Failed: "x"}).Complete() {
		t.Fatal("Complete")
	}
}
