package servertest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type fixtureLine struct {
	Dir   string          `json:"dir"`
	Conn  string          `json:"conn"`
	Frame json.RawMessage `json:"frame"`
	Code  int             `json:"code"`
}

// start starts a seeded stand-in (NewSeeded).
func start(t *testing.T) *Server {
	t.Helper()
	s, err := NewSeeded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestReplay08 sends the editing connections' frames of the recording of the real
// server (08-editing-ws.jsonl) to the stand-in and checks that each connection
// receives what the real server sent it: acks, refusals with the server's
// sentences, broadcasts to the other user, missingMessages for a late client, and
// the sockets the server closed. saveStatus frames (times) and generateUniqueId
// (not spoken by the stand-in) are left out.
func TestReplay08(t *testing.T) {
	s := start(t)
	// The recordings were made once a web editor had claimed the graphs through
	// POST /api/sync (fixtures README); 09 shows the refusal without it.
	s.Claim("testgraph001")
	s.Claim("nosuchgraph")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := os.Open("../testdata/08-editing-ws.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	// The recording's harness had alice registered on sheets 0 and 1 all along, so
	// her first connection took her share of the broadcasts.
	harness, _, err := websocket.Dial(ctx, s.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer harness.CloseNow()
	for _, m := range []string{`{"type":"authenticate","token":"tok-alice"}`,
		`{"type":"registerUserOnGraph","_id":1,"graphKey":"testgraph001","sheetId":"0","name":"alice web","fromTimestamp":0}`,
		`{"type":"registerUserOnGraph","_id":2,"graphKey":"testgraph001","sheetId":"1","name":"alice web","fromTimestamp":0}`} {
		if err := harness.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := harness.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	go func() { // drain
		for {
			if _, _, err := harness.Read(ctx); err != nil {
				return
			}
		}
	}()

	conns := map[string]*websocket.Conn{}
	unique := map[string]int{} // generateUniqueId requests not answered yet, by conn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	checked := 0
	for n := 1; sc.Scan(); n++ {
		var l fixtureLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if l.Conn == "" || l.Conn == "ai" {
			continue
		}
		var frame map[string]any
		_ = json.Unmarshal(l.Frame, &frame)
		switch l.Dir {
		case "send":
			if frame["type"] == "generateUniqueId" {
				unique[l.Conn]++
				continue
			}
			if frame["type"] == "authenticate" {
				c, _, err := websocket.Dial(ctx, s.WSURL, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseNow()
				conns[l.Conn] = c
				frame["token"] = "tok-" + usernameOf(t, l.Conn)
			}
			if ts, ok := frame["fromTimestamp"].(float64); ok && ts != 0 {
				// The recorded clients registered from the moment they did it.
				frame["fromTimestamp"] = s.LastTime()
			}
			b, _ := json.Marshal(frame)
			if err := conns[l.Conn].Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatalf("line %d: send on %s: %v", n, l.Conn, err)
			}
		case "recv":
			if frame["type"] == "saveStatus" {
				continue
			}
			if unique[l.Conn] > 0 && (frame["type"] == "generateUniqueId" || frame["error"] == "Invalid JSON") {
				unique[l.Conn]-- // its answer (an error for two ids)
				continue
			}
			got := next(ctx, t, conns[l.Conn], n)
			if frame["type"] == "authResult" {
				delete(frame, "userId")
				delete(frame, "workspaces")
				delete(got, "userId")
				delete(got, "workspaces")
			}
			if !reflect.DeepEqual(got, frame) {
				t.Errorf("line %d (%s):\n got  %s\n want %s", n, l.Conn, jsonOf(got), jsonOf(frame))
			}
			checked++
		case "close":
			for {
				_, data, err := conns[l.Conn].Read(ctx)
				if err != nil {
					break
				}
				var m map[string]any
				if json.Unmarshal(data, &m) == nil && m["type"] == "saveStatus" {
					continue
				}
				t.Errorf("line %d: %s should be closed, got %s", n, l.Conn, data)
				break
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("only %d frames checked", checked)
	}
}

// usernameOf is who the recording says each editing connection was.
func usernameOf(t *testing.T, conn string) string {
	names := map[string]string{"ed1": "alice", "ed2": "carol", "ed3": "dave", "ed4": "bob", "ed5": "alice",
		"ed6": "carol", "ed7": "alice", "ed8": "alice", "ed9": "alice"}
	n, ok := names[conn]
	if !ok {
		t.Fatalf("unknown connection %s", conn)
	}
	return n
}

// next reads the connection's next frame that is not a saveStatus.
func next(ctx context.Context, t *testing.T, c *websocket.Conn, line int) map[string]any {
	t.Helper()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("line %d: read: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("line %d: %s", line, data)
		}
		if m["type"] != "saveStatus" {
			return m
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
