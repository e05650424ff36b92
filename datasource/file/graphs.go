package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nodius/nodius-ai/datasource"
)

var (
	_ datasource.GraphCreator       = (*Source)(nil)
	_ datasource.GraphCreator       = (*Lazy)(nil)
	_ datasource.CreatedGraphFinder = (*Source)(nil)
	_ datasource.CreatedGraphFinder = (*Lazy)(nil)
)

// maxSlug bounds the part of a new graph file's name taken from the graph's name.
const maxSlug = 60

// CanCreateGraph: a graph file makes new graph files next to it; an export is
// read-only and makes none.
func (s *Source) CanCreateGraph(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	export := s.export
	s.mu.Unlock()
	if export != notExport {
		return &ReadOnlyError{Path: s.path, Kind: string(export)}
	}
	return nil
}

// CreateGraph writes the new graph as a new file next to this one, in Nodius's
// format (one graph per file), named after the graph (a slug of its name, then
// -2, -3… when taken: an existing file is never replaced). An HTML class is kept in
// the file as its top-level "htmlClass" member. The digest is the file's SHA-256.
func (s *Source) CreateGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (datasource.CreatedGraph, error) {
	if err := s.CanCreateGraph(ctx); err != nil {
		return datasource.CreatedGraph{}, err
	}
	if key == "" {
		key = "ai_" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	}
	workspace := ""
	if g, err := s.store.Graph(ctx, s.GraphKey()); err == nil {
		workspace = g.Workspace
	}
	htmlKey := ""
	if p.Type == "htmlClass" {
		htmlKey = "html_" + key
	}
	ng := datasource.NewGraphContent(p, key, htmlKey, workspace, time.Now())
	doc := datasource.Document{Graph: ng.Graph, Nodes: ng.Nodes, Edges: []datasource.Edge{},
		NodeConfigs: []datasource.NodeConfig{}, Format: datasource.FormatNodius}
	if ng.HTMLClass != nil {
		raw, err := json.Marshal(ng.HTMLClass)
		if err != nil {
			return datasource.CreatedGraph{}, err
		}
		doc.Extra = map[string]json.RawMessage{"htmlClass": raw}
	}
	data, err := Encode(doc)
	if err != nil {
		return datasource.CreatedGraph{}, fmt.Errorf("new graph %q: encoding: %w", p.Name, err)
	}
	display, real, err := writeNew(filepath.Dir(s.path), filepath.Dir(s.real), slug(p.Name), data)
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	sum := sha256.Sum256(data)
	return datasource.CreatedGraph{Key: key, Name: p.Name, Type: p.Type, HTMLClass: htmlKey, Nodes: ng.NodeKeys(),
		Path: display, File: real, Digest: "sha256:" + hex.EncodeToString(sum[:]),
		Open: "--source file:" + display}, nil
}

// MadeGraph tells whether CreateGraph wrote the graph of key for p: one of the
// files it would have named (NAME.json, NAME-2.json, …) next to this one holds it.
func (s *Source) MadeGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (bool, error) {
	return madeGraph(ctx, filepath.Dir(s.real), p, key)
}

// MadeGraph is Source.MadeGraph (it needs no parse of this file).
func (l *Lazy) MadeGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (bool, error) {
	dir := filepath.Dir(l.path)
	if real, err := realPath(l.path); err == nil {
		dir = filepath.Dir(real)
	}
	return madeGraph(ctx, dir, p, key)
}

func madeGraph(ctx context.Context, dir string, p datasource.CreateGraphPayload, key string) (bool, error) {
	name := slug(p.Name)
	for i := 1; i <= 100; i++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		base := name + ".json"
		if i > 1 {
			base = name + "-" + strconv.Itoa(i) + ".json"
		}
		path := filepath.Join(dir, base)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if g, ok := (&Lazy{path: path}).peek(); ok && g.Key == key {
			return true, nil
		}
	}
	return false, nil
}

// writeNew writes data to a new file NAME.json (NAME-2.json, … when taken) in dir,
// never replacing a file, and returns the path as the user would write it (under
// shown, the directory as given) and the real one. The content is written and
// synced in a temporary file first, then hard-linked to its name — a link fails
// when the name exists, and a process killed meanwhile leaves no half-written
// graph file under that name (only the temporary one, which nothing reads).
func writeNew(shown, dir, name string, data []byte) (string, string, error) {
	tmp, err := os.CreateTemp(dir, "."+name+"-*.tmp")
	if err != nil {
		return "", "", fmt.Errorf("creating a graph file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", fmt.Errorf("writing a graph file in %s: %w", dir, err)
	}
	for i := 1; i <= 100; i++ {
		base := name + ".json"
		if i > 1 {
			base = name + "-" + strconv.Itoa(i) + ".json"
		}
		real := filepath.Join(dir, base)
		err := os.Link(tmp.Name(), real)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("creating graph file %s: %w", real, err)
		}
		if abs, err := filepath.Abs(real); err == nil {
			real = abs
		}
		display := filepath.Join(shown, base)
		if !filepath.IsAbs(display) && !strings.HasPrefix(display, ".") {
			display = "." + string(filepath.Separator) + display
		}
		return display, real, nil
	}
	return "", "", fmt.Errorf("creating graph file %s.json in %s: that name and 99 numbered ones are taken", name, dir)
}

