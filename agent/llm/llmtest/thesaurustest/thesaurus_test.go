package thesaurustest

import (
	"errors"
	"testing"
)

// TestParaphrasesLandClose: what the model is for — a text and its paraphrase or
// French translation, sharing no word, are closer than the text and an unrelated one.
// The first rows' words are in the search package's lexicon too, whose concepts
// alone bring them close; the last rows' are not, so they hold what the dictionaries
// add: WordNet's senses (the English paraphrases) and FreeDict's translations (the
// French questions). Each of those fails if its dictionary is no longer used.
func TestParaphrasesLandClose(t *testing.T) {
	t.Parallel()
	m := ForTest(t)
	cos := func(a, b string) float64 {
		va, vb := m.Embed(a), m.Embed(b)
		var d float64
		for i := range va {
			d += float64(va[i]) * float64(vb[i])
		}
		return d
	}
	tests := []struct{ text, close, far string }{
		{"email the customer", "send a message to the client", "compute the sales tax"},
		{"refund the payment", "give the buyer their money back", "resize the uploaded image"},
		{"wait before retrying", "pause, then try again", "translate the invoice"},
		{"check the order", "Qui vérifie la commande ?", "Qui archive les journaux ?"},
		{"delete the file", "Où supprime-t-on le fichier ?", "Où envoie-t-on le courriel ?"},
		{"call the doctor", "phone the physician", "wash the car"},
		{"hire a lawyer", "engage an attorney", "feed the animals"},
		{"the child is sick", "the kid is ill", "the garden is green"},
		{"bake the bread", "Qui cuit le pain ?", "Qui lave la voiture ?"},
		{"feed the horses", "Qui nourrit les chevaux ?", "Qui appelle le médecin ?"},
	}
	for _, tt := range tests {
		near, far := cos(tt.text, tt.close), cos(tt.text, tt.far)
		t.Logf("%q: %.3f to %q, %.3f to %q", tt.text, near, tt.close, far, tt.far)
		if near <= far+0.05 {
			t.Errorf("%q: similarity %.3f to its paraphrase %q, %.3f to the unrelated %q", tt.text, near, tt.close, far, tt.far)
		}
	}
}

// The vectors are unit vectors of Dim components, the same for the same text, and
// Load says plainly when the dictionaries are missing.
func TestVectorsAndMissingDictionaries(t *testing.T) {
	t.Parallel()
	m := ForTest(t)
	a, b := m.Embed("fetch the orders"), m.Embed("fetch the orders")
	if len(a) != Dim {
		t.Fatalf("%d components, want %d", len(a), Dim)
	}
	var n float64
	for i := range a {
		n += float64(a[i]) * float64(a[i])
		if a[i] != b[i] {
			t.Fatal("two embeddings of one text differ")
		}
	}
	if n < 0.999 || n > 1.001 {
		t.Errorf("squared norm %.4f, want 1", n)
	}
	if _, err := Load(t.TempDir(), t.TempDir()); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Load of empty directories: %v, want ErrNotInstalled", err)
	}
}
