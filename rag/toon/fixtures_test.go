package toon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir is the TOON specification's encode conformance suite (spec v4.0, 173
// cases; testdata/encode/README.md).
func fixtureDir(t *testing.T) string {
	t.Helper()
	return filepath.Join("testdata", "encode")
}

type fixtureFile struct {
	Category string `json:"category"`
	Tests    []struct {
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
		Expected string          `json:"expected"`
		Options  struct {
			Delimiter  string `json:"delimiter"`
			IndentSize int    `json:"indentSize"`
		} `json:"options"`
	} `json:"tests"`
}

func TestEncodeFixtures(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixture files in %s", dir)
	}
	total := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ff fixtureFile
		if err := json.Unmarshal(data, &ff); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		for _, tc := range ff.Tests {
			total++
			t.Run(base+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				input, err := ParseJSON(tc.Input)
				if err != nil {
					t.Fatalf("ParseJSON: %v", err)
				}
				opts := Options{Indent: tc.Options.IndentSize}
				if d := tc.Options.Delimiter; d != "" {
					opts.Delimiter = []rune(d)[0]
				}
				if got := Encode(input, opts); got != tc.Expected {
					t.Errorf("input %s\n got:\n%s\nwant:\n%s", tc.Input, got, tc.Expected)
				}
			})
		}
	}
	t.Logf("%d fixture cases from %d files", total, len(files))
}
