//go:build !unix

package soak

// openFileLimit reports no limit on open files: Windows and WebAssembly
// have no getrlimit(2).
func openFileLimit() (uint64, bool) { return 0, false }