// slug makes a file name from a graph's name: letters and digits, lowercased,
// anything else one dash; never empty, never starting with a dot.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= maxSlug {
			break
		}
	}
	if b.Len() == 0 {
		return "graph"
	}
	return b.String()
}

// DeleteCreatedGraph removes a graph file CreateGraph wrote, under the file's lock,
// only while its bytes are still the ones written: a graph edited since (by
// nodius-ai or by hand) is left.
//
// The record may come from an imported thread: only a regular .json file in this
// source's directory, other than the source's own file, holding a graph of the
// recorded key, is ever removed.
func (s *Source) DeleteCreatedGraph(ctx context.Context, g datasource.CreatedGraph, dryRun bool) error {
	return deleteCreated(ctx, s.real, g, dryRun, s.LockWait)
}

// deleteCreated removes the graph file g names next to own, the source's file.
func deleteCreated(ctx context.Context, own string, g datasource.CreatedGraph, dryRun bool, wait time.Duration) error {
	if g.AssignedKey != "" && g.AssignedKey != g.Key {
		// CreateGraph writes the graph under the key assigned: a record saying
		// otherwise (an imported thread's) was not made here.
		return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s was not made here under the key assigned (%s), so it is left as it is", g.Key, g.AssignedKey)}
	}
	if g.File == "" || g.Digest == "" {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("where graph %s was written, or what it held, was not recorded, so it is left as it is", g.Key)}
	}
	dir := canonical(filepath.Dir(own))
	if canonical(filepath.Dir(g.File)) != dir || filepath.Ext(g.File) != ".json" {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("%s is not a graph file next to this source's (%s), so it is left as it is", g.Path, dir)}
	}
	if canonical(g.File) == canonical(own) {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("%s is the graph file in use, not one a change created, so it is left as it is", g.Path)}
	}
	gone := func() error {
		return fmt.Errorf("graph file %s: %w", g.Path, &datasource.NotFoundError{Kind: "graph", Key: g.Key})
	}
	st, err := os.Lstat(g.File)
	if errors.Is(err, fs.ErrNotExist) {
		return gone()
	}
	if err == nil && !st.Mode().IsRegular() {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("%s is not a regular file any more, so it is left as it is", g.Path)}
	}
	f := &Source{path: g.Path, real: g.File, LockWait: wait}
	unlock, err := f.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(g.File)
	if errors.Is(err, fs.ErrNotExist) {
		return gone()
	}
	if err != nil {
		return fmt.Errorf("graph file %s: %w", g.Path, err)
	}
	if sum := sha256.Sum256(data); "sha256:"+hex.EncodeToString(sum[:]) != g.Digest {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("graph file %s was changed since it was created, so it is left as it is (delete it yourself if you no longer want it)", g.Path)}
	}
	if doc, err := Parse(g.Path, data); err != nil || doc.Graph.Key != g.Key {
		return &datasource.GraphChangedError{Why: fmt.Sprintf("%s does not hold graph %s, so it is left as it is", g.Path, g.Key)}
	}
	if dryRun {
		return nil
	}
	if err := os.Remove(g.File); err != nil {
		return fmt.Errorf("removing graph file %s: %w", g.Path, err)
	}
	_ = os.Remove(f.lockPath()) // the file it locked is gone
	return nil
}

// canonical is dir absolute, its symbolic links resolved (as is, where that fails).
func canonical(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// CanCreateGraph is Source.CanCreateGraph; a .ndex export is known without
// parsing the file.
func (l *Lazy) CanCreateGraph(ctx context.Context) error {
	if isNdexFile(l.path) {
		return &ReadOnlyError{Path: l.path, Kind: string(ndexExport)}
	}
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.CanCreateGraph(ctx)
}

// CreateGraph is Source.CreateGraph.
func (l *Lazy) CreateGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (datasource.CreatedGraph, error) {
	s, err := l.open(ctx)
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	return s.CreateGraph(ctx, p, key)
}

// DeleteCreatedGraph is Source.DeleteCreatedGraph (it needs no parse of this file).
func (l *Lazy) DeleteCreatedGraph(ctx context.Context, g datasource.CreatedGraph, dryRun bool) error {
	own := l.path
	if real, err := realPath(l.path); err == nil {
		own = real // CreateGraph wrote next to the file itself
	}
	return deleteCreated(ctx, own, g, dryRun, l.LockWait)
}
