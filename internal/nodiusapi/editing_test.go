package nodiusapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

func dial(t *testing.T, addr, token string) *nodiusapi.Editor {
	t.Helper()
	c, err := nodiusapi.DialEditor(context.Background(), addr, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: token}, AckTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRefusals: each refusal recorded from the real server (08) comes back as an
// error naming it, the "not found" of a node of another sheet included.
func TestRefusals(t *testing.T) {
	s, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Claim("testgraph001")
	s.Claim("nosuchgraph")
	ctx := context.Background()
	in := func(js string) []json.RawMessage { return []json.RawMessage{json.RawMessage(js)} }
	c := dial(t, s.WSURL, "tok-alice")
	if _, err := c.Register(ctx, "testgraph001", "0", "t", 0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"bad op", func() error {
			return c.ApplyInstructions(ctx, in(`{"i":{"o":99,"p":["posX"],"v":1},"sheetId":"0","nodeId":"root"}`))
		}, "Invalid instruction:Invalid operation type"},
		{"node of another sheet", func() error {
			return c.ApplyInstructions(ctx, in(`{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"0","nodeId":"sort_stats"}`))
		}, "Node with id sort_stats not found"},
		{"unknown sheet", func() error {
			return c.ApplyInstructions(ctx, in(`{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"9","nodeId":"root"}`))
		}, "Sheet with id 9 not found"},
		{"missing intermediate key", func() error {
			return c.ApplyInstructions(ctx, in(`{"i":{"o":1,"p":["data","x","y"],"v":1},"sheetId":"0","nodeId":"root"}`))
		}, "Key not found: data at path "},
		{"duplicate key", func() error {
			return c.BatchCreate(ctx, "0", in(`{"_key":"fetch_api","graphKey":"testgraph001","sheet":"0","type":"log-node"}`), nil)
		}, "Node with _key fetch_api already exists"},
		{"bad edge end", func() error {
			return c.BatchCreate(ctx, "0", nil, in(`{"_key":"e_bad","graphKey":"testgraph001","sheet":"0","source":"root","sourceHandle":"0","target":"nope","targetHandle":"0"}`))
		}, "Edge e_bad has invalid target: node nope not found"},
		{"nothing to delete", func() error { return c.BatchDelete(ctx, "0", nil, nil) }, "No elements to delete"},
		{"unknown graph", func() error {
			_, err := dial(t, s.WSURL, "tok-alice").Register(ctx, "nosuchgraph", "0", "t", 0)
			return err
		}, "Invalid JSON"},
		{"another workspace", func() error {
			_, err := dial(t, s.WSURL, "tok-bob").Register(ctx, "testgraph001", "0", "t", 0)
			return err
		}, "Access denied to this graph's workspace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			var re *nodiusapi.RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Message, tc.want) {
				t.Errorf("err = %v, want a refusal saying %q", err, tc.want)
			}
		})
	}

	// An edit without registering: the server closes the socket.
	err = dial(t, s.WSURL, "tok-alice").ApplyInstructions(ctx, in(`{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"0","nodeId":"root"}`))
	if !errors.Is(err, nodiusapi.ErrClosed) {
		t.Errorf("edit without registering: %v, want the socket closed", err)
	}
}

// TestSilentServer: an acknowledgement that never comes is a timeout saying the
// change may or may not be applied.
func TestSilentServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		_, _, _ = ws.Read(r.Context())
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"authResult","success":true,"userId":"u"}`))
		for {
			if _, _, err := ws.Read(r.Context()); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, err := nodiusapi.DialEditor(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"),
		nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "t"}, AckTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.BatchDelete(context.Background(), "0", []string{"a"}, nil)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.Timeout || !strings.Contains(fe.Message, "may or may not") {
		t.Errorf("err = %v, want a timeout", err)
	}
}

// TestFramesAndPing: OnFrame sees, in order, the registration's answer, the
// saveStatus announcement and the acknowledgement of an edit (named by the
// request's type); Ping is answered on a registered socket, and the server closes
// one that is not registered, which Ping reports.
func TestFramesAndPing(t *testing.T) {
	s, err := servertest.NewSeeded(servertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Claim("testgraph001")
	ctx := context.Background()
	frames := make(chan nodiusapi.Frame, 10)
	c, err := nodiusapi.DialEditor(ctx, s.WSURL, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-alice"}, AckTimeout: 2 * time.Second,
		OnFrame: func(f nodiusapi.Frame) { frames <- f }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Register(ctx, "testgraph001", "0", "t", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyInstructions(ctx, []json.RawMessage{json.RawMessage(`{"i":{"o":1,"p":["posX"],"v":1},"sheetId":"0","nodeId":"root"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping on a registered socket: %v", err)
	}
	var got []string
	for len(frames) > 0 {
		f := <-frames
		got = append(got, f.Type+map[bool]string{true: " ack", false: ""}[f.Ack])
	}
	if want := "registerUserOnGraph ack,saveStatus,applyInstructionToGraph ack"; strings.Join(got, ",") != want {
		t.Errorf("frames %q, want %q", strings.Join(got, ","), want)
	}

	idle := dial(t, s.WSURL, "tok-alice")
	if err := idle.Ping(ctx); err == nil {
		t.Error("ping on an unregistered socket answered")
	}
	if idle.Err() == nil {
		t.Error("the socket the server closed is not reported closed")
	}
}
