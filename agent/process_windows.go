//go:build windows

package agent

import "golang.org/x/sys/windows"

// stillActive is the exit code Windows reports for a process that has not exited.
const stillActive = 259

// pidAlive reports whether process n is running. A process we may not open (access
// denied) exists, so it counts as alive.
func pidAlive(n int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(n))
	if err != nil {
		return err == windows.ERROR_ACCESS_DENIED
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}
