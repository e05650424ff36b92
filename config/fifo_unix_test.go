//go:build unix

package config

import "syscall"

// mkfifo makes a named pipe at path (the tests of a FIFO where the system has them).
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
