//go:build !windows

package backendtest

// underWine reports false: Wine runs Windows programs only.
func underWine() bool { return false }
