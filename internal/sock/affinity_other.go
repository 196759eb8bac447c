//go:build !linux

package sock

import "runtime"

// SetAffinity locks the calling goroutine to its OS thread. Pinning the
// thread to a CPU is not available on this platform, so cpu is ignored.
func SetAffinity(cpu int) error {
	runtime.LockOSThread()
	return nil
}
