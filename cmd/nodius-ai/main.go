// Command nodius-ai is a terminal client for the Nodius AI assistant: ask questions
// about a workflow graph, watch answers stream, approve or reject proposed edits, and
// inspect past conversations offline.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nodius/nodius-ai/cmd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.System(), os.Args[1:])
	stop()
	os.Exit(code)
}
