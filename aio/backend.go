package aio

import "github.com/galeio/gale/internal/poller"

// Backend selects the kernel interface of the event loops. The
// GALE_BACKEND environment variable (auto, epoll, io_uring, kqueue)
// overrides it for the whole process, which lets a deployment or a test
// run switch without a rebuild.
type Backend uint8

const (
	// Auto uses io_uring where this kernel and its configuration allow it
	// (Linux 6.3 or later, io_uring not disabled by sysctl or a seccomp
	// filter, enough locked memory and descriptors), epoll otherwise on
	// Linux, and kqueue on the BSDs and macOS.
	Auto Backend = iota
	// Epoll uses epoll(7), with completions emulated by non-blocking
	// system calls.
	Epoll
	// IOURing uses io_uring(7): multishot accept and receive from a
	// provided-buffer ring, batched submission. Opening fails where it is
	// unavailable.
	IOURing
	// Kqueue uses kqueue(2) (BSD, macOS).
	Kqueue
)

func (b Backend) String() string { return poller.Kind(b).String() }

// opener returns the function that opens each loop's backend: the test
// hook if set, else the backend b names, with zero-copy sends of at least
// zeroCopy bytes where it has them.
func opener(b Backend, zeroCopy int, hook func(poller.Provider) (poller.Backend, error)) func(poller.Provider) (poller.Backend, error) {
	if hook != nil {
		return hook
	}
	return func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.OpenKind(poller.Kind(b), p)
		if zc, ok := be.(poller.ZeroCopier); ok && zeroCopy > 0 {
			zc.SetZeroCopy(zeroCopy)
		}
		return be, err
	}
}
