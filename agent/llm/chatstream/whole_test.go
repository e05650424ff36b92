package chatstream_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/chatstream"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// A non-streamed response longer than every part of a reply may hold together is
// refused, and the message gives that bound and the keys it is made of — not one
// key's value, which the body may well exceed within the limits.
func TestWholeResponseOverItsBound(t *testing.T) {
	t.Parallel()
	lim := config.Limits{MaxAnswerBytes: 4096, MaxReasoningBytes: 4096, MaxToolCalls: 8, MaxToolArgsBytes: 2048}
	most := 4096 + 4096 + 8*2048 + config.StreamLineSlack
	for _, tc := range []struct {
		size    int
		refused bool
	}{{most, false}, {most + 1, true}} {
		body := `{"choices":[{"index":0,"message":{"content":"` + strings.Repeat("a", tc.size) + `"}}]}`
		body = body[:tc.size] // the exact size; a cut body is refused as JSON, not as a limit
		err := chatstream.NewAccumulator("m", lim).Whole(strings.NewReader(body), func(chatstream.Delta) {})
		var fe *fault.Error
		if got := errors.As(err, &fe) && fe.Code == fault.BudgetExceeded; got != tc.refused {
			t.Fatalf("%d bytes: error %v, want refused as over the limit: %v", tc.size, err, tc.refused)
		}
		if tc.refused {
			for _, want := range []string{strconv.Itoa(most), "max_answer_bytes", "max_reasoning_bytes", "max_tool_args_bytes"} {
				if !strings.Contains(fe.Message, want) {
					t.Errorf("message %q lacks %q", fe.Message, want)
				}
			}
		}
	}
}
