package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioReadNodeDetail: read_node_detail calls on the demo graph, one after
// the other, through the built binary over stdio (the SDK's client, a real process,
// real pipes). The target is 1,000 calls in under 2 s: ms/1000calls < 2000.
func BenchmarkStdioReadNodeDetail(b *testing.B) {
	benchEnv := strings.Fields(os.Getenv("NODIUS_AI_BENCH_ENV"))
	bin := binary(b)
	ctx := context.Background()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(isolatedEnv(b), benchEnv...)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "read_node_detail", Arguments: map[string]any{"nodeKey": "fetch-api"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError || !strings.Contains(text(res), "key: fetch-api") {
			b.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "ms/1000calls")
	// The server's own CPU time: what the calls cost nodius-ai, whatever else the
	// machine is doing meanwhile.
	cs.Close()
	if st := cmd.ProcessState; st != nil {
		b.ReportMetric(float64((st.UserTime()+st.SystemTime()).Microseconds())/float64(b.N), "server-cpu-ms/1000calls")
	}
}

// BenchmarkInProcessReadNodeDetail is the same call through in-memory transports: the
// cost of the server and the SDK without the process and the pipes.
func BenchmarkInProcessReadNodeDetail(b *testing.B) {
	f := newFixture(b, fixOpts{}).cs
	params := &mcp.CallToolParams{Name: "read_node_detail", Arguments: map[string]any{"nodeKey": "fetch-api"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := f.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
}
