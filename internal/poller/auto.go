package poller

// Offload is implemented by a Provider whose owner finishes each
// completion on the loop goroutine but runs its users' code for it on
// other goroutines: httpd parses a request on the loop and hands it to a
// pooled handler goroutine, whose response crosses back. Auto weighs it
// as it weighs HandOff; the backend's mechanics do not change.
type Offload interface {
	Provider
	Offloads() bool
}

// offloads reports whether p's owner runs its users' code elsewhere.
func offloads(p Provider) bool {
	o, ok := p.(Offload)
	return ok && o.Offloads()
}

// autoKinds is the one place Auto is decided: the backends it tries for
// p's owner, best first, on this platform. On Linux it is io_uring, then
// epoll, for an owner that reads a completion's buffer in place
// (Transient) and finishes its work on the loop goroutine (neither
// HandOff nor Offload): the loop then reads the ring's buffers without a
// copy and submits the sends its callbacks made with the system call that
// waits, far fewer system calls per message than epoll makes
// (docs/bench/io_uring). Every other owner crosses to another goroutine
// per message, which an io_uring loop, holding its OS thread, pays for
// with a wake-up across threads, and epoll measured faster for them
// (aio's ring, unbound so that it needs no such wake-up, pays a copy per
// receive instead, and still trails epoll with many busy connections:
// package backend's table; docs/bench/figures.md). Elsewhere it is the platform's
// native backend: kqueue on the BSDs and macOS, Net where there is none.
// On Windows it is IOCP, then Net, for the same owners as io_uring on
// Linux (engine's callbacks), and Net for the others: a completion port
// serves only sockets no other port has, and package net gives every
// socket it makes to the Go runtime's. aio's sockets are its user's
// net.Conns, httpd's come from the user's net.Listener, and netconn's
// listeners and dials are package net's (only what they accept would
// reach the port): an IOCP loop would serve them the Net way, plus a hop.
// engine's own TCP listeners are made with Winsock (engine's
// listenNative), which the port takes.
func autoKinds(p Provider) []Kind {
	switch {
	case native == Epoll && (autoURingAll || transient(p) && !handsOff(p) && !offloads(p)):
		return []Kind{IOURing, Epoll}
	case native == IOCP && transient(p) && !handsOff(p) && !offloads(p):
		return []Kind{IOCP, Net}
	case native == IOCP:
		return []Kind{Net}
	}
	return []Kind{native}
}

// autoURingAll makes Auto try io_uring first for every owner; tests only.
var autoURingAll = false
