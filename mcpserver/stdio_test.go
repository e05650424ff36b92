package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/mcpserver"
)

// stdioSession is `nodius-ai mcp` over real pipes, spoken to line by line.
type stdioSession struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
}

func startStdio(t *testing.T) *stdioSession {
	t.Helper()
	cmd := exec.Command(binary(t), "mcp")
	cmd.Env = isolatedEnv(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &stdioSession{t: t, in: in, out: bufio.NewReaderSize(out, 1<<20), cmd: cmd}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := s.recv(); r["id"] != 0.0 || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("the server stopped reading: %v", err)
	}
}

// recv reads the next message the server writes.
func (s *stdioSession) recv() map[string]any {
	s.t.Helper()
	type lineErr struct {
		line string
		err  error
	}
	ch := make(chan lineErr, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		ch <- lineErr{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("the server stopped answering: %v", r.err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			s.t.Fatalf("the server wrote %q: %v", r.line, err)
		}
		return m
	case <-time.After(30 * time.Second):
		s.t.Fatal("no answer in 30 s")
		return nil
	}
}

// A malformed message over stdio gets a JSON-RPC error and the server stays up: the
// next request is answered.
func TestStdioMalformedMessages(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	deepObj := `{"jsonrpc":"2.0","id":5,"method":"ping","params":` + strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000) + "}"
	huge := `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"` + strings.Repeat("x", 16<<20) + `"}}`
	bad := []struct {
		name, line string
		code       float64 // the error code wanted; 0: any error
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{"not JSON at all", `hello`, -32700},
		{"a batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600},
		{"an empty batch", `[]`, -32600},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{"an array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"a boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600},
		{"a 16 MB line", huge, -32600},
		{"1,000 nested arrays", deep, -32600},
		{"1,000 nested objects", deepObj, -32600},
		{"a number", `42`, -32600},
		{"a string", `"ping"`, -32600},
		{"null", `null`, -32600},
		{"no version", `{"id":3,"method":"ping"}`, -32600},
		{"version 1.0", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600},
		{"two values on a line", `{"jsonrpc":"2.0","id":4,"method":"ping"} {"x":1}`, -32700},
		{"a method that is a number", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600},
		{"an unknown method", `{"jsonrpc":"2.0","id":8,"method":"no/such"}`, 0},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":5}`, 0},
	}
	s := startStdio(t)
	for i, b := range bad {
		s.send(b.line)
		r := s.recv()
		e, _ := r["error"].(map[string]any)
		if e == nil {
			t.Errorf("%s: no error answered: %v", b.name, r)
		} else if b.code != 0 && e["code"] != b.code {
			t.Errorf("%s: error %v, want code %v", b.name, e, b.code)
		}
		id := 1000 + i
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if r := s.recv(); r["id"] != float64(id) || r["result"] == nil {
			t.Fatalf("after %s, ping: %v", b.name, r)
		}
	}
}

// A resource read is bounded: a graph over the bound is refused whole, with the way
// to read it, and read page by page instead; every page and node fits the bound.
func TestResourceReadsAreBounded(t *testing.T) {
	t.Parallel()
	snap := gen.Graph(7, 1200, 1500)
	doc, err := json.Marshal(datasource.DocumentFromSnapshot(snap, nil))
	if err != nil {
		t.Fatal(err)
	}
	const limit = 512 << 10
	if len(doc) <= limit {
		t.Fatalf("fixture: the generated graph is %d bytes, not over %d", len(doc), limit)
	}
	f := newFixture(t, fixOpts{graphJSON: doc, maxRead: limit})
	graph := snap.Graph.Key
	_, err = f.cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: mcpserver.GraphURI(graph)})
	if err == nil || !strings.Contains(err.Error(), "too large to read whole") || !strings.Contains(err.Error(), mcpserver.PageURI(graph, 3)) {
		t.Fatalf("whole read of a graph over the bound: %v", err)
	}
	seen := map[string]bool{}
	for p := 1; p <= 3; p++ {
		res, err := f.cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: mcpserver.PageURI(graph, p)})
		if err != nil {
			t.Fatalf("page %d: %v", p, err)
		}
		text := res.Contents[0].Text
		if len(text) > limit {
			t.Errorf("page %d is %d bytes, over %d", p, len(text), limit)
		}
		var page struct {
			Page, Pages int
			Nodes       []struct {
				Key string `json:"_key"`
			}
		}
		if err := json.Unmarshal([]byte(text), &page); err != nil || page.Page != p || page.Pages != 3 {
			t.Fatalf("page %d: %v %d/%d", p, err, page.Page, page.Pages)
		}
		for _, n := range page.Nodes {
			seen[n.Key] = true
		}
	}
	if len(seen) != len(snap.Nodes) {
		t.Errorf("the pages hold %d nodes, the graph %d", len(seen), len(snap.Nodes))
	}
	if _, err := f.cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: mcpserver.PageURI(graph, 4)}); err == nil || !strings.Contains(err.Error(), "no page 4") {
		t.Errorf("page 4 of 3: %v", err)
	}
	n := snap.Nodes[0].Key
	if res, err := f.cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: mcpserver.NodeURI(graph, n)}); err != nil || !strings.Contains(res.Contents[0].Text, n) {
		t.Errorf("node %s: %v", n, err)
	}
}
