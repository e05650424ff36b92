package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/internal/testbin"
	"github.com/nodius/nodius-ai/mcpserver"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
)

// fixOpts shape one server under test.
type fixOpts struct {
	role      string                                  // default editor
	policy    map[datasource.ActionType]config.Policy // default ask for every type
	graphJSON []byte                                  // default the demo graph
	client    string                                  // the client's name, default "test-client"
	maxRead   int                                     // Options.MaxResourceBytes
	graph     string                                  // the graph served, default the file's ("home": home mode)
}

// fixture is a server over a real graph file and a real threads database, and an SDK
// client connected to it in-process.
type fixture struct {
	t       testing.TB
	ctx     context.Context
	srv     *mcpserver.Server
	cs      *mcp.ClientSession
	src     *file.Source
	store   *threads.Store
	rt      *rag.Retriever
	path    string // the graph file
	db      string // the threads database
	updates chan string
}

func newFixture(t testing.TB, o fixOpts) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	if o.graphJSON == nil {
		o.graphJSON = demo.JSON()
	}
	if o.client == "" {
		o.client = "test-client"
	}
	if o.role == "" {
		o.role = "editor"
	}
	path := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(path, o.graphJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "threads.db")
	store, err := threads.Open(ctx, db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ropts := rag.DefaultOptions()
	ropts.CacheTTL = 0
	rt := rag.New(src, ropts, nil)
	policy := o.policy
	if policy == nil {
		policy = map[datasource.ActionType]config.Policy{}
	}
	ag := agent.New(agent.Options{Source: src, Store: store, Retriever: rt, Role: o.role, Policy: policy,
		NoProvider: &configErr{}})
	if o.graph == "" {
		o.graph = src.GraphKey()
	}
	srv, err := mcpserver.New(ctx, mcpserver.Options{Agent: ag, Source: src, Retriever: rt, Proposals: store,
		Graph: o.graph, Graphs: src.Store().GraphKeys(),
		DecideFlags: " --source file:" + path + " --db " + db, Version: "test", Poll: 20 * time.Millisecond,
		MaxResourceBytes: o.maxRead})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, srv: srv, src: src, store: store, rt: rt, path: path, db: db, updates: make(chan string, 100)}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	go srv.Watch(ctx)
	client := mcp.NewClient(&mcp.Implementation{Name: o.client, Version: "1.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			f.updates <- r.Params.URI
		},
	})
	f.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cs.Close() })
	return f
}

type configErr struct{}

func (configErr) Error() string { return "no LLM provider configured" }

// call calls a tool with arguments given as a JSON text (sent as is).
func (f *fixture) call(name, args string) *mcp.CallToolResult {
	f.t.Helper()
	var a any
	if args != "" {
		a = json.RawMessage(args)
	}
	res, err := f.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		f.t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// text is the text of a result's content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// waitUpdate waits for a resources/updated notification of uri.
func (f *fixture) waitUpdate(uri string) {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-f.updates:
			if got == uri {
				return
			}
		case <-deadline:
			f.t.Fatalf("no resources/updated for %s within 10 s", uri)
		}
	}
}

// readJSON reads a resource and decodes its JSON text.
func (f *fixture) readJSON(uri string, into any) {
	f.t.Helper()
	res, err := f.cs.ReadResource(f.ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		f.t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		f.t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), into); err != nil {
		f.t.Fatalf("read %s: %v\n%s", uri, err, res.Contents[0].Text)
	}
}

// fileNodes reads the graph file as a person's editor would: node keys -> node.
func fileNodes(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, n := range doc.Nodes {
		out[n["_key"].(string)] = n
	}
	return out
}

var (
	buildOnce sync.Once
	binPath   string
	binClean  = func() {}
	buildErr  error
)

// binary builds nodius-ai once per test run (or takes the one CI built, see package
// testbin) and returns its path.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { binPath, binClean, buildErr = testbin.Build() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// isolatedEnv is an environment of one person with nothing configured: a fresh home,
// no provider keys.
func isolatedEnv(t testing.TB) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "c"), "XDG_DATA_HOME=" + filepath.Join(home, "d"),
		"XDG_STATE_HOME=" + filepath.Join(home, "s")}
	for _, k := range []string{"GOCACHE", "GOPATH", "GOMODCACHE", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func TestMain(m *testing.M) {
	code := m.Run()
	binClean() // removes a binary of this test process's own, never the shared one
	os.Exit(code)
}

// startHTTP serves h on a loopback port for the test and returns its base URL.
func startHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// httpClient sends header as Authorization on every request (none when empty).
type httpClient struct{ header string }

func (c *httpClient) client() *http.Client { return &http.Client{Transport: c} }

func (c *httpClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if c.header != "" {
		r.Header.Set("Authorization", c.header)
	}
	return http.DefaultTransport.RoundTrip(r)
}
