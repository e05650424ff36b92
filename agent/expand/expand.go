// Package expand rewrites a question into search terms with the chat model
// (retrieval.expand = "llm"): one small, non-streamed call lists the question's key
// ideas, their synonyms and the words a developer would use for them, in English and
// in French, so that text search also finds nodes named in other words than the
// question's. Answers are cached per model and question, in the process and on disk,
// so asking the same question again costs nothing.
package expand

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/rag"
)

// Defaults of Options.
const (
	DefaultTimeout    = 20 * time.Second
	DefaultMaxTokens  = 150
	DefaultMaxEntries = 2000
	maxTerms          = 40
	maxTermLen        = 60
)

// promptVersion is part of every cache key: a change of the instructions below
// makes old answers unreachable instead of mixing them with new ones.
const promptVersion = "1"

const instructions = `You turn a question about a workflow graph (nodes that run code, call APIs, read and transform data, send messages) into search keywords.
Reply with one line of 10 to 25 comma-separated keywords or short phrases, in English AND in French: the question's key ideas, their synonyms, and the words a developer would use for them in node names, types and code identifiers.
No explanation, no numbering, nothing else.`

// Options configure an Expander.
type Options struct {
	// Model answers the calls. It must implement llm.Completer (both providers do).
	Model llm.Provider
	// Dir holds the on-disk cache ("" keeps answers in the process only).
	Dir        string
	MaxEntries int           // files kept in Dir; the oldest go first (default 2000)
	Timeout    time.Duration // for one call (default 20 s)
	MaxTokens  int           // completion cap of one call (default 150)
}

// Expander implements rag.Expander. It is safe for concurrent use.
type Expander struct {
	opt  Options
	llm  llm.Completer
	mu   sync.Mutex
	seen map[string][]string // cache key → terms
}

// New returns an expander over o.Model, or an error when the model cannot answer a
// non-streamed call.
func New(o Options) (*Expander, error) {
	c, ok := o.Model.(llm.Completer)
	if !ok || o.Model == nil {
		return nil, errors.New("query expansion needs a chat model that answers without streaming")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	return &Expander{opt: o, llm: c, seen: map[string][]string{}}, nil
}

// Dir returns the default cache directory: $XDG_CACHE_HOME/nodius-ai/expand, else
// ~/.cache/nodius-ai/expand; empty when neither can be known.
func Dir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "nodius-ai", "expand")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "nodius-ai", "expand")
	}
	return ""
}

// Expand returns the question's search terms: from the cache when this model was
// already asked this question, else from one call. A failed call returns its
// error (and the tokens it spent, if any): retrieval then searches the question
// as it was asked.
func (e *Expander) Expand(ctx context.Context, question string) (rag.Expansion, error) {
	q := normalize(question)
	if q == "" {
		return rag.Expansion{}, nil
	}
	key := e.key(q)
	e.mu.Lock()
	terms, ok := e.seen[key]
	e.mu.Unlock()
	if ok {
		return rag.Expansion{Terms: terms}, nil
	}
	if terms, ok := e.load(key, q); ok {
		e.remember(key, terms)
		return rag.Expansion{Terms: terms}, nil
	}

	callCtx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
	defer cancel()
	reply, err := e.llm.Complete(callCtx, llm.Request{
		Messages: []convo.Message{
			{Role: convo.System, Content: instructions},
			{Role: convo.User, Content: question},
		},
		MaxTokens: e.opt.MaxTokens,
	})
	u := reply.Usage
	x := rag.Expansion{Usage: rag.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens, CostUSD: u.CostUSD}}
	if err != nil {
		if ctx.Err() == nil && callCtx.Err() != nil {
			return x, fmt.Errorf("query expansion: no answer from %s within %s", e.opt.Model.Model(), e.opt.Timeout)
		}
		return x, fmt.Errorf("query expansion: %w", err)
	}
	x.Terms = Parse(reply.Content)
	if len(x.Terms) == 0 {
		return x, fmt.Errorf("query expansion: %s answered no search terms", e.opt.Model.Model())
	}
	e.remember(key, x.Terms)
	e.save(key, q, x.Terms)
	return x, nil
}

func (e *Expander) remember(key string, terms []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) >= e.opt.MaxEntries {
		clear(e.seen) // a long-lived process asking thousands of questions: start over
	}
	e.seen[key] = terms
}

// key names one (provider, model, instructions, question).
func (e *Expander) key(q string) string {
	h := sha256.New()
	for _, s := range []string{e.opt.Model.Name(), e.opt.Model.Model(), promptVersion, q} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// normalize makes questions that differ only in case or spacing share an entry.
func normalize(q string) string {
	return strings.ToLower(strings.Join(strings.Fields(q), " "))
}

// Parse reads the model's answer: terms separated by commas, semicolons or lines,
// with list markers, quotes and control characters dropped, duplicates removed,
// each term and their number bounded. A reasoning model's <think> block is skipped.
func Parse(answer string) []string {
	if _, after, ok := strings.Cut(answer, "</think>"); ok {
		answer = after
	}
	seen := map[string]bool{}
	var out []string
	for _, raw := range strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '|' }) {
		t := strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, raw)
		t = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(t), "-*•0123456789.) "))
		t = strings.Trim(t, "\"'`“”«» ")
		if t == "" || len([]rune(t)) > maxTermLen {
			continue
		}
		lt := strings.ToLower(t)
		if seen[lt] {
			continue
		}
		seen[lt] = true
		out = append(out, t)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// entry is one cached answer on disk.
type entry struct {
	Model    string   `json:"model"`
	Question string   `json:"question"`
	Terms    []string `json:"terms"`
}

func (e *Expander) path(key string) string { return filepath.Join(e.opt.Dir, key+".json") }

func (e *Expander) load(key, q string) ([]string, bool) {
	if e.opt.Dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(e.path(key))
	if err != nil {
		return nil, false
	}
	var en entry
	if json.Unmarshal(b, &en) != nil || en.Question != q || len(en.Terms) == 0 {
		return nil, false
	}
	return en.Terms, true
}

// save writes the answer through a temporary file and a rename, so that a reader
// (another process) sees the whole entry or none; failures only cost the cache.
func (e *Expander) save(key, q string, terms []string) {
	if e.opt.Dir == "" {
		return
	}
	if err := os.MkdirAll(e.opt.Dir, 0o700); err != nil {
		return
	}
	b, err := json.Marshal(entry{Model: e.opt.Model.Model(), Question: q, Terms: terms})
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(e.opt.Dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), e.path(key)) != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	e.prune()
}

// prune keeps at most MaxEntries answers on disk, removing the oldest.
func (e *Expander) prune() {
	ents, err := os.ReadDir(e.opt.Dir)
	if err != nil || len(ents) <= e.opt.MaxEntries {
		return
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		if info, err := de.Info(); err == nil {
			files = append(files, file{de.Name(), info.ModTime()})
		}
	}
	if len(files) <= e.opt.MaxEntries {
		return
	}
	sort.Slice(files, func(a, b int) bool { return files[a].mod.Before(files[b].mod) })
	for _, f := range files[:len(files)-e.opt.MaxEntries] {
		_ = os.Remove(filepath.Join(e.opt.Dir, f.name))
	}
}
