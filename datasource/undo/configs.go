package undo

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// Node type changes: an update is reversed by putting the type back as it was
// (restore_config), a created type by removing it (remove_config), each checked
// first against the type as it is now: a type edited since is drift.

// configRecording is the recording of a working copy that keeps node types.
type configRecording struct {
	recording
	cc datasource.ConfigChanges
}

func (c *configRecording) LookupNode(key string) (datasource.Node, bool) { return c.w.LookupNode(key) }

func (c *configRecording) LookupConfig(key string) (datasource.NodeConfig, bool) {
	return c.cc.LookupConfig(key)
}

func (c *configRecording) PutConfig(cfg datasource.NodeConfig) (datasource.NodeConfig, error) {
	old, existed := c.cc.LookupConfig(cfg.Key)
	out, err := c.cc.PutConfig(cfg)
	if err != nil {
		c.r.add(nil, err)
		return out, err
	}
	if now, ok := c.cc.LookupConfig(out.Key); ok {
		out = now
	}
	after := configState(out)
	if existed {
		c.r.add([]Step{{Op: RestoreConfig, Key: out.Key, Config: &old, After: after}}, nil)
	} else {
		c.r.add([]Step{{Op: RemoveConfig, Key: out.Key, Config: &out, After: after}}, nil)
	}
	return out, nil
}

func (c *configRecording) DeleteConfig(key string) error {
	old, ok := c.cc.LookupConfig(key)
	if err := c.cc.DeleteConfig(key); err != nil || !ok {
		c.r.add(nil, errors.Join(err, unreadIf(!ok, "node type", key)))
		return err
	}
	// Put back as it was: a removed type comes back whole.
	c.r.add([]Step{{Op: RestoreConfig, Key: key, Config: &old}}, nil)
	return nil
}

func unreadIf(cond bool, kind, key string) error {
	if !cond {
		return nil
	}
	return unread(kind, key)
}

// checkConfig tells whether a node type step is to do, done or drifted.
func checkConfig(w datasource.WorkingCopy, s Step) (stepState, string) {
	cc, ok := w.(datasource.ConfigChanges)
	if !ok {
		return drifted, fmt.Sprintf("node type %s cannot be changed on this source", s.Key)
	}
	now, exists := cc.LookupConfig(s.Key)
	switch s.Op {
	case RemoveConfig:
		if !exists {
			return done, ""
		}
	case RestoreConfig:
		if exists && s.Config != nil && sameType(now, *s.Config) {
			return done, ""
		}
		if !exists {
			if s.After == nil { // a type the change removed: it comes back
				return todo, ""
			}
			return drifted, fmt.Sprintf("node type %s was deleted since", s.Key)
		}
	}
	if s.After != nil {
		if changed := changedFields(configState(now), s.After); len(changed) > 0 {
			if i := slices.Index(changed, "#members"); i >= 0 {
				changed[i] = "members added or removed"
			}
			return drifted, fmt.Sprintf("node type %s was edited since (%s)", s.Key, strings.Join(changed, ", "))
		}
	}
	return todo, ""
}

// configState is what a node type step checks is still as the change left it:
// the fields a change makes (datasource.TypeFields), and every other member of
// the config ("node.NAME" for those of its node), so that undo never puts back
// silently a member someone changed since (alwaysRendered, version, a node
// member). Its timestamps are left out: a change stamps them, and a plan made on
// a copy stamps others. A reversal recorded with TypeFields alone is checked on
// those.
func configState(c datasource.NodeConfig) map[string]any {
	f := datasource.TypeFields(c)
	f["workspace"] = c.Workspace
	plain := func(raw json.RawMessage) any {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return string(raw)
		}
		return v
	}
	var names []string // a member added or removed since is a change too
	for k, raw := range c.Extra {
		if k == "createdTime" || k == "lastUpdatedTime" {
			continue
		}
		names = append(names, k)
		if _, shown := f[k]; !shown {
			f[k] = plain(raw)
		}
	}
	for k, raw := range c.NodeExtra {
		names = append(names, "node."+k)
		if k != "size" {
			f["node."+k] = plain(raw)
		}
	}
	sort.Strings(names)
	f["#members"] = names
	return f
}

// sameType compares two versions of a type by the fields a change makes.
func sameType(a, b datasource.NodeConfig) bool {
	return len(changedFields(datasource.TypeFields(a), datasource.TypeFields(b))) == 0
}

func changedFields(now, want map[string]any) []string {
	var out []string
	for _, f := range sortedKeys(want) {
		if !datasource.SameJSON(now[f], want[f]) {
			out = append(out, f)
		}
	}
	return out
}

// applyConfig makes a node type step on w.
func applyConfig(w datasource.WorkingCopy, s Step) error {
	cc, ok := w.(datasource.ConfigChanges)
	if !ok {
		return fmt.Errorf("this source cannot change node type %s", s.Key)
	}
	if s.Config == nil {
		return errors.New("the node type was not recorded")
	}
	if s.Op == RemoveConfig {
		return cc.DeleteConfig(s.Key)
	}
	_, err := cc.PutConfig(*s.Config)
	return err
}
