package cli

import (
	"fmt"

	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/rag/indexcache"
)

// IndexStore returns the on-disk cache of indexed file graphs, or nil when
// NODIUS_AI_INDEX_CACHE is "off". NODIUS_AI_INDEX_CACHE may also name the
// directory; by default it is $XDG_CACHE_HOME/nodius-ai/index.
func (f *Factory) IndexStore() rag.IndexStore {
	dir := f.IO.Getenv("NODIUS_AI_INDEX_CACHE")
	switch dir {
	case "off", "0", "false":
		return nil
	case "":
		dir = indexcache.Dir(f.IO.Getenv)
	}
	if dir == "" {
		return nil
	}
	c := indexcache.New(dir, 0)
	logger := f.Logger()
	c.Logf = func(format string, args ...any) { logger.Debug("index cache", "detail", fmt.Sprintf(format, args...)) }
	return c
}
