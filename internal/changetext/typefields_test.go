package changetext

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func TestTypeFieldLines(t *testing.T) {
	t.Parallel()
	handles := map[string]map[string]any{"L": {"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}}}
	tests := []struct {
		name string
		p    datasource.ConfigureNodeTypePayload
		want []string
	}{
		{"update: before → after, unchanged fields left out", datasource.ConfigureNodeTypePayload{Mode: "update", DisplayName: "New", Icon: "zap",
			Size: map[string]any{"width": 10, "height": 20}, Handles: handles,
			Before: map[string]any{"displayName": "Old", "icon": "zap", "size": nil, "handles": nil}},
			[]string{`displayName: "Old" → "New"`, `handles: (none) → "L:0:in"`, `size: (none) → {"height":20,"width":10}`}},
		{"create: the values", datasource.ConfigureNodeTypePayload{Mode: "create", DisplayName: "X", Border: map[string]any{"radius": 2}},
			[]string{`displayName: "X"`, `border: {"hover":{"color":"var(--nodius-primary-light)"},"normal":{"color":"var(--nodius-primary-dark)"},"radius":2,"type":"solid","width":1}`}},
		{"handles: a point's accepted type is said", datasource.ConfigureNodeTypePayload{Mode: "update",
			Handles: map[string]map[string]any{"L": {"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "number"}}}},
			Before:  map[string]any{"handles": handles}},
			[]string{`handles: "L:0:in" → "L:0:in:number"`}},
		{"handles: a change the points do not show is shown key by key", datasource.ConfigureNodeTypePayload{Mode: "update",
			Handles: map[string]map[string]any{"L": {"position": "fix", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}}},
			Before:  map[string]any{"handles": handles}},
			[]string{`handles.L.position: "separate" → "fix"`}},
		{"an object key by key", datasource.ConfigureNodeTypePayload{Mode: "update", Border: map[string]any{"radius": 4},
			Before: map[string]any{"border": map[string]any{"radius": 2, "width": 1, "type": "solid",
				"normal": map[string]any{"color": "var(--nodius-primary-dark)"}, "hover": map[string]any{"color": "var(--nodius-primary-light)"}}}},
			[]string{`border.radius: 2 → 4`}},
		{"a long value whole", datasource.ConfigureNodeTypePayload{Mode: "update", Description: strings.Repeat("d", 300)},
			[]string{`description: ` + strconv.Quote(strings.Repeat("d", 300))}},
		{"a server's update, before unknown", datasource.ConfigureNodeTypePayload{Mode: "update", DisplayName: "X"},
			[]string{`displayName: "X"`}},
	}
	for _, tc := range tests {
		if got := TypeFieldLines(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
