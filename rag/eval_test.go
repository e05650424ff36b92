package rag

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/nodius/nodius-ai/datasource"
)

// evalCase is one question with the node keys that answer it (any of them counts).
type evalCase struct {
	q    string
	want []string
}

// demoQuestions are asked about the embedded NBA demo graph.
var demoQuestions = []evalCase{
	{"Que fait le node fetch-api ?", []string{"fetch-api"}},
	{"what does fetchApi do?", []string{"fetch-api"}},
	{"which node handles errors?", []string{"error-handler"}},
	{"Quel nœud gère les erreurs de l'API ?", []string{"error-handler"}},
	{"where are inactive players removed?", []string{"filter-active"}},
	{"Comment les joueurs actifs sont-ils filtrés ?", []string{"filter-active"}},
	{"how is the HTML table rendered?", []string{"display-html"}},
	{"Où est affiché le tableau HTML ?", []string{"display-html"}},
	{"sort players by points", []string{"sort-stats"}},
	{"Comment les statistiques sont-elles triées ?", []string{"sort-stats"}},
	{"which form starts the workflow?", []string{"entry-form"}},
	{"Quelle est la saison par défaut du formulaire ?", []string{"entry-form"}},
	{"which node is not connected to anything?", []string{"disconnected-note"}},
	{"the TODO note about per-game splits", []string{"disconnected-note"}},
	{"which URL does the workflow call?", []string{"fetch-api"}},
	{"retry logic and timeout for the HTTP request", []string{"fetch-api"}},
	{"What does the return node do?", []string{"return"}},
	{"the starter node root", []string{"root"}},
	{"minimum games played threshold", []string{"filter-active", "entry-form"}},
	{"Qu'est-ce que error-handler écrit dans le journal ?", []string{"error-handler"}},
	{"balldontlie season averages", []string{"fetch-api"}},
	{"escape HTML special characters", []string{"display-html"}},
	{"does anything notify a webhook on failure?", []string{"error-handler"}},
	{"Explique-moi le nœud sort_stats", []string{"sort-stats"}},
}

// orderQuestions are asked about testdata/orders.json, an e-commerce order pipeline
// (41 nodes, 3 sheets) written for this evaluation.
var orderQuestions = []evalCase{
	{"Que fait le node charge-payment ?", []string{"charge-payment"}},
	{"which node calls the fraud detection service?", []string{"fraud-score"}},
	{"where is the sales tax computed?", []string{"compute-tax"}},
	{"Comment sont appliqués les codes promo ?", []string{"apply-discount"}},
	{"which step sends the order confirmation email?", []string{"confirmation-email"}},
	{"Où le stock est-il réservé ?", []string{"reserve-inventory"}},
	{"what happens when the card is declined?", []string{"payment-result", "payment-declined-email", "release-inventory"}},
	{"how is the tracking number saved?", []string{"update-tracking"}},
	{"Quel nœud génère la facture PDF ?", []string{"invoice-pdf"}},
	{"which node logs errors?", []string{"error-logger"}},
	{"Qui envoie une alerte à l'équipe ops sur Slack ?", []string{"alert-ops"}},
	{"refund eligibility window in days", []string{"refund-policy"}},
	{"Comment le remboursement est-il effectué ?", []string{"issue-refund"}},
	{"cheapest shipping rates from carriers", []string{"shipping-quote"}},
	{"what receives new orders from the storefront?", []string{"order-webhook"}},
	{"validate order fields and quantities", []string{"validate-order"}},
	{"what if items are out of stock?", []string{"stock-check", "backorder-notice"}},
	{"print the shipping label", []string{"print-label"}},
	{"tableau de bord des ventes quotidiennes", []string{"sales-report"}},
	{"wait before retrying the carrier API", []string{"retry-delay"}},
	{"mark the order as delivered", []string{"mark-delivered"}},
	{"audit trail of status changes", []string{"audit-log"}},
	{"libérer le stock quand le paiement échoue", []string{"release-inventory"}},
	{"how is the grand total computed?", []string{"order-total"}},
	{"pick list for the warehouse", []string{"pick-list"}},
	{"high risk orders go to manual review", []string{"fraud-gate", "manual-review-queue"}},
	{"Comment le numéro de suivi est-il envoyé au client ?", []string{"shipping-email"}},
	{"persist the paid order in the database", []string{"save-order"}},
}

type metrics struct {
	n               int
	hit1, hit5, mrr float64
	misses          []string
}

