package cli

import (
	"bytes"
	"fmt"
	"testing"
)

// TestNoteRecorderHoldsStderrWhileTheScreenIsUp: before the screen opens stderr
// passes through and its notes are kept for the welcome; while the screen is up
// nothing reaches the terminal (it would draw over the screen) and each note is
// shown in the transcript instead; when the screen closes, what was held is written.
func TestNoteRecorderHoldsStderrWhileTheScreenIsUp(t *testing.T) {
	t.Parallel()
	var term bytes.Buffer
	r := &noteRecorder{out: &term}
	fmt.Fprintln(r, "nodius-ai: graph file g.json is in the earlier format")
	fmt.Fprint(r, "not a note\n")
	if got := r.hold(); len(got) != 1 || got[0] != "graph file g.json is in the earlier format" {
		t.Fatalf("notes for the welcome = %q", got)
	}
	before := term.String()
	if before != "nodius-ai: graph file g.json is in the earlier format\nnot a note\n" {
		t.Fatalf("before the screen, stderr = %q", before)
	}
	shown := make(chan string, 1)
	r.showWith(func(n string) { shown <- n })
	fmt.Fprint(r, "nodius-ai: node types \"a\" have no config here")
	fmt.Fprint(r, ", so the code of their nodes is unknown\n")
	if n := <-shown; n != `node types "a" have no config here, so the code of their nodes is unknown` {
		t.Errorf("shown while the screen is up: %q", n)
	}
	if term.String() != before {
		t.Errorf("written to the terminal while the screen is up: %q", term.String()[len(before):])
	}
	r.release()
	fmt.Fprintln(r, "nodius-ai: after")
	want := before + "nodius-ai: node types \"a\" have no config here, so the code of their nodes is unknown\nnodius-ai: after\n"
	if term.String() != want {
		t.Errorf("after the screen, stderr = %q, want %q", term.String(), want)
	}
}
