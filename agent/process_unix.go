//go:build !windows

package agent

import (
	"errors"
	"syscall"
)

// pidAlive reports whether process n exists: signal 0 checks without signalling, and
// EPERM means it exists under another user.
func pidAlive(n int) bool {
	err := syscall.Kill(n, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
