//go:build unix

package soak

import "syscall"

// openFileLimit returns the soft limit on open files, getrlimit(2).
func openFileLimit() (uint64, bool) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0, false
	}
	return uint64(lim.Cur), true // int64 on the BSDs
}
