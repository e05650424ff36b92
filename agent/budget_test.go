package agent

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
)

func TestFitHistory(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3000) // ~1000 tokens
	sys := convo.Message{Role: convo.System, Kind: convo.KindPrompt, Content: "prompt"}
	ctx := func(s string) convo.Message {
		return convo.Message{Role: convo.System, Kind: convo.KindContext, Content: s + big}
	}
	user := func(s string) convo.Message { return convo.Message{Role: convo.User, Content: s} }
	callMsg := convo.Message{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c1", Name: "read_node_detail", Arguments: "{}"}}}
	result := convo.Message{Role: convo.Tool, ToolCallID: "c1", Content: big}
	answer := convo.Message{Role: convo.Assistant, Content: "a"}
	h := []convo.Message{sys, ctx("c1"), user("q1"), callMsg, result, answer, ctx("c2"), user("q2"), answer, ctx("c3"), user("q3")}

	tests := []struct {
		name   string
		window int
		want   string // kinds of kept messages
	}{
		{"no window keeps all", 0, "P C U A T A C U A C U"},
		{"room for all", 100000, "P C U A T A C U A C U"},
		{"old contexts go first", completionReserve + 2300, "P U A T A U A C U"},
		{"then whole old turns, never a call without its result", completionReserve + 1200, "P U A C U"},
		{"current turn always kept", completionReserve + 10, "P C U"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fitHistory(h, tt.window, nil)
			var kinds []string
			for _, m := range got {
				switch {
				case m.Kind == convo.KindPrompt:
					kinds = append(kinds, "P")
				case m.Kind == convo.KindContext:
					kinds = append(kinds, "C")
				case m.Role == convo.User:
					kinds = append(kinds, "U")
				case m.Role == convo.Tool:
					kinds = append(kinds, "T")
				default:
					kinds = append(kinds, "A")
				}
			}
			if s := strings.Join(kinds, " "); s != tt.want {
				t.Fatalf("kept %s, want %s", s, tt.want)
			}
			// Every tool result follows its call.
			calls := map[string]bool{}
			for _, m := range got {
				for _, c := range m.ToolCalls {
					calls[c.ID] = true
				}
				if m.Role == convo.Tool && !calls[m.ToolCallID] {
					t.Fatalf("result %s without its call", m.ToolCallID)
				}
			}
		})
	}
}
