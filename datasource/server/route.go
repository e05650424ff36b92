package server

import (
	"context"
	"errors"

	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// dial opens an editing socket for graphKey where the server routes it: POST
// /api/sync {"instanceId": "graph-KEY"} first, as the web client does before it
// opens a graph — in a cluster only the instance that manages the graph accepts
// its editors, and the call makes the answering instance the manager when none
// is. graphKey "" routes a socket that is about no graph (HomeInstance). The
// token, the HTTP client and the server's name are filled in.
func (s *Source) dial(ctx context.Context, graphKey string, opt nodiusapi.EditorOptions) (*nodiusapi.Editor, error) {
	instance := nodiusapi.HomeInstance
	if graphKey != "" {
		instance = nodiusapi.GraphInstance(graphKey)
	}
	return s.dialInstance(ctx, instance, opt)
}

// dialInstance opens an editing socket for any instance of the server's cluster (a
// graph, a node type: "nodeConfig-KEY") where POST /api/sync routes it.
func (s *Source) dialInstance(ctx context.Context, instance string, opt nodiusapi.EditorOptions) (*nodiusapi.Editor, error) {
	addr, err := s.api.SocketAddress(ctx, instance)
	if err != nil {
		return nil, err
	}
	opt.Options = nodiusapi.SocketOptions{Token: s.api.Token(), HTTPClient: s.api.HTTPClient(), Server: s.api.Server()}
	return nodiusapi.DialEditor(ctx, addr, opt)
}

// notManaged reports whether err is a registration refused because the instance
// does not manage the graph ("This server don't manage graph with key:KEY").
func notManaged(err error) bool {
	var re *nodiusapi.RefusedError
	return errors.As(err, &re) && nodiusapi.IsNotManaged(re.Message)
}
