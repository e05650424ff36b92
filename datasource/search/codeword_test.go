package search

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func TestCodeWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"which step reads sms replies", nil},
		{"which step reads sms_replies?", []string{"sms_replies"}},
		{"where is SEPA_INSTANT set", []string{"sepa_instant"}},
		{"where is libmp3lame used", []string{"libmp3lame"}},
		{"who reads retryBackoffMs", []string{"retrybackoffms"}},
		{"the check-in desk", []string{"check-in"}},
		{"which trigger listens on /hooks/claims/first-notice", []string{"hooks/claims/first-notice", "first-notice", "claims/first-notice"}},
		{"POST https://api.example.com/v2/orders", []string{"api.example.com/v2/orders", "v2", "v2/orders"}},
		{"`${d.claimNo}`", []string{"d.claimno", "claimno"}},
		{"Où est ÉTAT_CIVIL ?", []string{"etat_civil"}},
		{"...d, next(0, d); end.", nil},           // marks at the ends are trimmed
		{"version 3.5 on 2024-01-02, 10-20", nil}, // no letter: not a word
		{"a\xff_b x\xffY_z", []string{"y_z"}},     // invalid bytes separate, never panic
		{"", nil},
	}
	for _, tt := range tests {
		if got := CodeWords(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CodeWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// rankOf is the 1-based rank of key in ix's ranking of query (0 when absent).
func rankOf(ix *Index, nodes []datasource.Node, query, key string) int {
	for i, h := range ix.Search(query, 0) {
		if nodes[h.Index].Key == key {
			return i + 1
		}
	}
	return 0
}

// A question that writes an identifier, a constant or a path exactly finds the node
// whose code or data holds it written so, above a node that only has its parts —
// even many times, and in the fields that weigh more.
func TestExactCodeWordBeatsItsParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		gold, decoy datasource.Node
		query       string
	}{
		{"snake_case table in SQL",
			datasource.Node{Key: "proc-19", Type: "db-query", Process: `const r = await db.query("SELECT id FROM sms_replies WHERE body ILIKE 'C%'")`},
			datasource.Node{Key: "sms-inbox", Type: "sms-replies", Process: `// read the SMS replies: every reply to an SMS is stored
const replies = await sms.fetchReplies(); for (const reply of replies) sms.ack(reply)`},
			"which step reads sms_replies"},
		{"constant in data",
			datasource.Node{Key: "step-12", Type: "bank-transfer", Data: map[string]any{"scheme": "SEPA_INSTANT"}},
			datasource.Node{Key: "sepa-mandate", Type: "sepa", Process: "// instant SEPA mandate: sign the SEPA mandate instantly, instant check",
				Data: map[string]any{"instant": true, "note": "SEPA instant"}},
			"where is SEPA_INSTANT set"},
		{"URL path in data",
			datasource.Node{Key: "fn-1", Type: "webhook-trigger", Data: map[string]any{"path": "/hooks/claims/first-notice"}},
			datasource.Node{Key: "notice-intake", Type: "webhook-trigger", Process: `// listens for the first notice of claims: hooks for claims, first notice
next(0, { claims: body.claims, notice: "first notice" })`, Data: map[string]any{"path": "/hooks/claims"}},
			"which trigger listens on /hooks/claims/first-notice"},
		{"camelCase field",
			datasource.Node{Key: "util-4", Type: "transform", Process: "const wait = cfg.retryBackoffMs * 2"},
			datasource.Node{Key: "wait-policy", Type: "retry", Process: "// retry with backoff: retry after a backoff of some ms, backoff doubles each retry",
				Data: map[string]any{"backoff": "ms"}},
			"who reads retryBackoffMs"},
		{"dotted name",
			datasource.Node{Key: "proc-2", Type: "transform", Process: "next(0, { total: order.lines.total })"},
			datasource.Node{Key: "sum-up", Type: "transform", Process: "// total of the order lines: sum the lines of each order, the order total"},
			"where is order.lines.total computed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nodes := []datasource.Node{tt.decoy, tt.gold, {Key: "root", Type: "starter"}, {Key: "return", Type: "return"}}
			ix := New(nodes, nil)
			if r := rankOf(ix, nodes, tt.query, tt.gold.Key); r != 1 {
				t.Errorf("%q: %s ranked %d, want 1 above %s", tt.query, tt.gold.Key, r, tt.decoy.Key)
			}
			// Written as plain words, the question is the decoy's: the whole word
			// is what tells them apart.
			plain := strings.Join(Tokens(tt.query), " ")
			if r := rankOf(ix, nodes, plain, tt.decoy.Key); r != 1 {
				t.Errorf("%q: %s ranked %d, want 1 (the test's decoy must win on the parts alone)", plain, tt.decoy.Key, r)
			}
		})
	}
}

