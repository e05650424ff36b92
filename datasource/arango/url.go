package arango

import "github.com/nodius/nodius-ai/datasource/arango/arangourl"

// The source URL and the connection settings are read by package arangourl, apart
// from the driver; these are its names here.

// Config says where an ArangoDB is and which workspace to read (see arangourl.Config).
type Config = arangourl.Config

const (
	// DefaultDatabase is used when the URL names none.
	DefaultDatabase = arangourl.DefaultDatabase
	// DefaultWorkspace is the workspace of graphs when neither the URL nor the
	// configuration names one.
	DefaultWorkspace = arangourl.DefaultWorkspace
	// DefaultMaxResultBytes bounds one ArangoDB answer when the config sets nothing.
	DefaultMaxResultBytes = arangourl.DefaultMaxResultBytes
)

// ParseURL reads arango://USER:PASS@HOST:PORT/DB?workspace=W, arangos:// for TLS
// (see arangourl.Parse).
func ParseURL(raw string) (Config, error) { return arangourl.Parse(raw) }
