// Package nodiusws is kept so that code written against it still builds: the
// WebSocket of a Nodius server (the authenticate handshake, the assistant's
// ai:apply_action and its Applier) is in internal/nodiusapi, the one client of
// the Nodius server. New code uses nodiusapi.
package nodiusws

import "github.com/nodius/nodius-ai/internal/nodiusapi"

// Names of nodiusapi, under their former names.
type (
	Options     = nodiusapi.SocketOptions
	AuthResult  = nodiusapi.AuthResult
	ApplyAction = nodiusapi.ApplyAction
	ApplyReport = nodiusapi.ApplyReport
	Applier     = nodiusapi.Applier
	Preparer    = nodiusapi.Preparer
	Prepared    = nodiusapi.Prepared
)

const (
	CloseAuthFailed    = nodiusapi.CloseAuthFailed
	CloseAuthTimeout   = nodiusapi.CloseAuthTimeout
	DefaultAuthTimeout = nodiusapi.DefaultAuthTimeout
	MaxFrameBytes      = nodiusapi.MaxFrameBytes
)

var (
	Dial      = nodiusapi.DialSocket
	IsTimeout = nodiusapi.IsTimeout
	Reason    = nodiusapi.Reason
)
