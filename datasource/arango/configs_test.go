package arango_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// Nodius's shared node types (workspace "root") are read as the server reads
// them, beside the workspace's own: listed, and found by a change's lookup (a new
// node of such a type gets its size). They are never written from here: a put or
// a delete of one is refused and leaves the document as it was.
func TestSharedRootTypesAreReadNotWritten(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	h := newHarness(t, 0)
	if h.fake == nil {
		t.Skip("seeds the fake")
	}
	ctx := ctxT(t)
	shared := map[string]any{"_key": "shared-fmt", "workspace": "root", "displayName": "Shared", "category": "default",
		"node": map[string]any{"type": "shared-fmt", "process": "return 1;", "size": map[string]any{"width": 321, "height": 77}}}
	h.fake.Insert(arangotest.Configs, shared)
	stored := func() string {
		for _, d := range h.fake.Docs(arangotest.Configs) {
			if d["_key"] == "shared-fmt" {
				delete(d, "_rev")
				b, _ := json.Marshal(d)
				return string(b)
			}
		}
		return ""
	}
	before := stored()

	cfgs, err := h.src.Configs(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, c := range cfgs {
		listed = listed || c.Key == "shared-fmt"
		if c.Key == "hidden" {
			t.Error("a type of another workspace is listed")
		}
	}
	if !listed {
		t.Errorf("shared type not listed: %+v", cfgs)
	}

	err = h.src.Change(ctx, "g1", func(w datasource.WorkingCopy) error {
		cc := w.(datasource.ConfigChanges)
		if c, ok := cc.LookupConfig("shared-fmt"); !ok || c.Workspace != "root" {
			t.Errorf("lookup of a shared type: %+v, %v", c, ok)
		}
		if _, ok := cc.LookupConfig("hidden"); ok {
			t.Error("lookup finds a type of another workspace")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	change := func(fn func(cc datasource.ConfigChanges) error) error {
		return h.src.Change(ctx, "g1", func(w datasource.WorkingCopy) error { return fn(w.(datasource.ConfigChanges)) })
	}
	if err := change(func(cc datasource.ConfigChanges) error {
		_, err := cc.PutConfig(datasource.NodeConfig{Key: "shared-fmt", DisplayName: "Mine"})
		return err
	}); err == nil || !strings.Contains(err.Error(), "shared types") {
		t.Errorf("put over a shared type: err = %v", err)
	}
	if err := change(func(cc datasource.ConfigChanges) error { return cc.DeleteConfig("shared-fmt") }); err == nil || !strings.Contains(err.Error(), "shared types") {
		t.Errorf("delete of a shared type: err = %v", err)
	}
	if got := stored(); got != before {
		t.Errorf("the shared type was written:\n%s\nwas\n%s", got, before)
	}
	if err := change(func(cc datasource.ConfigChanges) error { return cc.DeleteConfig("hidden") }); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("delete of another workspace's type: err = %v, want not found", err)
	}
}
