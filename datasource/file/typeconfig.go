package file

import (
	"context"
	"fmt"

	"github.com/nodius/nodius-ai/datasource"
)

// Node types in a graph file. In Nodius's format a type's config holds its code
// (node.process), its handles and its size (node.size): a type change is written
// there, and every node of the type runs the new code. In the earlier format the
// code lives on the nodes and configs are flat: a change of a type's name, look,
// handles or size is written to its flat config, new code to each node of the
// type (as before); a new type with code is refused, as its code would have no
// node to live on — converting the file (graph convert) makes it writable.

// ErrEarlierTypeCode says that a type with code cannot be created in a file of the
// earlier format.
type ErrEarlierTypeCode struct{ Path, Type string }

func (e *ErrEarlierTypeCode) Error() string {
	return fmt.Sprintf("graph file %s is in the earlier format, where code lives on nodes: a new node type %q with code has nowhere to keep it; convert the file first (nodius-ai graph convert %s NEW.json) and use the converted file", e.Path, e.Type, e.Path)
}

// refuseEarlierTypeCode is the refusal of a's type creations with code when the
// file is in the earlier format; nil otherwise.
func (s *Source) refuseEarlierTypeCode(a datasource.Action) error {
	if s.Format() != datasource.FormatEarlier {
		return nil
	}
	var walk func(a datasource.Action, depth int) error
	walk = func(a datasource.Action, depth int) error {
		switch {
		case depth > datasource.MaxBatchDepth:
		case a.Type == datasource.ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
			if c := a.ConfigureNodeType; c.Mode == "create" && c.Process != "" {
				return &datasource.ConflictError{Err: &ErrEarlierTypeCode{Path: s.path, Type: c.TypeKey}}
			}
		case a.Type == datasource.BatchAction && a.Batch != nil:
			for _, sub := range a.Batch.Actions {
				if err := walk(sub, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(a, 0)
}

var _ datasource.ConfigWriter = (*Source)(nil)

// PutConfig creates or replaces a node type and saves the file.
func (s *Source) PutConfig(ctx context.Context, graphKey string, c datasource.NodeConfig) (out datasource.NodeConfig, err error) {
	if s.Format() == datasource.FormatEarlier && c.Process != "" {
		if _, ok := configOf(ctx, s, graphKey, c.Key); !ok {
			return out, &ErrEarlierTypeCode{Path: s.path, Type: c.Key}
		}
	}
	err = s.write(ctx, func() error { out, err = s.store.PutConfig(ctx, graphKey, c); return err })
	return out, err
}

// DeleteConfig removes a node type no node uses and saves the file.
func (s *Source) DeleteConfig(ctx context.Context, graphKey, key string) error {
	return s.write(ctx, func() error { return s.store.DeleteConfig(ctx, graphKey, key) })
}

func configOf(ctx context.Context, s *Source, graphKey, key string) (datasource.NodeConfig, bool) {
	cfgs, err := s.store.Configs(ctx, graphKey)
	if err != nil {
		return datasource.NodeConfig{}, false
	}
	for _, c := range cfgs {
		if c.Key == key {
			return c, true
		}
	}
	return datasource.NodeConfig{}, false
}

// Format is the format of the file once it has been read (FormatAuto before).
func (l *Lazy) Format() datasource.Format {
	l.mu.Lock()
	src := l.src
	l.mu.Unlock()
	if src == nil {
		return datasource.FormatAuto
	}
	return src.Format()
}

var _ datasource.ConfigWriter = (*Lazy)(nil)

// PutConfig opens the file when it is not yet and runs Source.PutConfig.
func (l *Lazy) PutConfig(ctx context.Context, graphKey string, c datasource.NodeConfig) (datasource.NodeConfig, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.NodeConfig{}, err
	}
	defer l.wrote()
	return s.PutConfig(ctx, graphKey, c)
}

// DeleteConfig opens the file when it is not yet and runs Source.DeleteConfig.
func (l *Lazy) DeleteConfig(ctx context.Context, graphKey, key string) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer l.wrote()
	return s.DeleteConfig(ctx, graphKey, key)
}
