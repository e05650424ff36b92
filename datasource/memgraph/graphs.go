package memgraph

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

var _ datasource.GraphCreator = (*Store)(nil)

// CanCreateGraph: a store without a commit hook makes graphs in memory; one that
// persists a single graph (the file source's) does not: its owner makes them.
func (s *Store) CanCreateGraph(ctx context.Context) error {
	if s.commit != nil {
		return fmt.Errorf("%s keeps one graph: %w", s.Describe(), datasource.ErrReadOnly)
	}
	return ctx.Err()
}

// CreateGraph adds a new graph holding what the Nodius server puts in one
// (datasource.NewGraphContent), in memory like every change of the store (the demo
// says so in its note). Its workspace is the store's first graph's. The digest is
// the graph's version, which every later change raises.
func (s *Store) CreateGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (datasource.CreatedGraph, error) {
	if err := s.CanCreateGraph(ctx); err != nil {
		return datasource.CreatedGraph{}, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if key == "" {
		key = s.newKey("graph")
	}
	if err := datasource.CheckKey("graph", key); err != nil {
		return datasource.CreatedGraph{}, err
	}
	if s.view(key) != nil {
		return datasource.CreatedGraph{}, &datasource.ConflictError{Err: fmt.Errorf("a graph %s exists already", key)}
	}
	workspace := ""
	if keys := s.GraphKeys(); len(keys) > 0 {
		workspace = s.view(keys[0]).graph.Workspace
	}
	ng := datasource.NewGraphContent(p, key, "html_"+key, workspace, time.Now())
	v, err := newView(ng.Graph, ng.Nodes, nil, nil, 1)
	if err != nil {
		return datasource.CreatedGraph{}, fmt.Errorf("memgraph: new graph %q: %w", key, err)
	}
	s.mu.Lock()
	s.graphs[key] = v
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(key, v.version)
	}
	out := datasource.CreatedGraph{Key: key, Name: p.Name, Type: p.Type, Nodes: ng.NodeKeys(),
		Digest: "v" + strconv.FormatUint(v.version, 10), Open: "--graph " + key, Note: s.applyNote}
	if ng.HTMLClass != nil {
		out.HTMLClass = "html_" + key
	}
	return out, nil
}

// DeleteCreatedGraph removes a graph CreateGraph made while its version is still
// the one it was made with. CreateGraph uses the key assigned, so a record of a
// graph made under another key (a Nodius server's) names none of this store's.
func (s *Store) DeleteCreatedGraph(ctx context.Context, g datasource.CreatedGraph, dryRun bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	v := s.view(g.Key)
	if v == nil {
		return &datasource.NotFoundError{Kind: "graph", Key: g.Key}
	}
	if g.AssignedKey != "" && g.AssignedKey != g.Key {
		// This store makes a graph under the key assigned: a record saying
		// otherwise (an imported thread's) was not made here.
		return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s was not made here under the key assigned (%s), so it is left as it is", g.Key, g.AssignedKey)}
	}
	if g.Digest == "" {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("what graph %s held when it was made was not recorded, so it is left as it is", g.Key)}
	}
	if now := "v" + strconv.FormatUint(v.version, 10); now != g.Digest {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s was changed since it was made (%d change(s)), so it is left as it is", g.Key, v.version-1)}
	}
	if dryRun {
		return nil
	}
	s.mu.Lock()
	delete(s.graphs, g.Key)
	s.mu.Unlock()
	return nil
}
