package chatstream_test

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/nodius/nodius-ai/agent/llm/chatstream"
	"github.com/nodius/nodius-ai/config"
)

// chunked returns its data at most n bytes per Read, as a network would.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// parseStream runs the stream parser over body as package llm's OpenAI provider does, with small
// limits so that the fuzzer reaches them.
func parseStream(body io.Reader) (chatstream.Reply, error) {
	resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(body)}
	lim := config.Limits{MaxAnswerBytes: 4096, MaxReasoningBytes: 4096, MaxToolCalls: 8, MaxToolArgsBytes: 2048}
	chatstream.LimitLines(resp, lim)
	acc := chatstream.NewAccumulator("m", lim)
	err := acc.Stream(ssestream.NewDecoder(resp), func() {}, func(chatstream.Delta) {})
	return acc.Finish(func(chatstream.Delta) {}), err
}

// FuzzStream: no stream makes the parser panic or keep more than the limits allow,
// and a stream read whole or in pieces of any size gives the same reply.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3}}\r\n\r\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"search_nodes\",\"arguments\":\"{\\\"q\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"\\\":1}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"x\",\"arguments\":{\"k\":1}}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"y\"}}]}}]}\n\n",
		": keep-alive\n\nevent: x\ndata: {\"error\":{\"message\":\"boom\"}}\n\n", "data: {\"choices\":[\n\n", "garbage\x00\xff\n", "",
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		whole, werr := parseStream(bytes.NewReader(data))
		parts, perr := parseStream(&chunked{data: data, n: int(piece%64) + 1})
		if (werr == nil) != (perr == nil) || !reflect.DeepEqual(whole, parts) {
			t.Fatalf("whole and chunked differ:\n%+v %v\n%+v %v", whole, werr, parts, perr)
		}
		if len(whole.Content) > 4096 || len(whole.Reasoning) > 4096 || len(whole.ToolCalls) > 8 {
			t.Fatalf("kept more than the limits: %d answer, %d reasoning, %d calls", len(whole.Content), len(whole.Reasoning), len(whole.ToolCalls))
		}
		for _, c := range whole.ToolCalls {
			if len(c.Arguments) > 2048 || strings.TrimSpace(c.ID) == "" {
				t.Fatalf("call %+v", c)
			}
		}
	})
}
