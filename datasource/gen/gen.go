// Package gen generates large, realistic-looking graphs for tests and benchmarks:
// the same seed and sizes always give the same graph, byte for byte, so benchmark
// figures and retrieval tests are comparable from run to run.
package gen

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// nodeType describes one generated custom node type: the verbs its node keys start
// with and the lines its process code is made of ({noun}, {field}, {n} are filled in).
type nodeType struct {
	key, name, desc, category, icon string
	errorOut                        bool // has a second output "1" for errors
	verbs                           []string
	lines                           []string
}

var types = []nodeType{
	{"api-call", "API Call", "Calls an HTTP API and routes the JSON response or the error.", "network", "globe", true,
		[]string{"fetch", "load", "pull", "sync"},
		[]string{
			`const res = await fetch("https://api.example.com/v2/{noun}?limit={n}", { headers: { Authorization: "Bearer " + env.API_TOKEN } });`,
			`if (!res.ok) throw new Error("{noun} request failed: " + res.status);`,
			`const body = await res.json();`,
			`next(0, body.items.map((item) => ({ id: item.id, {field}: item.{field} })));`,
			`await retry(() => fetch(url), { attempts: 3, backoffMs: 500 });`,
		}},
	{"db-query", "Database Query", "Runs a SQL query against the workspace database.", "data", "database", true,
		[]string{"query", "select", "lookup", "count"},
		[]string{
			`const rows = await db.query("SELECT id, {field} FROM {noun} WHERE updated_at > $1 LIMIT {n}", [incoming[0].data.since]);`,
			`next(0, rows);`,
			`if (rows.length === 0) console.warn("no {noun} found");`,
			`const total = rows.reduce((sum, row) => sum + row.{field}, 0);`,
		}},
	{"filter", "Filter", "Keeps the items of an array that match a condition.", "data", "filter", false,
		[]string{"filter", "keep", "drop", "select"},
		[]string{
			`const items = incoming[0].data.filter((item) => item.{field} !== null && item.status === "active");`,
			`next(0, items.filter((item) => item.{field} >= {n}));`,
			`const rejected = incoming[0].data.length - items.length;`,
		}},
	{"transform", "Transform", "Reshapes incoming data: map, sort, group or aggregate.", "data", "shuffle", false,
		[]string{"map", "sort", "group", "normalize", "enrich"},
		[]string{
			`const sorted = [...incoming[0].data].sort((a, b) => b.{field} - a.{field});`,
			`const grouped = Object.groupBy(incoming[0].data, (item) => item.{field});`,
			`next(0, sorted.slice(0, {n}).map((item) => ({ ...item, rank: sorted.indexOf(item) + 1 })));`,
			`const {noun}ById = new Map(incoming[0].data.map((item) => [item.id, item]));`,
		}},
	{"log-node", "Log Node", "Writes data or errors to the workflow log.", "utility", "file-text", false,
		[]string{"log", "trace", "audit"},
		[]string{
			`console.error("[{noun}] " + (incoming[0].error ?? incoming[0].data.error));`,
			`console.info("{noun} processed", incoming[0].data.length);`,
		}},
	{"send-email", "Send Email", "Sends an email through the workspace mail provider.", "messaging", "mail", true,
		[]string{"send", "notify", "email"},
		[]string{
			`await mail.send({ to: incoming[0].data.email, subject: "Your {noun} summary", html: render(incoming[0].data) });`,
			`next(0, { sent: true, {field}: incoming[0].data.{field} });`,
		}},
	{"webhook", "Webhook", "Receives or posts a webhook call.", "network", "link", false,
		[]string{"post", "receive", "forward"},
		[]string{
			`await fetch(env.WEBHOOK_URL, { method: "POST", body: JSON.stringify({ {noun}: incoming[0].data }) });`,
			`next(0, request.body.{field});`,
		}},
	{"validate", "Validate", "Checks data against a schema and routes invalid items to the error output.", "data", "check", true,
		[]string{"validate", "check", "verify"},
		[]string{
			`const errors = schema.{noun}.validate(incoming[0].data);`,
			`if (errors.length > 0) { next(1, { error: errors.join("; ") }); return; }`,
			`next(0, incoming[0].data);`,
		}},
	{"aggregate", "Aggregate", "Computes totals, averages and counts over an array.", "data", "sigma", false,
		[]string{"sum", "average", "aggregate", "total"},
		[]string{
			`const total = incoming[0].data.reduce((sum, item) => sum + item.{field}, 0);`,
			`next(0, { total, average: total / Math.max(1, incoming[0].data.length), count: incoming[0].data.length });`,
		}},
	{"cache", "Cache", "Caches a value for a while to spare slow calls.", "utility", "archive", false,
		[]string{"cache", "memoize", "store"},
		[]string{
			`const cached = await cache.get("{noun}:" + incoming[0].data.id);`,
			`if (cached) { next(0, cached); return; }`,
			`await cache.set("{noun}:" + incoming[0].data.id, incoming[0].data, { ttlSeconds: {n} });`,
		}},
	{"schedule", "Schedule", "Starts the flow on a cron schedule.", "trigger", "clock", false,
		[]string{"schedule", "every", "nightly"},
		[]string{`next(0, { firedAt: new Date().toISOString(), job: "{noun}" });`},
	},
	{"branch", "Branch", "Routes data to one of two outputs by a condition.", "control", "git-branch", true,
		[]string{"branch", "route", "switch"},
		[]string{
			`if (incoming[0].data.{field} > {n}) next(0, incoming[0].data); else next(1, incoming[0].data);`,
		}},
}

