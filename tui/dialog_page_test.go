package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// spreadCodeProposal changes 5 lines spread over 60 lines of a type's code, one
// of them long enough to wrap, after a Reason of several lines: the shape where
// PgDn used to jump over lines (at 80×24 a page showed 7 and moved 10).
func spreadCodeProposal() *convo.Proposal {
	var old []string
	for i := 1; i <= 60; i++ {
		old = append(old, fmt.Sprintf("const v%d = await stage(%d); // CODE%02d", i, i, i))
	}
	changed := append([]string(nil), old...)
	for _, i := range []int{3, 17, 31, 45, 58} {
		changed[i-1] = fmt.Sprintf("const v%d = await stageV2(%d, { retries: 3, timeoutMs: 5000, onError: report }); // NEW%02d", i, i, i)
	}
	var reason []string
	for i := 1; i <= 40; i++ {
		reason = append(reason, fmt.Sprintf("why%02d", i))
	}
	return &convo.Proposal{ID: "call_t", ThreadID: "t1", Tool: "propose_configure_node_type",
		Reason: "REASON " + strings.Join(reason, " "),
		Action: datasource.Action{Type: datasource.ConfigureNodeTypeAction, ConfigureNodeType: &datasource.ConfigureNodeTypePayload{
			Mode: "update", TypeKey: "api-call", DisplayName: "API Call", Process: strings.Join(changed, "\n"),
			CodeDiffs: []datasource.CodeDiff{{Field: "process", Original: strings.Join(old, "\n"), Modified: strings.Join(changed, "\n")}},
		}}}
}

// dialogLines is the text inside the dialog's frame on a screen, one entry a row.
func dialogLines(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		i, j := strings.Index(l, "│"), strings.LastIndex(l, "│")
		if i >= 0 && j > i {
			out = append(out, strings.TrimSpace(l[i+len("│"):j]))
		}
	}
	return out
}

// pageThrough presses PgDn until the screen stops changing and returns every
// screen shown, the first included.
func pageThrough(m *Model, key string) []string {
	screens := []string{view(m)}
	for range 200 {
		press(m, key)
		s := view(m)
		if s == screens[len(screens)-1] {
			break
		}
		screens = append(screens, s)
	}
	return screens
}

// PgDn alone, page after page, shows every line of the change: the whole Reason,
// both halves of a wrapped line, every context and changed line, none skipped,
// at 40×18 and 80×24 (and back up with PgUp); each page keeps the last line of
// the one before. Then a approves.
func TestPageDownSkipsNoLine(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			m, fr := openSized(t, clk, spreadCodeProposal(), sz[0], sz[1])
			d := m.dlg.(*proposalDialog)
			view(m)
			body := make([]string, len(d.body))
			for i, l := range d.body {
				body[i] = strings.TrimSpace(ansi.Strip(l))
			}
			for _, key := range []string{"pgdown", "pgup"} {
				screens := pageThrough(m, key)
				if len(screens) < 3 && sz[1] < 40 {
					t.Fatalf("%s did not page:\n%s", key, screens[0])
				}
				rows := map[string]bool{}
				for i, s := range screens {
					page := dialogLines(s)
					for _, r := range page {
						rows[r] = true
					}
					if i == 0 {
						continue
					}
					// Each page keeps one line of the page before: the line at its edge.
					prev := map[string]bool{}
					for _, r := range dialogLines(screens[i-1]) {
						prev[r] = !strings.Contains(r, "line") || strings.Contains(r, "CODE") || strings.Contains(r, "NEW")
					}
					kept := false
					for _, r := range page {
						kept = kept || (r != "" && prev[r] && !strings.HasPrefix(r, "into ") && !strings.HasPrefix(r, "Proposed change") &&
							!strings.Contains(r, "approve") && !strings.Contains(r, "reject"))
					}
					if !kept {
						t.Errorf("%s: page %d keeps no line of the page before:\n%s\n----\n%s", key, i, screens[i-1], s)
					}
				}
				for i, b := range body {
					if b != "" && !rows[b] {
						t.Fatalf("%s: line %d of the change %q is never on screen; pages:\n%s", key, i, b, strings.Join(screens, "\n----\n"))
					}
				}
			}
			press(m, "end")
			view(m)
			clk.Advance(time.Second)
			pumpRun(m, press(m, "a"))
			if _, res := fr.calls(); len(res) != 1 || !res[0].Approved {
				t.Fatalf("a after reading every page did not approve: %+v\n%s", res, view(m))
			}
		})
	}
}

