package rag

import (
	"context"
	"testing"
)

// TestContextCodeMarks checks each context node says where its code comes from:
// its type's config (TypeCode), its own (a built-in, or code differing from the
// type's), or nowhere here (CodeUnknown: a type without config, no code carried).
func TestContextCodeMarks(t *testing.T) {
	t.Parallel()
	snap := demoSnapshot(t)
	cfg := map[string]string{}
	for _, c := range snap.Configs {
		cfg[c.Key] = c.Process
	}
	var own, ghost, typed string
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		switch {
		case typed == "" && cfg[n.Type] != "" && n.Process == cfg[n.Type]:
			typed = n.Key
		case own == "" && cfg[n.Type] != "":
			own = n.Key
			n.Process = "next(0, 'own code')"
		case ghost == "" && n.Type == "html":
			ghost = n.Key
			n.Type, n.Process = "sms-send", ""
		}
	}
	if typed == "" || own == "" || ghost == "" {
		t.Fatalf("demo graph lacks the nodes this test needs (%q %q %q)", typed, own, ghost)
	}
	opts := DefaultOptions()
	rc, err := New(newFakeSource(snap), opts, nil).Retrieve(context.Background(), "demo", typed+" "+own+" "+ghost)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{typed: {true, false}, own: {false, false}, ghost: {false, true}}
	seen := 0
	for _, n := range rc.Nodes {
		w, ok := want[n.Key]
		if !ok {
			continue
		}
		seen++
		if n.TypeCode != w[0] || n.CodeUnknown != w[1] {
			t.Errorf("%s: TypeCode %v CodeUnknown %v, want %v %v", n.Key, n.TypeCode, n.CodeUnknown, w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Errorf("context holds %d of the %d mentioned nodes: %v", seen, len(want), nodeKeys(rc))
	}
}
