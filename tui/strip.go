package tui

import "github.com/nodius/nodius-ai/internal/termtext"

// strip removes terminal control sequences from text that comes from the model,
// tools or the graph, so none of it can retitle the window, clear the screen or
// move the cursor. Every such string goes through it before rendering.
func strip(s string) string { return termtext.Strip(s) }
