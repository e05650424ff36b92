package mcpserver

import (
	"context"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// versioner is a source that numbers its changes (memgraph, file: the file source
// reads the file again when another process changed it).
type versioner interface {
	Version(graphKey string) (uint64, error)
}

// watcher notices graph changes made while clients are connected — an approval in
// another process (nodius-ai approve, the TUI), an auto-approved proposal here — and
// sends resources/updated for the graph and its subscribed nodes. It learns of them
// two ways: the source's version, for sources that number their changes, and the
// decisions of the proposals this server stored, for every source.
type watcher struct {
	s *Server

	mu       sync.Mutex
	versions map[string]uint64 // graph -> last version seen
	waiting  map[string]string // proposal call id -> thread id, until decided
	subs     map[string]int    // subscribed URI -> subscriptions
}

func (w *watcher) init(s *Server) {
	w.s = s
	w.versions = map[string]uint64{}
	w.waiting = map[string]string{}
	w.subs = map[string]int{}
	if v, ok := s.opt.Source.(versioner); ok {
		for _, g := range s.opt.Graphs {
			if n, err := v.Version(g); err == nil {
				w.versions[g] = n
			}
		}
	}
}

func (w *watcher) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[req.Params.URI]++
	return nil
}

func (w *watcher) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[req.Params.URI]--; w.subs[req.Params.URI] <= 0 {
		delete(w.subs, req.Params.URI)
	}
	return nil
}

// pending remembers a proposal stored here, to notice its approval elsewhere.
func (w *watcher) pending(threadID, callID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting[callID] = threadID
}

// check looks for changes once: versions that moved, proposals decided.
func (w *watcher) check(ctx context.Context) {
	changed := map[string]bool{}
	if v, ok := w.s.opt.Source.(versioner); ok {
		for _, g := range w.s.opt.Graphs {
			n, err := v.Version(g)
			if err != nil {
				continue
			}
			w.mu.Lock()
			if n != w.versions[g] {
				w.versions[g] = n
				changed[g] = true
			}
			w.mu.Unlock()
		}
	}
	w.mu.Lock()
	waiting := make(map[string]string, len(w.waiting))
	for c, t := range w.waiting {
		waiting[c] = t
	}
	w.mu.Unlock()
	for callID, threadID := range waiting {
		tr, err := w.s.opt.Proposals.Transcript(ctx, threadID)
		if err != nil {
			continue
		}
		for _, p := range tr.Proposals {
			state := p.State()
			if p.ToolCallID != callID || state == "pending" || state == "applying" {
				continue
			}
			w.mu.Lock()
			delete(w.waiting, callID)
			w.mu.Unlock()
			if state == "applied" {
				changed[tr.Thread.GraphKey] = true
			}
		}
	}
	for g := range changed {
		w.notify(ctx, g)
	}
}

// changed reports a change made here (an auto-approved proposal) at once.
func (w *watcher) changed(ctx context.Context, graph string) {
	if v, ok := w.s.opt.Source.(versioner); ok {
		if n, err := v.Version(graph); err == nil {
			w.mu.Lock()
			w.versions[graph] = n
			w.mu.Unlock()
		}
	}
	w.notify(ctx, graph)
}

// notify brings the node list of graph up to date and sends resources/updated for the
// graph and every subscribed node of it.
func (w *watcher) notify(ctx context.Context, graph string) {
	if !contains(w.s.opt.Graphs, graph) {
		return
	}
	if graph == w.s.opt.Graph {
		if err := w.s.syncNodes(ctx, graph); err != nil {
			w.s.log.Warn("mcp node resources", "graph", graph, "error", err.Error())
		}
	}
	uris := []string{GraphURI(graph)}
	prefix := GraphURI(graph) + "/node/"
	w.mu.Lock()
	for uri := range w.subs {
		if strings.HasPrefix(uri, prefix) {
			uris = append(uris, uri)
		}
	}
	w.mu.Unlock()
	for _, uri := range uris {
		if err := w.s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			w.s.log.Warn("mcp resource updated", "uri", uri, "error", err.Error())
		}
	}
	w.s.log.Info("mcp graph changed", "graph", graph, "notified", len(uris))
}
