package main_test

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// Code holding a Unicode direction control (U+202E) reads differently from what
// runs. Where a person decides on it (ask's pending proposal, approve) it is shown
// as ⟨U+202E⟩; where it is only read (threads show) it is removed.
func TestDirectionControlsShownForDecisionsOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "Here \u202eit is.", ToolCalls: []llmtest.ToolCall{{ID: "u1", Name: "propose_configure_node_type",
		Arguments: `{"mode":"update","typeKey":"api-call","displayName":"API Call","process":"if (isAdmin\u202e \u2066) {\nreturn 1;\n}","reason":"admins \u202eonly"}`}}},
		llmtest.Turn{Text: "Updated."})
	r := e.run("", "ask", "--graph", "demo", "restrict it")
	if r.code != 3 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	for _, want := range []string{"+ if (isAdmin⟨U+202E⟩ ⟨U+2066⟩) {", "Reason: admins ⟨U+202E⟩only"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ask's pending proposal lacks %q:\n%s", want, r.stderr)
		}
	}
	// stdout here is a pipe: the answer is data, passed on as written (to a
	// terminal it goes through termtext.Strip); stderr is for people.
	if strings.ContainsAny(r.stderr, "\u202e\u2066") {
		t.Errorf("ask printed a raw direction control on stderr:\n%s", r.stderr)
	}
	thread := strings.Fields(r.stderr[strings.Index(r.stderr, "nodius-ai approve ")+len("nodius-ai approve "):])[0]
	md := e.run("", "threads", "show", thread)
	if strings.ContainsAny(md.stdout, "\u202e\u2066") || strings.Contains(md.stdout, "U+202E") || !strings.Contains(md.stdout, "if (isAdmin ) {") {
		t.Errorf("threads show:\n%s", md.stdout)
	}
	ap := e.run("", "approve", thread)
	if !strings.Contains(ap.stderr, "if (isAdmin⟨U+202E⟩ ⟨U+2066⟩) {") || strings.ContainsAny(ap.stdout+ap.stderr, "\u202e\u2066") {
		t.Errorf("approve: %d\n%s\n%s", ap.code, ap.stdout, ap.stderr)
	}
}
