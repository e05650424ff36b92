package tokens

import (
	"strings"
	"sync"
	"testing"
)

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		{"你好", 1},
		{"🚀", 2},
		{"nodes[20]{_key,type,sheet,process}:", 12},
		{"<|endoftext|>", 7}, // special tokens in text are counted as text
		{"a\xffb", 3},        // invalid UTF-8 is counted, not rejected
		{strings.Repeat("1", 10000), 3334},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 20)], func(t *testing.T) {
			t.Parallel()
			if got := Count(tc.in); got != tc.want {
				t.Errorf("Count(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestCountConcurrent(t *testing.T) {
	t.Parallel()
	const text = "function process(input) { return input.map((x) => x * 2); }"
	want := Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := Count(text); got != want {
					t.Errorf("concurrent Count = %d, want %d", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{{"", 0}, {"abc", 0}, {"abcd", 1}, {strings.Repeat("x", 401), 100}} {
		if got := Estimate(tc.in); got != tc.want {
			t.Errorf("Estimate(%d bytes) = %d, want %d", len(tc.in), got, tc.want)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	// About 1,700 tokens of TOON-like text, the size of a retrieval context.
	text := strings.Repeat("  fetch-api,api-call,0,\"const res = await fetch(url); if (!res.ok) throw new Error(res.status);\"\n", 60)
	Count(text) // load the codec outside the timing
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Count(text)
	}
}
