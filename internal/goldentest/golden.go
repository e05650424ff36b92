// Package goldentest compares test output with golden files kept under testdata/, for
// the tests of the drawings (graphdraw, graphpic). go test -update rewrites them.
// charmbracelet's golden package names the file after the test; these tests check
// several drawings in one test, each under its own name.
package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name.golden, or rewrites that file under -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s--- want\n%s", name, got, want)
	}
}
