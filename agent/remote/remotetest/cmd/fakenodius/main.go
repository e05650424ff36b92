// Command fakenodius runs the remotetest stand-in of a Nodius server's assistant as
// a process, to try `nodius-ai --agent server:URL` by hand:
//
//	fakenodius [--addr 127.0.0.1:0] [--token JWT] [--delay 30ms]
//
// It prints its URL ("http://127.0.0.1:PORT") on stdout and serves /ws and the
// /api/ai endpoints, with the demo graph in memory (GET /api/ai/memory/demo). Its
// assistant streams a short answer word by word after one read_node_detail tool
// call; a question with "delete" in it gets a proposal to delete fetch-api, and the
// decision is answered in a sentence.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakenodius:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	token := flag.String("token", "", "the only JWT accepted (default: any, or none)")
	delay := flag.Duration("delay", 30*time.Millisecond, "pause between streamed words")
	flag.Parse()

	s := remotetest.NewHandler()
	s.Token = *token
	body, err := remotetest.MemoryBody(demo.JSON())
	if err != nil {
		return err
	}
	s.Memory["demo"] = body
	words := func(ss *remotetest.Session, text string) bool {
		for _, w := range strings.SplitAfter(text, " ") {
			if !ss.Sleep(*delay) || !ss.Token(w) {
				return false
			}
		}
		return true
	}
	s.SetChat(func(ss *remotetest.Session) {
		if strings.Contains(strings.ToLower(ss.Req.Message), "delete") {
			if words(ss, "I can remove fetch-api; here is the change.") {
				ss.Propose(fmt.Sprintf("call_%d", time.Now().UnixNano()), "propose_delete_node",
					map[string]any{"nodeKey": "fetch-api", "reason": "you asked to delete it"},
					`{"type":"delete_node","payload":{"nodeKey":"fetch-api"}}`)
			}
			return
		}
		ss.ToolStart("tc_1", "read_node_detail")
		ss.ToolResult("tc_1", `{"_key":"fetch-api","type":"api-call"}`)
		text := "The server's assistant read fetch-api: it calls the NBA stats API and passes the games on to filter-active."
		if words(ss, text) {
			ss.Complete(text)
		}
	})
	s.SetResume(func(ss *remotetest.Session) {
		text := "Done: the change was applied on the server."
		if !ss.Req.Approved {
			text = "Understood, nothing was changed."
		}
		if words(ss, text) {
			ss.Complete(text)
		}
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	if err := http.Serve(ln, s); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