// Whole code words change nothing for a question in plain words: an index whose
// nodes write customer_id gives the same hits and the same scores as one whose
// nodes write "customer id", for every plain query (the words' own terms, their
// stems, prefixes and lexicon meanings, and the fields' lengths are the same).
func TestPlainQueryUnchangedByCodeWords(t *testing.T) {
	t.Parallel()
	build := func(sep string) *Index {
		w := func(a, b string) string { return a + sep + b }
		return NewGraph(datasource.Snapshot{
			Graph: datasource.Graph{Sheets: map[string]string{"0": w("main", "flow")}},
			Nodes: []datasource.Node{
				{Key: "load", Type: w("db", "query"), Sheet: "0", Process: "SELECT * FROM customers WHERE " + w("customer", "id") + " = @id"},
				{Key: "proc-2", Type: "transform", Sheet: "0", Process: "const total = " + w("order", "total") + " * rate; // customer total",
					Data: map[string]any{w("tax", "rate"): 0.2, "mode": w("SEPA", "INSTANT")}},
				{Key: "notify", Type: w("send", "email"), Sheet: "0", Process: "send({ to: " + w("customer", "email") + " })"},
				{Key: "customers", Type: "transform", Process: "// customers and their orders"},
			},
			Edges: []datasource.Edge{{Source: "load", Target: "proc-2", Label: w("on", "success")}},
			Configs: []datasource.NodeConfig{
				{Key: w("send", "email"), DisplayName: "Send email", Description: "Sends a " + w("mail", "merge") + " message"},
			},
		})
	}
	code, plain := build("_"), build(" ")
	for _, q := range []string{
		"customer id", "which step reads the customer", "customers", "custom", "order total", "tax rate",
		"sepa instant", "send email", "Quel nœud envoie le courriel ?", "mail merge", "main flow", "on success",
	} {
		if a, b := code.Search(q, 0), plain.Search(q, 0); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: %v with code words, %v without", q, a, b)
		}
	}
	// The same question written as code does tell them apart.
	if a, b := code.Search("customer_id", 0), plain.Search("customer_id", 0); reflect.DeepEqual(a, b) {
		t.Errorf("customer_id: the same hits %v with and without the code word", a)
	}
}

// A search engine with its own word tokenizer gets the question's code words whole
// when its tokenizer would keep them whole too; plain questions send what they did.
func TestForServerSendsCodeWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"fetch api", []string{"fetch", "api", "fetchapi"}},
		{"who reads retryBackoffMs", []string{"reads", "retry", "backoff", "ms", "readsretry", "retrybackoff", "backoffms", "retrybackoffms"}},
		{"where is d.claimNo set", []string{"claim", "set", "claimset", "d.claimno", "claimno"}},
		{"/hooks/claims/first-notice", []string{"hooks", "claims", "first", "notice", "hooksclaims", "claimsfirst", "firstnotice"}},
	}
	for _, tt := range tests {
		if got := ForServer(tt.in).Words; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ForServer(%q).Words = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A node's key gives the index its code-shaped parts, not itself: the key named
// whole already ranks its node first (the key bonus), so that term would only take
// room in every node's postings.
func TestKeyCodeTermsLeaveTheKeyOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want []string
	}{
		{"fetch-orders-12", nil},
		{"-fetch_orders-", nil},
		{"api.example.com/v2/orders", []string{"=v2", "=v2/orders"}},
		{"read sms_replies", []string{"=sms_replies"}},
		{"fetch", nil},
	}
	for _, tt := range tests {
		if got := keyCodeTerms(tt.key, nil); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("keyCodeTerms(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
