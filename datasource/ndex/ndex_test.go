package ndex_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/datasource/ndex/ndextest"
)

// The export the real server wrote (POST /api/export/graph) decodes with its
// default secret to the payload recorded beside it.
func TestDecodeRealExport(t *testing.T) {
	data, err := os.ReadFile("testdata/07-export-graph.ndex")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/07-export-graph.payload.json")
	if err != nil {
		t.Fatal(err)
	}
	typ, payload, err := ndex.Decode(data, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	if typ != ndex.Graph {
		t.Errorf("type %v, want graph", typ)
	}
	if !jsonEqual(t, payload, want) {
		t.Errorf("payload differs from the recorded one:\n%s", payload)
	}
}

func TestRoundTrip(t *testing.T) {
	payload := []byte(`{"graph":{"name":"x"},"nodes":[],"edges":[]}`)
	data, err := ndex.Encode(payload, ndex.HTMLGraph, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	typ, got, err := ndex.Decode(data, "s3cret")
	if err != nil || typ != ndex.HTMLGraph || !bytes.Equal(got, payload) {
		t.Errorf("round trip: %v %q %v", typ, got, err)
	}
}

func TestBadExports(t *testing.T) {
	real, err := os.ReadFile("testdata/07-export-graph.ndex")
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte { b := bytes.Clone(real); b[i] ^= 0x40; return b }
	cases := []struct {
		name   string
		data   []byte
		secret string
		want   error
	}{
		{"wrong secret", real, "not-the-secret", ndex.ErrDecrypt},
		{"damaged last block", flip(len(real) - 3), ndex.DefaultSecret, ndex.ErrDecrypt},
		{"truncated", real[:len(real)-5], ndex.DefaultSecret, ndex.ErrDamaged},
		{"header only", real[:22], ndex.DefaultSecret, ndex.ErrDamaged},
		{"bad magic", append([]byte("XDEX"), real[4:]...), ndex.DefaultSecret, ndex.ErrDamaged},
		{"version 2", func() []byte { b := bytes.Clone(real); b[4] = 2; return b }(), ndex.DefaultSecret, ndex.ErrDamaged},
		{"type 9", func() []byte { b := bytes.Clone(real); b[5] = 9; return b }(), ndex.DefaultSecret, ndex.ErrDamaged},
		{"json", []byte(`{"graph":{}}`), ndex.DefaultSecret, ndex.ErrDamaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := ndex.Decode(c.data, c.secret); !errors.Is(err, c.want) {
				t.Errorf("Decode: %v, want %v", err, c.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// A decompression bomb — a valid export of about 1 MB whose payload inflates to
// nearly 1 GiB — is refused as damaged once MaxPayload bytes came out, without
// inflating the rest.
func TestBombRefused(t *testing.T) {
	t.Parallel()
	bomb, err := ndextest.Bomb(1000<<20, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	if len(bomb) > 2<<20 {
		t.Fatalf("the bomb is %d bytes, want at most 2 MB", len(bomb))
	}
	_, payload, err := ndex.Decode(bomb, ndex.DefaultSecret)
	if !errors.Is(err, ndex.ErrDamaged) || payload != nil {
		t.Fatalf("Decode(bomb) = %d bytes, %v; want ErrDamaged", len(payload), err)
	}
	if !strings.Contains(err.Error(), "inflates past") {
		t.Errorf("error %q does not say why", err)
	}
}

// The bomb is a real export: under the bound, the same construction decodes to
// exactly the JSON it claims (so the refusal above is the bound's, not a broken
// stream's).
func TestSmallBombDecodes(t *testing.T) {
	t.Parallel()
	bomb, err := ndextest.Bomb(8<<20, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	typ, payload, err := ndex.Decode(bomb, ndex.DefaultSecret)
	if err != nil || typ != ndex.Graph {
		t.Fatalf("Decode = %v, %v", typ, err)
	}
	if !json.Valid(payload) || len(payload) < 6<<20 {
		t.Fatalf("payload of %d bytes, valid JSON %v", len(payload), json.Valid(payload))
	}
}

// A file larger than any export is refused before it is decrypted.
func TestHugeFileRefused(t *testing.T) {
	t.Parallel()
	data := make([]byte, ndex.MaxFile+16)
	copy(data, "NDEX\x01\x01")
	if _, _, err := ndex.Decode(data, ndex.DefaultSecret); !errors.Is(err, ndex.ErrDamaged) {
		t.Fatalf("Decode(%d bytes) = %v, want ErrDamaged", len(data), err)
	}
}

// BenchmarkDecodeBomb decodes a 1 MB export whose payload inflates to about 1 GB:
// B/op is what the bound lets it cost (about MaxPayload, not the gigabyte).
func BenchmarkDecodeBomb(b *testing.B) {
	bomb, err := ndextest.Bomb(1000<<20, ndex.DefaultSecret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ndex.Decode(bomb, ndex.DefaultSecret); !errors.Is(err, ndex.ErrDamaged) {
			b.Fatal(err)
		}
	}
}
