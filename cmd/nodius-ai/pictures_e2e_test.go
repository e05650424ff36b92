package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// threads show --pictures draws from the thread's own source: with another file
// configured, the pictures are of the thread's file and stderr says so; --source
// draws from the one named, without a note.
func TestThreadsShowPicturesUseTheThreadsSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "m1", Name: "propose_move_node",
		Arguments: `{"nodeKey":"root","posX":10,"posY":20,"reason":"tidy"}`}}})
	thread := e.askProposal("--graph", "demo")

	// Another graph file: the same workflow, its fetch-api node called fetch-other.
	a, err := os.ReadFile(e.graph)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(e.dir, "other.json")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(string(a), "fetch-api", "fetch-other")), 0o644); err != nil {
		t.Fatal(err)
	}
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=file:"+other)

	r := e.run("", "threads", "show", thread, "--pictures")
	pics := r.stdout[strings.Index(r.stdout, "## Pictures"):]
	if r.code != 0 || !strings.Contains(pics, "fetch-api") || strings.Contains(pics, "fetch-other") {
		t.Fatalf("pictures with another source configured: exit %d, stderr %q\n%s", r.code, r.stderr, pics)
	}
	if !strings.Contains(r.stderr, "Drawing from file:"+e.graph+", the thread's source, not file:"+other) {
		t.Errorf("stderr does not say which source was drawn: %q", r.stderr)
	}

	r = e.run("", "--source", "file:"+other, "threads", "show", thread, "--pictures")
	pics = r.stdout[strings.Index(r.stdout, "## Pictures"):]
	if r.code != 0 || !strings.Contains(pics, "fetch-other") || strings.Contains(pics, "fetch-api") || strings.Contains(r.stderr, "Drawing from") {
		t.Fatalf("pictures with --source: exit %d, stderr %q\n%s", r.code, r.stderr, pics)
	}

	// The thread's file gone: the transcript stands, the pictures say why they are not there.
	if err := os.Rename(e.graph, e.graph+".away"); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "threads", "show", thread, "--pictures")
	if r.code != 0 || !strings.Contains(r.stdout, "(no pictures:") || !strings.Contains(r.stdout, "tidy") {
		t.Fatalf("pictures of a missing source: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
}
