package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// On a terminal, tables keep their headers over their columns and are cut to the
// terminal's width, never wrapped; piped, they are whole.
func TestTablesAlignedAndCutToTheTerminal(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	e.seed(threadDoc("ai_1709000000004_1", "demo", strings.Repeat("a very long question about the pipeline ", 4), "fetch answer", time.Minute))
	for _, args := range [][]string{{"threads", "list"}, {"threads", "search", "fetch"}} {
		for _, width := range []int{40, 80, 160} {
			e.outTTY, e.size = true, [2]int{width, 30}
			out, errOut, code := e.run("", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d %s", args, code, errOut)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("%v at %d columns: line of %d columns: %q", args, width, w, l)
				}
			}
			// Every header starts at the column its values start at.
			header := ansi.Strip(lines[0])
			row := []rune(ansi.Strip(lines[1]))
			for _, h := range strings.Fields(strings.TrimSuffix(header, "…"))[1:] {
				col := len([]rune(header[:strings.Index(header, " "+h)])) + 1
				if col >= len(row) {
					continue // cut off at this width
				}
				if row[col-1] != ' ' || row[col] == ' ' {
					t.Errorf("%v at %d: header %s at column %d does not start its column:\n%s\n%s", args, width, h, col, header, string(row))
				}
			}
		}
	}
	e.outTTY = false
	out, _, _ := e.run("", "threads", "list")
	if !strings.Contains(out, "a very long question about the pipeline a very …") {
		t.Errorf("piped table was cut:\n%s", out)
	}
}

// threads show goes through $PAGER on a terminal when longer than the screen, never
// when piped or when it fits.
func TestThreadsShowPager(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t)
	seedStandard(e)
	e.env["NO_COLOR"] = "1"
	e.env["PAGER"] = "sed 's/^/PAGED:/'"
	tests := []struct {
		tty    bool
		rows   int
		paged  bool
		reason string
	}{
		{true, 5, true, "terminal, taller than the screen"},
		{true, 500, false, "terminal, fits"},
		{false, 5, false, "piped"},
	}
	for _, tt := range tests {
		e.outTTY, e.size = tt.tty, [2]int{80, tt.rows}
		out, errOut, code := e.run("", "threads", "show", "ai_1709000000001_1")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tt.reason, code, errOut)
		}
		if got := strings.HasPrefix(out, "PAGED:"); got != tt.paged || !strings.Contains(out, "It calls the NBA stats endpoint.") {
			t.Errorf("%s: paged = %v, want %v:\n%s", tt.reason, got, tt.paged, out)
		}
	}
	e.outTTY, e.size = true, [2]int{80, 5}
	e.env["PAGER"] = "cat"
	if out, _, _ := e.run("", "threads", "show", "ai_1709000000001_1"); strings.Contains(out, "PAGED:") {
		t.Error("PAGER=cat still paged")
	}
	e.env["PAGER"] = "/nonexistent/pager"
	if out, _, code := e.run("", "threads", "show", "ai_1709000000001_1"); code != 0 || !strings.Contains(out, "NBA stats") {
		t.Errorf("a missing pager lost the output: %d %q", code, out)
	}
	_ = fmt.Sprint()
}
