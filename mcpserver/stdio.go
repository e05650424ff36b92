package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio connection ends the session on the first message it cannot read
// (invalid JSON, a line over its limit, an id it does not take): one bad line from a
// client, or from whatever else writes to the pipe, would stop the server. This one
// reads newline-delimited messages itself and answers each bad one with a JSON-RPC
// error, as the specification says, then reads on.

// MaxMessageBytes bounds one message read over stdio; a longer line is skipped
// (never held whole in memory) and answered with an error.
const MaxMessageBytes = 4 << 20

// maxDepth bounds how deeply a message may nest arrays and objects: MCP messages
// nest a few levels; a decoder walking thousands costs stack and time for nothing.
const maxDepth = 64

// StdioTransport serves one session over newline-delimited JSON on in and out
// (standard input and output), answering a malformed message with a JSON-RPC error
// instead of ending the session.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	return &lineTransport{in: in, out: out, max: MaxMessageBytes}
}

type lineTransport struct {
	in  io.Reader
	out io.Writer
	max int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, incoming: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop(t.in, t.max)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// lineConn is an mcp.Connection over newline-delimited JSON.
type lineConn struct {
	writeMu sync.Mutex
	out     io.Writer

	incoming  chan readResult
	closed    chan struct{}
	closeOnce sync.Once
}

// readLoop reads lines until in ends, handing good messages to Read and answering
// bad ones itself.
func (c *lineConn) readLoop(in io.Reader, max int) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, max)
		if len(line) > 0 || tooLong {
			var msg jsonrpc.Message
			var bad *jsonrpc.Error
			var id jsonrpc.ID
			if tooLong {
				bad = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("message too large: a message is at most %d MiB on one line", max>>20)}
			} else {
				msg, id, bad = decode(line)
			}
			if bad != nil {
				if werr := c.writeResponse(&jsonrpc.Response{ID: id, Error: bad}); werr != nil {
					c.deliver(readResult{err: werr})
					return
				}
			} else if !c.deliver(readResult{msg: msg}) {
				return
			}
		}
		if err != nil {
			c.deliver(readResult{err: err})
			return
		}
	}
}

// deliver hands a result to Read; false once the connection is closed.
func (c *lineConn) deliver(r readResult) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// readLine returns the next line without its end (CR LF or LF), blanks trimmed. A
// line longer than max is read to its end and dropped: tooLong is set.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, rerr := r.ReadLine()
		if !tooLong {
			if len(buf)+len(chunk) > max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if rerr != nil {
			return bytes.TrimSpace(buf), tooLong, rerr
		}
		if !isPrefix {
			return bytes.TrimSpace(buf), tooLong, nil
		}
	}
}

// decode reads one message, or says what is wrong with it (and the id to answer, when
// the request has a usable one).
func decode(line []byte) (jsonrpc.Message, jsonrpc.ID, *jsonrpc.Error) {
	if d := depth(line); d > maxDepth {
		return nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "message nested too deeply (more than 64 levels)"}
	}
	if !json.Valid(line) {
		return nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the line is not one JSON value"}
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "batches are not supported: send one message per line"}
	default:
		return nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a message is a JSON object"}
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &head)
	id := usableID(head.ID)
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	return msg, id, nil
}

// usableID is a request's id when it is a string or an integer (what JSON-RPC
// allows), else the null id.
func usableID(raw json.RawMessage) jsonrpc.ID {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}
	}
	switch x := v.(type) {
	case string:
		id, _ := jsonrpc.MakeID(x)
		return id
	case float64:
		if x == float64(int64(x)) {
			id, _ := jsonrpc.MakeID(x)
			return id
		}
	}
	return jsonrpc.ID{}
}

// depth is how deeply b nests arrays and objects (strings skipped).
func depth(b []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *lineConn) writeResponse(r *jsonrpc.Response) error {
	b, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return errors.New("connection closed")
	default:
	}
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
