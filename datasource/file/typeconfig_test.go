package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
)

// TestConfigWriter: a type put through the file source is saved in the file's
// format; removing it is refused while a node has it; a type with code is refused
// in a file of the earlier format.
func TestConfigWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	nodius := filepath.Join(dir, "n.json")
	if err := os.WriteFile(nodius, []byte(`{"graph":{"_key":"g","sheetsList":{"0":"main"}},"nodes":[{"_key":"a","type":"t1","sheet":"0"}],"edges":[],"nodeConfigs":[{"_key":"t1","displayName":"T1","node":{"handles":{},"process":"x"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := file.OpenLazy(ctx, nodius)
	if err != nil {
		t.Fatal(err)
	}
	c := datasource.NodeConfig{Key: "t2", DisplayName: "T2", Process: "y"}
	if _, err := l.PutConfig(ctx, "g", c); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(nodius)
	if !strings.Contains(string(raw), `"_key": "t2"`) || !strings.Contains(string(raw), `"process": "y"`) {
		t.Errorf("file:\n%s", raw)
	}
	if err := l.DeleteConfig(ctx, "g", "t1"); err == nil || !strings.Contains(err.Error(), "still has 1 node") {
		t.Errorf("delete of a used type: %v", err)
	}
	if err := l.DeleteConfig(ctx, "g", "t2"); err != nil {
		t.Fatal(err)
	}

	earlier := filepath.Join(dir, "e.json")
	if err := os.WriteFile(earlier, []byte(`{"graph":{"_key":"g","sheets":{"0":"main"}},"nodes":[{"_key":"a","type":"t1","sheet":"0","process":"x"}],"edges":[],"nodeConfigs":[{"_key":"t1","displayName":"T1","handles":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, earlier)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.PutConfig(ctx, "g", c); err == nil || !strings.Contains(err.Error(), "graph convert") {
		t.Errorf("a type with code in the earlier format: %v", err)
	}
}
