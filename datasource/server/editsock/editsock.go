// Package editsock is kept so that code written against it still builds: the
// client of the Nodius server's editing protocol is in internal/nodiusapi, the one
// client of the Nodius server (nodiusapi.Editor, DialEditor). New code uses
// nodiusapi.
package editsock

import "github.com/nodius/nodius-ai/internal/nodiusapi"

// Names of nodiusapi, under their former names.
type (
	Conn         = nodiusapi.Editor
	Options      = nodiusapi.EditorOptions
	Frame        = nodiusapi.Frame
	Registration = nodiusapi.Registration
	RefusedError = nodiusapi.RefusedError
)

const (
	DefaultAckTimeout = nodiusapi.DefaultAckTimeout
	MaxInstructions   = nodiusapi.MaxInstructions
)

var (
	ErrClosed = nodiusapi.ErrClosed
	Dial      = nodiusapi.DialEditor
)
