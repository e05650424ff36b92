package toon

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The oracle test compares Encode with the reference encoder on random values. It
// needs node and `npm install @toon-format/toon@4.4.0` done somewhere by hand:
//
//	NODIUS_AI_TOON_ORACLE=/tmp/toonref/node_modules go test -run Oracle ./rag/toon/
//
// NODIUS_AI_TOON_ORACLE_N sets the number of values (default 3000) and
// NODIUS_AI_TOON_ORACLE_SEED the seed. Without the variable the test is skipped; it
// never touches the network.

const oracleScript = `
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [modules, inFile, outFile] = process.argv.slice(2);
const { encode } = await import(pathToFileURL(join(modules, "@toon-format/toon/dist/index.mjs")).href);
const cases = JSON.parse(readFileSync(inFile, "utf8"));
const out = cases.map((c) => {
  try {
    return encode(JSON.parse(c.json), { delimiter: c.delimiter, indentSize: c.indent });
  } catch (e) {
    return "ERROR: " + e.message;
  }
});
writeFileSync(outFile, JSON.stringify(out));
`

type oracleCase struct {
	JSON      string `json:"json"`
	Delimiter string `json:"delimiter"`
	Indent    int    `json:"indent"`
}

func TestEncodeOracle(t *testing.T) {
	modules := os.Getenv("NODIUS_AI_TOON_ORACLE")
	if modules == "" {
		t.Skip("set NODIUS_AI_TOON_ORACLE to a node_modules holding @toon-format/toon@4.4.0 to compare with the reference encoder")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	n := envInt("NODIUS_AI_TOON_ORACLE_N", 3000)
	seed := uint64(envInt("NODIUS_AI_TOON_ORACLE_SEED", 1))
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x70_0e))}
	delims := []string{",", "\t", "|"}
	cases := make([]oracleCase, n)
	for i := range cases {
		var sb strings.Builder
		writeJSON(&sb, g.value(0, true))
		cases[i] = oracleCase{JSON: sb.String(), Delimiter: delims[g.r.IntN(3)], Indent: 1 + g.r.IntN(4)}
	}

	dir := t.TempDir()
	script := filepath.Join(dir, "oracle.mjs")
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	data, _ := json.Marshal(cases)
	if err := os.WriteFile(script, []byte(oracleScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, node, script, modules, in, out).CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, msg)
	}
	var want []string
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for i, c := range cases {
		v, err := ParseJSON([]byte(c.JSON))
		if err != nil {
			t.Fatalf("case %d: ParseJSON(%s): %v", i, c.JSON, err)
		}
		got := Encode(v, Options{Delimiter: []rune(c.Delimiter)[0], Indent: c.Indent})
		if got != want[i] {
			failures++
			if failures <= 5 {
				t.Errorf("case %d (delimiter %q, indent %d) input %s\n got:\n%s\nwant:\n%s", i, c.Delimiter, c.Indent, c.JSON, got, want[i])
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d random values differ from the reference", failures, n)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// gen makes random JSON values shaped to reach every TOON form: tables, nested
// field groups, keyed objects, lists, arrays of arrays, and strings and numbers
// at the edges of the quoting and number rules.
type gen struct{ r *rand.Rand }

var (
	// No integer-like keys: JSON.parse would move them to the front of the object.
	genKeys = []string{"a", "b", "id", "name", "x_1", "k.v", "full name", "a:b", "", "-k", "#k",
		"__proto__", "é", "[i]", "{o}", "a,b", "a|b", "t\tx", "q\"", "05", "1a", "_", " s"}
	genStrings = []string{"", " ", "a", "Ada", "true", "false", "null", "42", "-3.14", "1e-6", "05", ".5",
		"1.", "+1", "-", "- x", "#", "#x", "a,b", "a|b", "a\tb", "x\ny", "a\rb", "\u0001", "\u001f", "\u007f",
		"[1]", "{k}", "a:b", "say \"hi\"", `C:\p`, "café", "你好", "🚀", " pad ", "\ufeffbom", "x y", "1E5",
		"0x10", "Infinity", "NaN", "True", "é,ü", "a b", "end ", "\u00a0nbsp"}
	genNumbers = []string{"0", "-0", "1", "-7", "42", "3.14", "0.1", "1e21", "1E21", "1e-7", "1e-6", "1.5e300",
		"-2.5e-8", "5e-324", "1e20", "123456789012345678901", "9007199254740993", "0.000001", "1.0", "0.10",
		"100", "1e2", "-0.0", "999999999999999999999", "1.7976931348623157e308", "4.35", "0.3333333333333333",
		"1e400", "-1e400", "2e-400", "12345.678e-3"}
)

func (g *gen) key() string { return genKeys[g.r.IntN(len(genKeys))] }

func (g *gen) primitive() any {
	switch g.r.IntN(8) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3, 4:
		if g.r.IntN(4) == 0 {
			return fmt.Sprintf("w%d", g.r.IntN(100))
		}
		return genStrings[g.r.IntN(len(genStrings))]
	default:
		if g.r.IntN(3) == 0 {
			return json.Number(strconv.Itoa(g.r.IntN(2000) - 1000))
		}
		return json.Number(genNumbers[g.r.IntN(len(genNumbers))])
	}
}

// keys returns n distinct keys.
func (g *gen) keys(n int) []string {
	seen := map[string]bool{}
	var ks []string
	for len(ks) < n && len(seen) < len(genKeys) {
		k := g.key()
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	return ks
}

func (g *gen) object(depth int, ks []string) Object {
	obj := make(Object, len(ks))
	for i, k := range ks {
		obj[i] = Field{k, g.value(depth+1, false)}
	}
	return obj
}

// shaped builds an object with keys ks whose values follow shape: nil means a
// primitive, otherwise a nested object of that shape.
type shape map[string]*shapeNode
type shapeNode struct {
	keys []string
	sub  shape
}

func (g *gen) shape(depth int) ([]string, shape) {
	ks := g.keys(1 + g.r.IntN(3))
	s := shape{}
	for _, k := range ks {
		if depth < 2 && g.r.IntN(4) == 0 {
			sk, ss := g.shape(depth + 1)
			s[k] = &shapeNode{sk, ss}
		}
	}
	return ks, s
}

func (g *gen) fill(ks []string, s shape, depth int) Object {
	order := append([]string(nil), ks...)
	if g.r.IntN(5) == 0 {
		g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	obj := make(Object, 0, len(order))
	for _, k := range order {
		var v any
		switch node := s[k]; {
		case node != nil:
			v = g.fill(node.keys, node.sub, depth+1)
		case g.r.IntN(15) == 0:
			v = g.value(depth+1, false) // spoil uniformity now and then
		default:
			v = g.primitive()
		}
		obj = append(obj, Field{k, v})
	}
	return obj
}

func (g *gen) value(depth int, root bool) any {
	if depth > 4 {
		return g.primitive()
	}
	switch g.r.IntN(9) {
	case 0, 1:
		if root && g.r.IntN(3) != 0 {
			return g.value(depth, root)
		}
		return g.primitive()
	case 2: // object
		return g.object(depth, g.keys(g.r.IntN(4)))
	case 3: // keyed candidate: object of uniform objects
		ks, s := g.shape(0)
		entries := g.keys(1 + g.r.IntN(3))
		obj := make(Object, len(entries))
		for i, k := range entries {
			obj[i] = Field{k, g.fill(ks, s, depth+1)}
		}
		return obj
	case 4: // table candidate
		ks, s := g.shape(0)
		arr := make([]any, 1+g.r.IntN(3))
		for i := range arr {
			arr[i] = g.fill(ks, s, depth+1)
		}
		return arr
	case 5: // primitive array
		arr := make([]any, g.r.IntN(4))
		for i := range arr {
			arr[i] = g.primitive()
		}
		return arr
	case 6: // array of arrays
		arr := make([]any, 1+g.r.IntN(3))
		for i := range arr {
			if g.r.IntN(6) == 0 {
				arr[i] = g.value(depth+1, false)
				continue
			}
			inner := make([]any, g.r.IntN(3))
			for j := range inner {
				inner[j] = g.primitive()
			}
			arr[i] = inner
		}
		return arr
	default: // mixed list, objects as list items
		arr := make([]any, 1+g.r.IntN(4))
		for i := range arr {
			if g.r.IntN(2) == 0 {
				arr[i] = g.object(depth+1, g.keys(g.r.IntN(4)))
			} else {
				arr[i] = g.value(depth+1, false)
			}
		}
		return arr
	}
}

// writeJSON writes v (the parser's data model) as JSON, keeping key order and
// number literals as they are.
func writeJSON(sb *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(strconv.FormatBool(t))
	case json.Number:
		sb.WriteString(string(t))
	case string:
		b, _ := json.Marshal(t)
		sb.Write(b)
	case Object:
		sb.WriteByte('{')
		for i, f := range t {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSON(sb, f.Key)
			sb.WriteByte(':')
			writeJSON(sb, f.Value)
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSON(sb, e)
		}
		sb.WriteByte(']')
	default:
		panic(fmt.Sprintf("writeJSON: unexpected %T", v))
	}
}
