// Package tokens counts LLM tokens the way OpenAI's recent models (gpt-4o, gpt-4.1,
// o-series, gpt-5) see them, with the o200k_base encoding. Counts drive the context
// budget and the TOON-versus-JSON comparison of `inspect context`; other providers'
// tokenizers differ by a few percent, which is fine for both uses.
package tokens

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// o200k loads the codec on first use only: building it compiles the split
// expression and indexes a 200k-entry vocabulary (tens of milliseconds), which
// commands that never count should not pay. The vocabulary is compiled in, so
// loading needs neither network nor disk. The constructor is called directly, not
// through the library's lookup by name, which would link all four vocabularies
// (about 12 MB of binary) for the one used here.
var o200k = sync.OnceValues(func() (c *codec.Codec, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("tokens: load o200k_base: %v", r)
		}
	}()
	return codec.NewO200kBase(), nil
})

// Count returns the number of o200k_base tokens in s. It never fails: if the codec
// cannot be loaded or cannot split s, it falls back to the usual estimate of four
// bytes per token, so callers can budget without an error path.
func Count(s string) int {
	if s == "" {
		return 0
	}
	c, err := o200k()
	if err != nil {
		return Estimate(s)
	}
	n, err := count(c, s)
	if err != nil {
		return Estimate(s)
	}
	return n
}

// Estimate is the codec-free approximation Count falls back to: len(s)/4.
func Estimate(s string) int {
	return len(s) / 4
}

// count guards against a panic inside the tokenizer so that no text, however odd,
// can take the caller down.
func count(c *codec.Codec, s string) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokens: count: %v", r)
		}
	}()
	return c.Count(s)
}
