package arango

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/nodius/nodius-ai/internal/fault"
)

// liveServerWindow is how recently a Nodius server must have refreshed its
// nodius_cluster record to count as running (the servers' own rule).
const liveServerWindow = 2 * time.Minute

type liveServer struct {
	Host        string  `json:"host"`
	Port        float64 `json:"port"`
	LastRefresh float64 `json:"lastRefresh"`
}

// checkNoLiveServer refuses a write while a Nodius server runs on the database. The
// server loads a graph someone opens into memory, applies every edit there and
// saves its changes back about every 30 s: a node written here behind its back is
// never seen by the web editors, and one they also edit is overwritten by their
// next save. So a change goes through the server (--source server:URL), which
// applies it live for every editor, unless the person says nobody edits the graph
// (arango_ignore_server). A database without the collection has never had a server.
func (s *Source) checkNoLiveServer(ctx context.Context, graphKey string) error {
	addr, ago, err := s.liveServer(ctx)
	if err != nil || addr == "" {
		return err
	}
	return &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
		"a Nodius server runs on this database (%s, seen %s ago): it keeps graph %q in memory while anyone edits it and saves it itself, "+
			"so a change written here could be overwritten by the editors' next save or never reach them; nothing was changed — "+
			"apply it through the server (--source server:URL of that server), or, if nobody edits this graph, set arango_ignore_server = true "+
			"(or NODIUS_AI_ARANGO_IGNORE_SERVER=1)", addr, ago, graphKey)}
}

// liveServer returns the address of a Nodius server running on the database, and
// how long ago it was seen; "" when none runs, or arango_ignore_server is set.
func (s *Source) liveServer(ctx context.Context) (addr string, ago time.Duration, err error) {
	if s.cfg.IgnoreLiveServer {
		return "", 0, nil
	}
	since := time.Now().Add(-liveServerWindow).UnixMilli()
	servers, err := queryAll[liveServer](ctx, s, qLiveServers, map[string]any{"since": since})
	if err != nil {
		if shared.IsArangoErrorWithErrorNum(err, shared.ErrArangoDataSourceNotFound) {
			return "", 0, nil
		}
		return "", 0, s.classify(err, "check whether a Nodius server runs on the database")
	}
	if len(servers) == 0 {
		return "", 0, nil
	}
	sv := servers[0]
	return net.JoinHostPort(sv.Host, strconv.Itoa(int(sv.Port))), time.Since(time.UnixMilli(int64(sv.LastRefresh))).Round(time.Second), nil
}
