// Package arango reads and changes Nodius graphs stored in ArangoDB, the way the
// Nodius server does (same collections, keys and queries, so both see one graph), on
// the official go-driver v2.
//
// Every query is one of the fixed strings of queries.go with bind variables: nothing a
// user, a model or a graph supplies is ever concatenated into AQL. Every graph read
// checks the graph's workspace first, so a graph of another workspace is "not found".
// ArangoDB keys of nodes and edges are composite ({graphKey}-{localKey}); callers only
// ever see local keys.
package arango

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"
	"github.com/arangodb/go-driver/v2/connection"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Source is an ArangoDB-backed datasource.Source for one workspace. It is safe for
// concurrent use.
type Source struct {
	cfg       Config
	client    arangodb.Client
	db        arangodb.Database
	transport *http.Transport

	// vector caches whether approximate vector search can be used (server version and
	// index list), asked once per Source.
	vectorMu   sync.Mutex
	vectorInfo *vectorSupport

	// searchReady caches whether the search View is there (SearchReady).
	searchMu    sync.Mutex
	searchReady *bool

	// checked remembers when each graph last passed the workspace check, so that
	// the dozen reads of one question (search, nodes, neighbourhoods) make it once
	// instead of once each (checkRead). Only passes are remembered.
	checkedMu sync.Mutex
	checked   map[string]checkedGraph

	// dataPaths keeps, per graph, the data fields text search looks in
	// (qDataPaths), for dataPathsFresh.
	dataPathsMu sync.Mutex
	dataPaths   map[string]checkedPaths
}

// Compile-time checks of the interfaces this source offers.
var (
	_ datasource.Source         = (*Source)(nil)
	_ datasource.Mutable        = (*Source)(nil)
	_ datasource.Snapshotter    = (*Source)(nil)
	_ datasource.Describer      = (*Source)(nil)
	_ datasource.VectorSearcher = (*Source)(nil)
	_ datasource.TextSearcher   = (*Source)(nil)
)

// Open connects to the database cfg names and checks that it answers, so that a
// wrong URL, password or database name is reported at once, as one clear sentence.
func Open(ctx context.Context, cfg Config) (*Source, error) {
	if cfg.Workspace == "" {
		cfg.Workspace = DefaultWorkspace
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	if cfg.TLS {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureTLS} //nolint:gosec // opt-in via ?insecure=true
	}
	conn := connection.NewHttpConnection(connection.HttpConfiguration{
		Endpoint:       connection.NewRoundRobinEndpoints([]string{cfg.Endpoint}),
		Authentication: connection.NewBasicAuth(cfg.User, cfg.Password),
		ContentType:    connection.ApplicationJSON,
		Transport:      boundedTransport{rt: tr, max: cfg.MaxResultBytes},
	})
	s := &Source{cfg: cfg, client: arangodb.NewClient(conn), transport: tr}
	db, err := s.client.GetDatabase(ctx, cfg.Database, nil)
	if err != nil {
		tr.CloseIdleConnections()
		return nil, s.classify(err, "open database "+cfg.Database)
	}
	s.db = db
	return s, nil
}

// boundedTransport fails any answer whose body runs past max bytes, so that a huge
// cursor batch or document cannot exhaust memory.
type boundedTransport struct {
	rt  http.RoundTripper
	max int
}

func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &boundedBody{rc: resp.Body, left: int64(b.max), max: b.max}
	}
	return resp, err
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
	max  int
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fault.Limit("an ArangoDB answer", "max_arango_result_bytes", b.max)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fault.Limit("an ArangoDB answer", "max_arango_result_bytes", b.max)
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// Describe says which database and workspace this is, without the password.
func (s *Source) Describe() string { return s.cfg.Describe() }

// Workspace is the workspace whose graphs this source reads.
func (s *Source) Workspace() string { return s.cfg.Workspace }

// Close drops idle connections.
func (s *Source) Close() error {
	if s == nil || s.transport == nil {
		return nil
	}
	s.transport.CloseIdleConnections()
	return nil
}

// ListGraphKeys lists the keys of the workspace's graphs (at most 200), sorted.
func (s *Source) ListGraphKeys(ctx context.Context) ([]string, error) {
	return queryAll[string](ctx, s, qGraphKeys, map[string]any{"ws": s.cfg.Workspace})
}

// Database exposes the driver database, for thread sync and tests.
func (s *Source) Database() arangodb.Database { return s.db }

// Client exposes the driver client, for tests that create and drop databases.
func (s *Source) Client() arangodb.Client { return s.client }

// query runs one of the fixed queries and decodes each result document with fn. The
// cursor is always closed, even when fn or the context fails halfway through.
func (s *Source) query(ctx context.Context, q string, bind map[string]any, fn func(raw json.RawMessage) error) error {
	return s.queryOn(ctx, s.db, q, bind, fn)
}

// queryOn is query run on db: the database, or one stream transaction (whose
// requests carry its id).
func (s *Source) queryOn(ctx context.Context, db arangodb.DatabaseQuery, q string, bind map[string]any, fn func(raw json.RawMessage) error) (err error) {
	cur, err := db.Query(ctx, q, &arangodb.QueryOptions{BindVars: bind, BatchSize: s.cfg.BatchSize})
	if err != nil {
		return err
	}
	defer func() {
		// A cancelled ctx must not keep the server-side cursor alive: close with a
		// fresh, short deadline. An exhausted cursor may answer 404 here; that only
		// means the server already dropped it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = cur.CloseWithContext(cctx)
	}()
	for {
		var raw json.RawMessage
		_, rerr := cur.ReadDocument(ctx, &raw)
		if shared.IsNoMoreDocuments(rerr) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
		if err := fn(raw); err != nil {
			return err
		}
	}
}

// queryAll runs q and decodes every result into a T.
func queryAll[T any](ctx context.Context, s *Source, q string, bind map[string]any) ([]T, error) {
	return queryAllOn[T](ctx, s, s.db, q, bind)
}

// queryAllOn is queryAll run on db (see queryOn).
func queryAllOn[T any](ctx context.Context, s *Source, db arangodb.DatabaseQuery, q string, bind map[string]any) ([]T, error) {
	var out []T
	err := s.queryOn(ctx, db, q, bind, func(raw json.RawMessage) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("decode result: %w", err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// isDocNotFound reports ArangoDB's "document not found" (errorNum 1202).
func isDocNotFound(err error) bool {
	return shared.IsArangoErrorWithErrorNum(err, shared.ErrArangoDocumentNotFound)
}

// isConflict reports a unique key violation (errorNum 1210, HTTP 409).
func isConflict(err error) bool {
	return shared.IsArangoErrorWithErrorNum(err, shared.ErrArangoUniqueConstraintViolated) || shared.IsConflict(err)
}

// asDriverError finds the driver's ArangoError in err's chain.
func asDriverError(err error) (shared.ArangoError, bool) {
	var ae shared.ArangoError
	if errors.As(err, &ae) {
		return ae, true
	}
	var pae *shared.ArangoError
	if errors.As(err, &pae) && pae != nil {
		return *pae, true
	}
	return shared.ArangoError{}, false
}
