//go:build !unix

package main_test

import "errors"

// mkfifo: no named pipes on this system; the tests that need one skip.
func mkfifo(string) error { return errors.ErrUnsupported }