var builtinVerbs = map[string][]string{
	"starter":   {"start", "begin"},
	"return":    {"return", "finish"},
	"html":      {"render", "show", "display"},
	"entryType": {"form", "input"},
}

var nouns = []string{"orders", "users", "invoices", "players", "payments", "products", "events", "sessions",
	"reports", "tickets", "customers", "shipments", "reviews", "subscriptions", "leads", "metrics", "teams", "stats"}

var fields = []string{"amount", "score", "points", "createdAt", "email", "status", "total", "price", "rating", "country"}

var sheetNames = []string{"main", "ingest", "billing", "reporting", "notifications", "data-processing", "admin", "archive"}

// Configs returns the custom node type configs the generator uses (a dozen).
func Configs() []datasource.NodeConfig {
	out := make([]datasource.NodeConfig, len(types))
	for i, t := range types {
		out[i] = datasource.NodeConfig{Key: t.key, DisplayName: t.name, Description: t.desc,
			Category: t.category, Icon: t.icon, Handles: handles(t.errorOut)}
	}
	return out
}

func handles(errorOut bool) map[string]datasource.HandleGroup {
	out := []datasource.HandlePoint{{ID: "0", Type: "out", Accept: "any"}}
	if errorOut {
		out = append(out, datasource.HandlePoint{ID: "1", Type: "out", Accept: "any"})
	}
	return map[string]datasource.HandleGroup{
		"L": {Position: "separate", Point: []datasource.HandlePoint{{ID: "0", Type: "in", Accept: "any"}}},
		"R": {Position: "separate", Point: out},
	}
}

