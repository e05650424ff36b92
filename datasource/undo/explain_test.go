package undo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// What an undo will revert says what it puts back (issue 31: the undo of a node
// type change showed no code): the code as a numbered line diff from the change's
// version (−) to the one that comes back (+), a type's other fields and a node's
// data key by key, from as they are now to as they come back.
func TestUndoSaysWhatItPutsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, action string
		want         []string
	}{
		{"a node type's code and look",
			`{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","process":"const x = 1;\nreturn x;","border":{"normalColor":"red"},"nodes":["a","b"]}}`,
			[]string{
				"restore node type fmt as it was\n",
				"\n    border.normal.color: \"red\" → \"black\"\n",
				"\n    displayName: \"Format\" → \"Formatter\"\n",
				"\n    process:\n        1 - const x = 1;\n        2 - return x;\n        1 + return 1;",
			}},
		{"a node's data",
			`{"type":"update_node","payload":{"nodeKey":"a","changes":{"data":{"url":"https://new","headers":{"Authorization":"y"}}}}}`,
			[]string{"restore data of node a\n    data.headers.Authorization: \"y\" → \"x\"\n    data.url: \"https://new\" → \"https://old\""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, src := typeFile(t, strings.Replace(nodiusTypes, `"data": {}, "posX": 0`, `"data": {"url": "https://old", "headers": {"Authorization": "x"}}, "posX": 0`, 1))
			a := act(t, tc.action)
			if a.ConfigureNodeType != nil {
				a.ConfigureNodeType.Before = datasource.TypeFields(mustConfig(t, src, "fmt"))
			}
			rec := undo.NewRecorder()
			if _, err := datasource.Apply(ctx, src, "g", a, datasource.Record(rec)); err != nil {
				t.Fatal(err)
			}
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			rep, err := undo.Check(ctx, src, "g", rev, false)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(rep.Reversed, "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("reverts:\n%s\nlacks %q", got, w)
				}
			}
		})
	}
}
