package syncer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nodius/nodius-ai/threads"
)

// State is the sync watermarks of one threads database, kept in a JSON file next to
// it rather than in the database: the store's schema belongs to the store, and a
// lost or deleted state file only costs one full sync (every step is idempotent).
type State struct {
	// Remotes maps "RemoteID workspace" to that remote's watermarks.
	Remotes map[string]Marks `json:"remotes"`
}

// Marks are one remote's watermarks, in Unix milliseconds: local UpdatedAt for push,
// remote lastUpdatedTime for pull.
type Marks struct {
	LastPush int64 `json:"lastPush"`
	LastPull int64 `json:"lastPull"`
}

// StatePath is the default state file of a store: "threads.db.sync.json".
func StatePath(store *threads.Store) string { return store.Path() + ".sync.json" }

func stateKey(o Options) string {
	id := o.RemoteID
	if id == "" {
		id = "default"
	}
	return id + " " + o.Workspace
}

// LoadState reads the state file; a missing file is an empty state. A damaged file
// is an error naming it, since guessing would silently re-sync or skip threads.
func LoadState(path string) (*State, error) {
	st := &State{Remotes: map[string]Marks{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread sync: read the sync state %s: %w", path, err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("thread sync: the sync state %s is damaged (delete it to sync everything again): %w", path, err)
	}
	if st.Remotes == nil {
		st.Remotes = map[string]Marks{}
	}
	return st, nil
}

// Save writes the state atomically (temporary file, fsync, rename), 0600 like the
// database. Two processes saving at once lose at most one update, which the next
// sync redoes harmlessly.
func (st *State) Save(path string) (err error) {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("thread sync: encode the sync state: %w", err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("thread sync: save the sync state: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			err = fmt.Errorf("thread sync: save the sync state %s: %w", path, err)
		}
	}()
	if _, err = f.Write(append(b, '\n')); err != nil {
		return err
	}
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
