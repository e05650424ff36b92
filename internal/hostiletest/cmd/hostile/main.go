// Command hostile is a misbehaving OpenAI-compatible provider and Nodius server, for
// the fault matrix (.ci/faults): it sends too much, too slowly, or garbage, generating
// what it sends on the fly so that only the client's memory is measured.
//
//	hostile --mode MODE [--mb N] [--addr 127.0.0.1:0]
//
// It prints its base URL as the first line on stdout. Chat modes answer
// POST /v1/chat/completions: answer, reasoning (N MB of either), args (one tool call
// with N MB of arguments, every round), wide (30 calls of 120 KB arguments, every
// round: just under the default limits), calls (N thousand tool calls), line (one SSE
// line of N MB), slow (one token, then a comment every second and nothing else),
// garbage (N MB of random bytes). Mode snapshot answers POST /api/graph/get (the
// Nodius server's saved graph) with an N MB graph.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "answer", "answer|reasoning|args|wide|calls|line|slow|garbage|snapshot")
	mb := flag.Int("mb", 50, "how much to send (MB; thousands of calls for calls)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	h := &handler{mode: *mode, size: *mb << 20, count: *mb * 1000}
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

type handler struct {
	mode  string
	size  int // bytes
	count int // tool calls
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.mode == "snapshot" {
		h.snapshot(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	chunk := func(delta string) {
		fmt.Fprintf(bw, "data: {\"id\":\"x\",\"model\":\"hostile\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
	}
	piece := strings.Repeat("lorem ipsum ", 340) // ~4 KB per event
	switch h.mode {
	case "answer", "reasoning":
		field := "content"
		if h.mode == "reasoning" {
			field = "reasoning_content"
		}
		for sent := 0; sent < h.size && r.Context().Err() == nil; sent += len(piece) {
			chunk(fmt.Sprintf("{%q:%q}", field, piece))
		}
	case "args":
		chunk(`{"tool_calls":[{"index":0,"id":"call_big","type":"function","function":{"name":"search_nodes","arguments":"{\"query\":\""}}]}`)
		for sent := 0; sent < h.size && r.Context().Err() == nil; sent += len(piece) {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, piece))
		}
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`)
	case "calls":
		for i := 0; i < h.count && r.Context().Err() == nil; i++ {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"search_nodes","arguments":"{\"query\":\"fetch\"}"}}]}`, i, i))
		}
	case "wide":
		// Just under the default limits: 30 calls of 120 KB arguments, every round.
		arg := strings.Repeat("q", 120<<10)
		for i := 0; i < 30 && r.Context().Err() == nil; i++ {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"search_nodes","arguments":%q}}]}`, i, i, `{"query":"`+arg+`"}`))
		}
	case "line":
		fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"content":"`)
		for sent := 0; sent < h.size && r.Context().Err() == nil; sent += len(piece) {
			bw.WriteString(piece)
		}
		fmt.Fprint(bw, "\"}}]}\n\n")
	case "slow":
		chunk(`{"content":"Hello"}`)
		bw.Flush()
		w.(http.Flusher).Flush()
		for r.Context().Err() == nil {
			time.Sleep(time.Second)
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		return
	case "garbage":
		buf := make([]byte, 4096)
		for sent := 0; sent < h.size && r.Context().Err() == nil; sent += len(buf) {
			for i := range buf {
				buf[i] = byte(rand.IntN(256))
			}
			bw.Write(buf)
		}
		return
	}
	fmt.Fprint(bw, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// snapshot sends a graph whose nodes never end.
func (h *handler) snapshot(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/graph/get" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		RetrieveGraph struct {
			Token string `json:"token"`
		} `json:"retrieveGraph"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	fmt.Fprintf(bw, `{"_key":%q,"name":"big","sheetsList":{"0":"main"},"lastUpdatedTime":1,"_sheets":{"0":{"edges":[],"nodes":[`, body.RetrieveGraph.Token)
	data := strings.Repeat("x", 4000)
	for i, sent := 0, 0; sent < h.size && r.Context().Err() == nil; i++ {
		if i > 0 {
			bw.WriteString(",")
		}
		n, _ := fmt.Fprintf(bw, `{"_key":"n%d","type":"html","sheet":"0","data":{"text":%q}}`, i, data)
		sent += n
	}
	fmt.Fprint(bw, `]}}}`)
}
