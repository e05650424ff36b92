package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "999"}, MaxRetryAfter},
		{map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for attempt := 1; attempt <= 10; attempt++ {
		d := backoff(attempt, time.Second, 20*time.Second)
		base := min(time.Second<<(attempt-1), 20*time.Second)
		if d < base*3/4 || d > base*5/4 {
			t.Errorf("attempt %d: %v outside ±25%% of %v", attempt, d, base)
		}
	}
}

func TestNetworkMessages(t *testing.T) {
	t.Parallel()
	w := who{provider: "deepseek", baseURL: "https://user:pw@api.deepseek.com/v1", key: "sk-123456"}
	if h := w.host(); h != "api.deepseek.com" {
		t.Errorf("host %q", h)
	}
	if s := w.scrub("bad key sk-123456 given"); s != "bad key *** given" {
		t.Errorf("scrub %q", s)
	}
}
