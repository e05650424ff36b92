package config

import (
	"os"
	"path/filepath"
)

// home is $HOME from getenv, falling back to the OS's idea of it so that a test's
// empty environment still gets a path under a real directory rather than "/".
func home(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// xdg returns $VAR, else ~/fallback (the XDG base directory rule).
func xdg(getenv func(string) string, env, fallback string) string {
	if d := getenv(env); d != "" && filepath.IsAbs(d) {
		return d
	}
	h := home(getenv)
	if h == "" {
		return ""
	}
	return filepath.Join(h, fallback)
}

// DefaultConfigPath is $XDG_CONFIG_HOME/nodius-ai/config.toml (~/.config when unset).
func DefaultConfigPath(getenv func(string) string) string {
	d := xdg(getenv, "XDG_CONFIG_HOME", ".config")
	if d == "" {
		return ""
	}
	return filepath.Join(d, "nodius-ai", "config.toml")
}

// DefaultDBPath is $XDG_DATA_HOME/nodius-ai/threads.db (~/.local/share when unset).
// The caller creates the directory (0700) when it opens the database.
func DefaultDBPath(getenv func(string) string) string {
	d := xdg(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	if d == "" {
		return "threads.db"
	}
	return filepath.Join(d, "nodius-ai", "threads.db")
}

// StateDir is $XDG_STATE_HOME/nodius-ai (~/.local/state when unset), where logs go.
func StateDir(getenv func(string) string) string {
	d := xdg(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
	if d == "" {
		return "."
	}
	return filepath.Join(d, "nodius-ai")
}
