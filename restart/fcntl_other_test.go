//go:build unix && !linux

package restart_test

// fdCloexec is not checked here: it reports true.
func fdCloexec(int) bool { return true }