// Graph generates a graph with the given numbers of nodes and edges (no edges when
// there are fewer than two nodes), keyed "gen-{seed}". Nodes are spread over up to 8
// sheets; edges join nodes of one sheet, mostly near each other, so the graph looks
// like long flows with branches. Keys look like "fetch-orders-123".
func Graph(seed int64, nodes, edges int) datasource.Snapshot {
	if nodes < 0 {
		nodes = 0
	}
	if edges < 0 || nodes < 2 {
		edges = 0
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	nSheets := min(max(nodes/5000+1, 1), len(sheetNames))
	sheets := make(map[string]string, nSheets)
	for i := range nSheets {
		sheets[strconv.Itoa(i)] = sheetNames[i]
	}
	g := datasource.Graph{
		Key: fmt.Sprintf("gen-%d", seed), Name: fmt.Sprintf("Generated graph %d", seed),
		Description: fmt.Sprintf("%d generated nodes and %d edges for tests and benchmarks.", nodes, edges),
		Workspace:   "default", Sheets: sheets, Metadata: map[string]any{"generator": "nodius-ai/gen"},
	}
	builtins := []string{"starter", "return", "html", "entryType"}
	ns := make([]datasource.Node, nodes)
	errorOut := make([]bool, nodes)
	perSheet := (nodes + nSheets - 1) / max(nSheets, 1)
	var sb strings.Builder
	for i := range ns {
		sheet := 0
		if perSheet > 0 {
			sheet = i / perSheet
		}
		noun := nouns[rng.IntN(len(nouns))]
		field := fields[rng.IntN(len(fields))]
		n := datasource.Node{Sheet: strconv.Itoa(sheet), Size: datasource.Size{Width: 200, Height: 100}}
		var verb string
		if rng.IntN(100) < 12 {
			n.Type = builtins[rng.IntN(len(builtins))]
			vs := builtinVerbs[n.Type]
			verb = vs[rng.IntN(len(vs))]
			n.Handles = datasource.DefaultHandles(n.Type, nil) // Nodius's own
			if n.Type == "html" {
				n.Process = fmt.Sprintf("render(`<table class=\"%s\">${incoming[0].data.map((row) => `<tr><td>${row.%s}</td></tr>`).join(\"\")}</table>`);", noun, field)
			}
		} else {
			t := types[rng.IntN(len(types))]
			n.Type = t.key
			verb = t.verbs[rng.IntN(len(t.verbs))]
			n.Handles = handles(t.errorOut)
			errorOut[i] = t.errorOut
			sb.Reset()
			fmt.Fprintf(&sb, "// %s %s by %s\n", verb, noun, field)
			count := 1 + rng.IntN(len(t.lines))
			start := rng.IntN(len(t.lines))
			num := strconv.Itoa(10 + rng.IntN(990))
			for k := range count {
				fill(&sb, t.lines[(start+k)%len(t.lines)], noun, field, num)
				sb.WriteByte('\n')
			}
			n.Process = sb.String()
		}
		n.Key = verb + "-" + noun + "-" + strconv.Itoa(i)
		n.Data = map[string]any{"entity": noun, "field": field, "limit": float64(10 + rng.IntN(490))}
		local := i - sheet*perSheet
		n.PosX = float64((local % 40) * 260)
		n.PosY = float64((local / 40) * 160)
		ns[i] = n
	}
	es := make([]datasource.Edge, 0, edges)
	for i := range edges {
		s := rng.IntN(nodes)
		sheet := 0
		if perSheet > 0 {
			sheet = s / perSheet
		}
		lo, hi := sheet*perSheet, min((sheet+1)*perSheet, nodes)
		t := s
		if hi-lo > 1 {
			// Mostly short hops forward, as in a flow; wrap inside the sheet.
			t = lo + (s-lo+1+rng.IntN(min(20, hi-lo-1)))%(hi-lo)
		} else {
			// A sheet with one node: join it to itself rather than cross sheets.
			t = s
		}
		// The branch is drawn for the pair as drawn, before joinable, so that the
		// random sequence (and the rest of the graph) does not depend on it.
		label := ""
		if errorOut[s] {
			label = "success"
			if rng.IntN(4) == 0 {
				label = "error"
			}
		}
		s, t = joinable(ns, s, t, lo, hi)
		e := datasource.Edge{Key: "e-" + strconv.Itoa(i), Sheet: ns[s].Sheet, Source: ns[s].Key, SourceHandle: "0",
			Target: ns[t].Key, TargetHandle: inputOf(ns[t].Type)}
		if errorOut[s] {
			e.Label = cmp.Or(label, "success")
			if label == "error" {
				e.SourceHandle = "1"
			}
		}
		es = append(es, e)
	}
	return datasource.Snapshot{Graph: g, Nodes: ns, Edges: es, Configs: Configs()}
}

// inputOf is the id of the input point of a node of type typ: "1" for a starter or
// an HTML node (their entry input, in the middle), "0" otherwise; "" for an entry
// form, which has no input. Every output the generator uses is point "0" (or "1",
// the error output of a custom type).
func inputOf(typ string) string {
	switch typ {
	case "starter", "html":
		return "1"
	case "entryType":
		return ""
	}
	return "0"
}

// joinable turns the pair s → t drawn for an edge into one the handles allow: a
// return has no output and an entry form no input (datasource.DefaultHandles), so
// such a pair is turned round, or else its target (then its source) moves on to the
// next node of the sheet [lo, hi) that fits. It draws no random numbers. A sheet
// with no fitting pair (one node, say) keeps the edge as drawn.
func joinable(ns []datasource.Node, s, t, lo, hi int) (int, int) {
	hasOut := func(i int) bool { return ns[i].Type != "return" }
	hasIn := func(i int) bool { return ns[i].Type != "entryType" }
	if hasOut(s) && hasIn(t) {
		return s, t
	}
	if hasOut(t) && hasIn(s) && s != t {
		return t, s
	}
	size := hi - lo
	for k := 1; k < size; k++ {
		if c := lo + (t-lo+k)%size; hasOut(s) && hasIn(c) && c != s {
			return s, c
		}
		if c := lo + (s-lo+k)%size; hasOut(c) && hasIn(t) && c != t {
			return c, t
		}
	}
	return s, t
}

// fill writes line with {noun}, {field} and {n} replaced.
func fill(sb *strings.Builder, line, noun, field, num string) {
	for {
		i := strings.IndexByte(line, '{')
		if i < 0 {
			sb.WriteString(line)
			return
		}
		sb.WriteString(line[:i])
		rest := line[i:]
		switch {
		case strings.HasPrefix(rest, "{noun}"):
			sb.WriteString(noun)
			line = rest[len("{noun}"):]
		case strings.HasPrefix(rest, "{field}"):
			sb.WriteString(field)
			line = rest[len("{field}"):]
		case strings.HasPrefix(rest, "{n}"):
			sb.WriteString(num)
			line = rest[len("{n}"):]
		default:
			sb.WriteByte('{')
			line = rest[1:]
		}
	}
}
