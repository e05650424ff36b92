package threads_test

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/threads"
)

// A thread started here is not marked imported; one stored from a document is,
// whether the document is a server one or carries the local record (as an export
// does), and after --replace too. Deleting the thread drops the mark.
func TestImportedMark(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	local := newThread(t, s, "g1")
	fullTurn(t, s, local, "add a node")
	if imp, err := s.Imported(ctx, local.ID); err != nil || imp {
		t.Fatalf("a thread started here: Imported = %v, %v", imp, err)
	}
	doc, err := s.Export(ctx, local.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The same thread, exported and imported back with --replace, is now from a document.
	if _, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if imp, _ := s.Imported(ctx, local.ID); !imp {
		t.Error("a thread imported with its local record is not marked")
	}
	server := doc
	server.Key, server.Local = "ai_web1", nil
	if _, err := s.Import(ctx, server, threads.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if imp, _ := s.Imported(ctx, "ai_web1"); !imp {
		t.Error("a server document is not marked")
	}
	if err := s.Delete(ctx, "ai_web1"); err != nil {
		t.Fatal(err)
	}
	if imp, _ := s.Imported(ctx, "ai_web1"); imp {
		t.Error("the mark outlived its thread")
	}
}
