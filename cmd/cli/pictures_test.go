package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// TestNewGraphPictureNote: the dialog draws no picture of a proposed new graph and
// says what it will hold instead: a workflow's Starter and Return nodes, or an
// HTML class's html root node (never a workflow's nodes for a page).
func TestNewGraphPictureNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, want, not string }{
		{"graph", "Starter and Return", "HTML"},
		{"htmlClass", "html root node", "Starter"},
	} {
		a := datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &datasource.CreateGraphPayload{Name: "Landing", Type: tc.typ}}
		_, err := changePictures{}.ProposedChange(context.Background(), "home", a)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s: note %v, want %q and not %q", tc.typ, err, tc.want, tc.not)
		}
	}
}
