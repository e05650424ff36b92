//go:build !unix

package config

import "errors"

// mkfifo: no named pipes on this system; the tests that need one skip.
func mkfifo(string) error { return errors.ErrUnsupported }
