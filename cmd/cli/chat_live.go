package cli

// liveSource is a source a chat can hold for its whole session (the Nodius
// server's: datasource/server.Source): one registration on the graph from the
// first question to the last, the other editors' edits taken in as they are
// broadcast, instead of loading the graph again for each question.
type liveSource interface {
	Hold()
	OnChangedByOthers(fn func(graphKey string))
}

// chatLive is what a chat holds of a live source (nil: the source is not one).
type chatLive struct{ src liveSource }

// holdSession holds the runtime's source for the chat when it is a live one and
// the in-process agent answers (the server's assistant reads the graph itself).
// It must come before the first read of the graph.
func holdSession(rt *Runtime) *chatLive {
	ls, ok := rt.Source.(liveSource)
	if !ok || rt.Remote != nil {
		return nil
	}
	ls.Hold()
	return &chatLive{src: ls}
}

// watch tells changed (the screen's header) when another editor changes the
// graph, and drops what the retriever kept of it, so the next question is
// answered on the graph as it is then.
func (l *chatLive) watch(rt *Runtime, graphKey string, changed func()) {
	if l == nil {
		return
	}
	l.src.OnChangedByOthers(func(g string) {
		if g != graphKey {
			return
		}
		if rt.Retriever != nil {
			rt.Retriever.Invalidate(g)
		}
		changed()
	})
}
