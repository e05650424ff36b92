package rag

import (
	"container/list"
	"sync"
	"time"
)

// contextCache keeps finished contexts by (graph, question, mentions) for a TTL,
// at most max of them (the oldest go first). A TTL of zero disables it.
//
// The epoch guards against a race: a question that started before Invalidate may
// finish after it with a context built from the old graph; put refuses it.
type contextCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	epoch   uint64
	entries map[string]*list.Element // of *cacheEntry
	order   *list.List               // oldest first
}

type cacheEntry struct {
	key, graph string
	at         time.Time
	ctx        *Context
}

func newContextCache(ttl time.Duration, max int) *contextCache {
	return &contextCache{ttl: ttl, max: max, entries: make(map[string]*list.Element), order: list.New()}
}

func (c *contextCache) enabled() bool { return c.ttl > 0 }

// get returns a copy of a live entry.
func (c *contextCache) get(key string, now time.Time) (*Context, bool) {
	if !c.enabled() {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if now.Sub(e.at) >= c.ttl {
		c.remove(el)
		return nil, false
	}
	return e.ctx.clone(), true
}

func (c *contextCache) currentEpoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// put stores a copy of ctx, unless the cache was invalidated since epoch.
func (c *contextCache) put(key, graph string, ctx *Context, now time.Time, epoch uint64) {
	if !c.enabled() {
		return
	}
	stored := ctx.clone()
	stored.Retrieval.CacheHit = false
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.order.PushBack(&cacheEntry{key: key, graph: graph, at: now, ctx: stored})
	for c.order.Len() > c.max {
		c.remove(c.order.Front())
	}
}

// invalidate drops the entries of one graph, or all when graph is "".
func (c *contextCache) invalidate(graph string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if graph == "" || el.Value.(*cacheEntry).graph == graph {
			c.remove(el)
		}
		el = next
	}
}

// size counts live entries, dropping expired ones on the way.
func (c *contextCache) size(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if now.Sub(el.Value.(*cacheEntry).at) >= c.ttl {
			c.remove(el)
		}
		el = next
	}
	return c.order.Len()
}

func (c *contextCache) remove(el *list.Element) {
	delete(c.entries, el.Value.(*cacheEntry).key)
	c.order.Remove(el)
}
