//go:build !windows

package backendtest

// UnderWine reports false: Wine runs Windows programs only.
func UnderWine() bool { return false }
