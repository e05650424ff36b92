package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func copyTestdata(t *testing.T, from, name string) string {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `graph convert` turns an earlier file and a real export into Nodius's format,
// refuses to replace a file, and names the secret when it is wrong (exit 2).
func TestGraphConvert(t *testing.T) {
	earlier := copyTestdata(t, filepath.Join("..", "..", "datasource", "testdata", "nba-earlier.json"), "nba.json")
	export := copyTestdata(t, filepath.Join("..", "..", "datasource", "ndex", "testdata", "07-export-graph.ndex"), "team.ndex")
	dir := t.TempDir()

	out := filepath.Join(dir, "nba-nodius.json")
	stdout, stderr, code := runCLI(t, "", nil, "graph", "convert", earlier, out)
	if code != 0 || !strings.Contains(stdout, "earlier format") || !strings.Contains(stdout, "9 nodes") {
		t.Fatalf("convert earlier: exit %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), `"sheetsList"`) || !strings.Contains(string(data), `"node": {`) {
		t.Errorf("converted file is not in Nodius's format:\n%.400s", data)
	}
	// The converted file answers a question about a node with its type's code.
	stdout, stderr, code = runCLI(t, "", nil, "inspect", "context", "--source", "file:"+out, "--format", "json", "what does filter-active do")
	if code != 0 || !strings.Contains(stdout, "Active") {
		t.Errorf("inspect context on the converted file: exit %d\n%.600s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "earlier format") {
		t.Errorf("converted file still announced as earlier: %s", stderr)
	}

	if _, stderr, code = runCLI(t, "", nil, "graph", "convert", earlier, out); code != 2 || !strings.Contains(stderr, "already exists") {
		t.Errorf("convert onto an existing file: exit %d, %s", code, stderr)
	}

	stdout, stderr, code = runCLI(t, "", nil, "graph", "convert", export, filepath.Join(dir, "team.json"))
	if code != 0 || !strings.Contains(stdout, `graph "team"`) || !strings.Contains(stderr, `"filter"`) {
		t.Errorf("convert export: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "", map[string]string{"NODIUS_EXPORT_SECRET": "wrong"}, "graph", "convert", export, filepath.Join(dir, "x.json"))
	if code != 2 || !strings.Contains(stderr, "secret") {
		t.Errorf("wrong secret: exit %d, %s", code, stderr)
	}
}

// `graph convert --node-type KEY=FILE` gives a graph export the code of a type
// exported on its own; the converted file then answers with that code.
func TestGraphConvertWithTypeExport(t *testing.T) {
	export := copyTestdata(t, filepath.Join("..", "..", "datasource", "ndex", "testdata", "07-export-graph.ndex"), "team.ndex")
	dir := t.TempDir()
	typeFile := filepath.Join(dir, "api.json")
	payload := `{"displayName":"API Call","category":"network","node":{"handles":{},"size":{"width":240,"height":120},"process":"return fetchPlayersFromSportsdata();"},"border":{}}`
	if err := os.WriteFile(typeFile, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "team.json")
	stdout, stderr, code := runCLI(t, "", nil, "graph", "convert", export, out, "--node-type", "api-call="+typeFile)
	if code != 0 || !strings.Contains(stdout, "1 node types") || strings.Contains(stderr, `"api-call"`) {
		t.Fatalf("convert with a type export: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", nil, "inspect", "context", "--source", "file:"+out, "what does fetch_api do")
	if code != 0 || !strings.Contains(stdout, "fetchPlayersFromSportsdata") {
		t.Errorf("inspect context after adding the type: exit %d\n%.600s\n%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "", nil, "graph", "convert", export, filepath.Join(dir, "x.json"), "--node-type", "nope="+typeFile)
	if code != 2 || !strings.Contains(stderr, `no node of the graph has type "nope"`) {
		t.Errorf("type no node uses: exit %d, %s", code, stderr)
	}
}

// Contract: an export needs no --graph (its key is its file name), says what it
// lacks, a wrong secret exits 2 naming it; file:/dev/zero fails at once.
func TestExportAsSource(t *testing.T) {
	export := copyTestdata(t, filepath.Join("..", "..", "datasource", "ndex", "testdata", "07-export-graph.ndex"), "team.ndex")
	stdout, stderr, code := runCLI(t, "", nil, "inspect", "context", "--source", "file:"+export, "what does filter_active do")
	if code != 0 || !strings.Contains(stdout, "filter_active") || !strings.Contains(stderr, "code of their nodes is unknown") {
		t.Errorf("inspect context on an export: exit %d\n%.300s\n%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "", map[string]string{"NODIUS_EXPORT_SECRET": "nope"}, "inspect", "context", "--source", "file:"+export, "x")
	if code != 2 || !strings.Contains(stderr, "export secret is wrong") {
		t.Errorf("wrong secret: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, stderr, code = runCLI(t, "", nil, "inspect", "context", "--source", "file:/dev/zero", "x")
		if code == 0 || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("file:/dev/zero: exit %d, %s", code, stderr)
		}
	}
}