// Approving waits until every line of the change has been on screen: jumping to
// the end (End) leaves lines unread, so a and A are refused with a sentence that
// says how many and what to press; r rejects at once. Reading on, a approves.
func TestApproveWaitsForEveryLine(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, fr := openSized(t, clk, spreadCodeProposal(), 80, 24)
	view(m)
	press(m, "end")
	view(m)
	clk.Advance(time.Second)
	for _, k := range []string{"a", "A"} {
		runCmd(m, press(m, k))
		clk.Advance(time.Second)
		if _, res := fr.calls(); len(res) != 0 || m.dlg == nil {
			t.Fatalf("%s approved a change not read through: %+v", k, res)
		}
		if v := view(m); !strings.Contains(v, "lines unread: pgdn reads on, then "+k) {
			t.Errorf("%s refused without saying why:\n%s", k, v)
		}
	}
	press(m, "up", "down") // the note goes with the next key; the hints stay
	if v := view(m); !strings.Contains(v, "pgdn read on") || strings.Contains(v, "a approve · r reject · esc later") {
		t.Errorf("the status bar offers to approve a change not read through:\n%s", v)
	}
	press(m, "home")
	view(m)
	for range 100 {
		press(m, "pgdown")
		view(m)
	}
	clk.Advance(time.Second)
	pumpRun(m, press(m, "a"))
	if _, res := fr.calls(); len(res) != 1 || !res[0].Approved {
		t.Fatalf("a after reading on: %+v\n%s", res, view(m))
	}

	// Rejecting needs no reading.
	m, fr = openSized(t, clk, spreadCodeProposal(), 80, 24)
	view(m)
	clk.Advance(time.Second)
	pumpRun(m, press(m, "r"))
	if _, res := fr.calls(); len(res) != 1 || res[0].Approved {
		t.Fatalf("r on an unread change: %+v", res)
	}
}

// The help screen and a tool call's whole result page the same way: every line
// reachable with PgDn alone, at the smallest size.
func TestEveryViewerPagesWithoutSkipping(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		m := newTestModel(t, testOptions())
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		m.opts.Runner = &fakeRunner{}
		startQuestion(t, m, "q")
		var long []string
		for i := range 60 {
			long = append(long, fmt.Sprintf("RESULT%02d", i))
		}
		call := convo.ToolCall{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}
		feed(m, convo.Event{Type: convo.EventToolStart, ToolCall: call},
			convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: strings.Join(long, "\n")})
		end(m, agent.Result{}, nil)
		press(m, "tab")
		press(m, "enter")
		if _, ok := m.dlg.(*textViewer); !ok {
			t.Fatalf("enter opened %T", m.dlg)
		}
		screens := pageThrough(m, "pgdown")
		keepsOverlap(t, "the result viewer", screens)
		all := strings.Join(screens, "\n")
		for _, l := range long {
			if !strings.Contains(all, l) {
				t.Errorf("%dx%d: the result viewer never shows %s", sz[0], sz[1], l)
			}
		}
		press(m, "esc")

		press(m, "f1")
		h, ok := m.dlg.(*helpDialog)
		if !ok {
			t.Fatalf("f1 opened %T", m.dlg)
		}
		rows := map[string]bool{}
		screens = pageThrough(m, "pgdown")
		keepsOverlap(t, "the help", screens)
		for _, s := range screens {
			for _, r := range dialogLines(s) {
				rows[r] = true
			}
		}
		for _, l := range helpLines(h.lk.th, max(20, min(sz[0], helpWidth)-4), helpSections(m.km)) {
			if l = strings.TrimSpace(ansi.Strip(l)); l != "" && !rows[l] {
				t.Errorf("%dx%d: the help never shows %q", sz[0], sz[1], l)
			}
		}
	}
}

// keepsOverlap checks that each page starts with a line of text the page before
// showed: the first row after the title (and after "↑ … above") was on it.
func keepsOverlap(t *testing.T, what string, screens []string) {
	t.Helper()
	if len(screens) < 2 {
		t.Errorf("%s: PgDn did not move", what)
	}
	for i := 1; i < len(screens); i++ {
		rows := dialogLines(screens[i])
		j := 1 // the title
		for j < len(rows) && (strings.Contains(rows[j], "above (↑") || rows[j] == "") {
			j++
		}
		if j >= len(rows) {
			continue
		}
		if !slices.Contains(dialogLines(screens[i-1]), rows[j]) {
			t.Errorf("%s: page %d starts with %q, which the page before did not show:\n%s\n----\n%s", what, i, rows[j], screens[i-1], screens[i])
		}
	}
}

// The picture under the diff draws the same change again: approving waits for
// the text of the change, not for the last line of the picture.
func TestApproveNeedsNotThePicture(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m, fr := openSized(t, clk, sampleProposal(), 80, 24)
	d := m.dlg.(*proposalDialog)
	w := max(20, min(80, 100)-4)
	var pic []string
	for i := range 30 {
		pic = append(pic, fmt.Sprintf("PICTURE%02d", i))
	}
	d.pic, d.body = &changePicture{proposalID: "call_9", ready: true, lines: pic, w: w}, nil
	if v := view(m); !strings.Contains(v, "− edge e2") || strings.Contains(v, "PICTURE29") {
		t.Fatalf("the text of the change should fit, the picture not:\n%s", v)
	}
	clk.Advance(time.Second)
	pumpRun(m, press(m, "a"))
	if _, res := fr.calls(); len(res) != 1 || !res[0].Approved {
		t.Fatalf("a with the whole text on screen and the picture not: %+v\n%s", res, view(m))
	}
}
