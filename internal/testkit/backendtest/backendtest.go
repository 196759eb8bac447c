// Package backendtest runs tests once per backend: the whole aio, engine
// and poller suites are written once and pass on epoll and io_uring (or
// kqueue), each a sub-test named after its backend.
//
// For tests only. A backend this machine cannot run is skipped with the
// reason; GALE_BACKEND, when set, restricts the runs to that backend.
package backendtest

import (
	"os"
	"runtime"
	"testing"

	"github.com/galeio/gale/internal/poller"
)

// netSockets is set by a package whose sockets are package net's
// (NetSockets).
var netSockets bool

// NetSockets says that the calling package's tests serve sockets package
// net makes (the user's conns, listeners and dials): on Windows a
// completion port cannot take them, so an IOCP loop would serve them
// through its net backend, the Net runs' code with a hop, and Kinds
// leaves IOCP out (Auto picks Net for such packages there). Call it from
// TestMain, before any test runs.
func NetSockets() { netSockets = true }

// Kinds returns the backends of this platform, the net fallback last.
func Kinds() []poller.Kind {
	switch runtime.GOOS {
	case "linux":
		return []poller.Kind{poller.Epoll, poller.IOURing, poller.Net}
	case "darwin", "dragonfly", "freebsd", "netbsd", "openbsd":
		return []poller.Kind{poller.Kqueue, poller.Net}
	case "windows":
		if netSockets {
			return []poller.Kind{poller.Net}
		}
		return []poller.Kind{poller.IOCP, poller.Net}
	}
	return []poller.Kind{poller.Net}
}

// Run runs f as a sub-test per backend, with GALE_BACKEND set to it so
// that everything f opens uses it. Tests that call Run must not be
// parallel (t.Setenv).
func Run(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, k := range selected() {
		t.Run(k.String(), func(t *testing.T) {
			if err := poller.Available(k); err != nil {
				t.Skipf("%v backend unavailable here: %v", k, err)
			}
			t.Setenv(poller.EnvBackend, k.String())
			f(t)
		})
	}
}

// RunB runs f as a sub-benchmark per backend, as Run does for tests.
func RunB(b *testing.B, f func(b *testing.B)) {
	b.Helper()
	for _, k := range selected() {
		b.Run(k.String(), func(b *testing.B) {
			if err := poller.Available(k); err != nil {
				b.Skipf("%v backend unavailable here: %v", k, err)
			}
			b.Setenv(poller.EnvBackend, k.String())
			f(b)
		})
	}
}

// Auto clears GALE_BACKEND for t, so that Auto decides, and returns what
// package backend's table says Auto opens here for an owner that prefers
// io_uring, or on Windows IOCP (ring: engine's callbacks), or not. Tests that call it must
// not be parallel (t.Setenv).
func Auto(t testing.TB, ring bool) poller.Kind {
	t.Helper()
	t.Setenv(poller.EnvBackend, "")
	k := Kinds()[0]
	if k == poller.Epoll && ring && poller.Available(poller.IOURing) == nil {
		return poller.IOURing
	}
	if k == poller.IOCP && !ring {
		return poller.Net // Windows: IOCP only where io_uring is on Linux
	}
	return k
}

// selected returns Kinds, or only the one GALE_BACKEND names.
func selected() []poller.Kind {
	only, restricted := os.LookupEnv(poller.EnvBackend)
	var ks []poller.Kind
	for _, k := range Kinds() {
		if restricted && only != "" && only != "auto" {
			if want, err := poller.ParseKind(only); err == nil && want != k {
				continue
			}
		}
		ks = append(ks, k)
	}
	return ks
}

// OnNet reports whether the test runs on the net backend (GALE_BACKEND
// or the platform's Auto), whose operations are package net's blocking
// calls on worker goroutines.
func OnNet() bool {
	k, _ := poller.Choose(poller.Auto)
	return k == poller.Net || (k == poller.Auto && len(Kinds()) == 1)
}

// NetSocketsOnNet reports whether a socket package net made (one an
// http1 server accepts from its net.Listener, an adopted conn) is served
// the net backend's way here: on the net backend, and on Windows under
// any backend, since a completion port cannot take such a socket (IOCP
// serves it through its net backend, and Auto gives such owners Net).
func NetSocketsOnNet() bool { return OnNet() || runtime.GOOS == "windows" }

// SkipOnNet skips a test of what the net backend does not have, for the
// reason why: system calls of gale's own to inject faults into, a
// steady state without allocations, one descriptor per connection.
func SkipOnNet(t testing.TB, why string) {
	t.Helper()
	if OnNet() {
		t.Skip("net backend: " + why)
	}
}

// SocketRefs is how many descriptors refer to a connection's socket
// while a loop holds it: the loop's own, and on the net backend also the
// duplicate package net wraps.
func SocketRefs() int {
	if OnNet() {
		return 2
	}
	return 1
}
