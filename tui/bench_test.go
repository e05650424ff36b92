package tui

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// history builds n messages alternating questions and markdown answers.
func history(n int) []convo.Message {
	msgs := make([]convo.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		msgs = append(msgs, convo.Message{Role: convo.User, Content: fmt.Sprintf("question %d about @fetch-api?", i)})
		msgs = append(msgs, convo.Message{Role: convo.Assistant, Content: fmt.Sprintf(
			"## Answer %d\n\nThe node **fetch-api** calls the stats endpoint.\n\n- it retries twice\n- it returns `games`\n\n```js\nreturn fetch(url)\n```\n", i)})
	}
	return msgs[:n]
}

func streamingModel(b *testing.B, n int) *Model {
	b.Helper()
	m := New(Options{Runner: &fakeRunner{}, GraphKey: "demo", Dark: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.loadHistory(history(n), nil)
	m.View()
	typeText(m, "and then?")
	m.Update(keyMsg("enter"))
	feed(m, tok("Streaming answer begins.\n\n"))
	m.View()
	return m
}

// BenchmarkStreamToken is one streamed token's Update+View with 1,000 earlier
// messages (target < 1 ms). Tokens between frames only append; the frame variant
// adds the 33 ms repaint of the unfinished tail.
// The tagged variant streams the assistant's tags ({{node:K}}), which every
// repaint of the tail turns into names.
func BenchmarkStreamToken(b *testing.B) {
	for _, c := range []struct {
		withFrame bool
		token     string
	}{{false, "word "}, {true, "word "}, {true, "see {{node:fetch-api}} "}} {
		withFrame := c.withFrame
		b.Run(fmt.Sprintf("frame=%v/tagged=%v", withFrame, strings.Contains(c.token, "{{")), func(b *testing.B) {
			m := streamingModel(b, 1000)
			msg := runBatchMsg{runID: m.run.id, items: []runItem{{ev: tok(c.token)}}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%200 == 199 {
					m.Update(runBatchMsg{runID: m.run.id, items: []runItem{{ev: tok("\n\n")}}})
				}
				m.Update(msg)
				if withFrame {
					m.Update(frameMsg{})
				}
				_ = m.View()
			}
		})
	}
}

// BenchmarkAnswer2000TokensAt500PerSecond replays a 2,000-token answer arriving
// every 2 ms with a frame every 33 ms, each message followed by a View (as Bubble
// Tea does). load = CPU time / stream time; below 1 it keeps up.
func BenchmarkAnswer2000TokensAt500PerSecond(b *testing.B) {
	const tokens, every = 2000, 2 * time.Millisecond
	words := strings.Fields("The fetch-api node calls the NBA endpoint, then filter keeps the games of the day and the return node sends them. ")
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := streamingModel(b, 100)
		b.StartTimer()
		start := time.Now()
		next := frameInterval
		for k := 0; k < tokens; k++ {
			t := tok(words[k%len(words)] + " ")
			if k%60 == 59 {
				t = tok("\n\n")
			}
			m.Update(runBatchMsg{runID: m.run.id, items: []runItem{{ev: t}}})
			_ = m.View()
			if time.Duration(k)*every >= next {
				m.Update(frameMsg{})
				_ = m.View()
				next += frameInterval
			}
		}
		b.ReportMetric(time.Since(start).Seconds()/(tokens*every).Seconds(), "load")
	}
}

// BenchmarkTranscriptMemory measures the heap held by a 1,000-message transcript
// rendered in full (target < 100 MB).
func BenchmarkTranscriptMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := New(Options{Runner: &fakeRunner{}, GraphKey: "demo", Dark: true})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
		m.loadHistory(history(1000), nil)
		for _, e := range m.tr.entries { // render everything, as a full scroll-through would
			e.render(100)
		}
		m.View()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB")
		runtime.KeepAlive(m)
	}
}

// TestIdleProducesNoTicks runs the real program and counts frame ticks: none while
// idle, and none once a run has ended.
func TestIdleProducesNoTicks(t *testing.T) {
	t.Parallel()
	var frames atomic.Int64
	count := func(_ tea.Model, msg tea.Msg) tea.Msg {
		if _, ok := msg.(frameMsg); ok {
			frames.Add(1)
		}
		return msg
	}
	fr := &fakeRunner{}
	m := New(Options{Runner: fr, GraphKey: "demo", NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24), teatest.WithProgramOptions(tea.WithFilter(count)))
	time.Sleep(300 * time.Millisecond)
	if n := frames.Load(); n != 0 {
		t.Fatalf("%d frame ticks while idle", n)
	}
	tm.Type("hi")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	time.Sleep(200 * time.Millisecond) // the run ends at once; at most one tick follows
	after := frames.Load()
	time.Sleep(300 * time.Millisecond)
	if n := frames.Load(); n != after {
		t.Fatalf("ticks went on after the run ended: %d → %d", after, n)
	}
	if sends, _ := fr.calls(); len(sends) != 1 {
		t.Fatalf("sends = %d", len(sends))
	}
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	_ = agent.Result{}
}

// BenchmarkMentionKeystroke100k is one keystroke in the editor with @ completion
// over 100,000 nodes, Update and View: typing "@fetch-orders-12" and erasing it
// again, key by key. max-ms is the slowest keystroke seen (target < 16 ms).
func BenchmarkMentionKeystroke100k(b *testing.B) {
	m := New(Options{Runner: &fakeRunner{}, GraphKey: "gen-1", NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(nodesLoadedMsg{c: newCompletion(genRefs(100_000))})
	word := "ask @fetch-orders-12"
	var keys []tea.KeyPressMsg
	for _, r := range word {
		keys = append(keys, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	for range word {
		keys = append(keys, tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	var worst time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		m.Update(keys[i%len(keys)])
		m.View()
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
}

// BenchmarkMentionFullScan100k is the costliest keystroke of @ completion over
// 100,000 nodes: the first letter after @ (or a letter typed after erasing),
// which scans every key; the letters after it scan only what matched.
func BenchmarkMentionFullScan100k(b *testing.B) {
	c := newCompletion(genRefs(100_000))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.typed = c.typed[:0]
		c.find(string(rune('a'+i%26)), 6)
	}
}