func (m *metrics) add(q string, ranking, want []string) {
	m.n++
	rank := 0
	for i, k := range ranking {
		for _, w := range want {
			if k == w {
				rank = i + 1
				break
			}
		}
		if rank > 0 {
			break
		}
	}
	if rank == 1 {
		m.hit1++
	} else {
		top := ranking
		if len(top) > 3 {
			top = top[:3]
		}
		m.misses = append(m.misses, q+" → "+strings.Join(top, ", "))
	}
	if rank >= 1 && rank <= 5 {
		m.hit5++
	}
	if rank > 0 {
		m.mrr += 1 / float64(rank)
	}
}

func (m *metrics) final() (hit1, hit5, mrr float64) {
	n := float64(m.n)
	return m.hit1 / n, m.hit5 / n, m.mrr / n
}

// baselineRanking is the naive scorer this package replaced (and the Nodius server's
// in-memory one): split the question on anything not a letter or digit, lowercase,
// and count the words found as substrings of a node's key, type, type name, code,
// data and type description. Ties keep the graph's order.
func baselineRanking(snap datasource.Snapshot, query string) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	cfg := map[string]datasource.NodeConfig{}
	for _, c := range snap.Configs {
		cfg[c.Key] = c
	}
	type scored struct {
		key   string
		score int
		i     int
	}
	var out []scored
	for i, n := range snap.Nodes {
		data, _ := json.Marshal(n.Data)
		c := cfg[n.Type]
		text := strings.ToLower(strings.Join([]string{n.Key, n.Type, c.DisplayName, n.Process, string(data), c.Description}, " "))
		s := 0
		for _, w := range words {
			if len(w) > 2 && strings.Contains(text, w) {
				s++
			}
		}
		if s > 0 {
			out = append(out, scored{n.Key, s, i})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	keys := make([]string, len(out))
	for i, s := range out {
		keys[i] = s.key
	}
	return keys
}

// TestRetrievalQuality measures the search ranking (Context.Hits) on hand-written
// questions over two graphs, text search only, against the naive baseline, and
// fails under the floor.
func TestRetrievalQuality(t *testing.T) {
	t.Parallel()
	sets := []struct {
		name  string
		snap  datasource.Snapshot
		cases []evalCase
	}{
		{"demo", demoSnapshot(t), demoQuestions},
		{"orders", loadDoc(t, "testdata/orders.json"), orderQuestions},
	}
	var all, allBase metrics
	t.Logf("%-8s %-9s %3s %6s %6s %6s", "graph", "ranker", "n", "Hit@1", "Hit@5", "MRR")
	for _, set := range sets {
		if len(set.cases) < 20 {
			t.Errorf("%s: only %d questions", set.name, len(set.cases))
		}
		r := New(newFakeSource(set.snap), Options{}, nil)
		var m, base metrics
		for _, c := range set.cases {
			ctx, err := r.Retrieve(context.Background(), set.snap.Graph.Key, c.q)
			if err != nil {
				t.Fatal(err)
			}
			m.add(c.q, hitKeys(ctx), c.want)
			all.add(c.q, hitKeys(ctx), c.want)
			b := baselineRanking(set.snap, c.q)
			base.add(c.q, b, c.want)
			allBase.add(c.q, b, c.want)
		}
		h1, h5, mrr := m.final()
		t.Logf("%-8s %-9s %3d %6.3f %6.3f %6.3f", set.name, "bm25f", m.n, h1, h5, mrr)
		h1, h5, mrr = base.final()
		t.Logf("%-8s %-9s %3d %6.3f %6.3f %6.3f", set.name, "baseline", base.n, h1, h5, mrr)
		for _, miss := range m.misses {
			t.Logf("  %s miss: %s", set.name, miss)
		}
	}
	h1, h5, mrr := all.final()
	t.Logf("%-8s %-9s %3d %6.3f %6.3f %6.3f", "all", "bm25f", all.n, h1, h5, mrr)
	bh1, bh5, bmrr := allBase.final()
	t.Logf("%-8s %-9s %3d %6.3f %6.3f %6.3f", "all", "baseline", allBase.n, bh1, bh5, bmrr)
	if h1 < 0.9 {
		t.Errorf("Hit@1 = %.3f, want >= 0.9", h1)
	}
	if h5 < 0.95 {
		t.Errorf("Hit@5 = %.3f, want >= 0.95", h5)
	}
	if h1 <= bh1 {
		t.Errorf("no gain over the baseline: %.3f vs %.3f", h1, bh1)
	}
}
