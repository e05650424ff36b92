// Command fakellm runs the llmtest fake LLM server as a process, for end-to-end tests
// of the nodius-ai binary (and the TUI's tmux test):
//
//	fakellm --addr 127.0.0.1:0 --script turns.json [--record requests.ndjson] [--embed words|thesaurus]
//
// It prints its base URL ("http://127.0.0.1:PORT") as the first line on stdout, then
// serves /v1/chat/completions, /v1/messages, /v1/embeddings, GET /_requests (the
// requests received, as JSON), POST /_script (replace the script) and POST /_reset.
// The script file is an llmtest.Script ({"turns": [...], "loop": false}) or a bare
// array of turns. Point the binary at it with --base-url URL/v1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/agent/llm/llmtest/thesaurustest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2) // as the flag package does for a flag it cannot parse
		}
		os.Exit(1)
	}
}

// usageError is a flag value run refuses: exit status 2, as for any usage error.
type usageError struct{ error }

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	scriptPath := flag.String("script", "", "script file (JSON llmtest.Script or array of turns)")
	record := flag.String("record", "", "append every request as one JSON line to this file")
	embed := flag.String("embed", "words", "what /v1/embeddings answers: words (a hashed bag of words) or thesaurus (a stand-in model where paraphrases and French land close; needs WordNet and FreeDict)")
	flag.Parse()
	if *embed != "words" && *embed != "thesaurus" {
		return usageError{fmt.Errorf("--embed must be words or thesaurus (got %q)", *embed)}
	}

	var script llmtest.Script
	if *scriptPath != "" {
		b, err := os.ReadFile(*scriptPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &script); err != nil {
			var turns []llmtest.Turn
			if err2 := json.Unmarshal(b, &turns); err2 != nil {
				return fmt.Errorf("%s: %w", *scriptPath, err)
			}
			script.Turns = turns
		}
	}
	srv := llmtest.New(script)
	if *embed == "thesaurus" {
		m, err := thesaurustest.Load(thesaurustest.DefaultWordNetDir, thesaurustest.DefaultFreeDictDir)
		if err != nil {
			return err
		}
		srv.SetEmbed(m.Embed)
	}
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		var mu sync.Mutex
		enc := json.NewEncoder(f)
		srv.OnRequest(func(r llmtest.Request) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(r)
		})
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	hs := &http.Server{Handler: srv.Handler()}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
