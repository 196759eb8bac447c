package netconn

import (
	"runtime"

	"github.com/galeio/gale/internal/loop"
)

// Backend names the kernel interface of the loops serving a connection.
type Backend = loop.Backend

// The backends. Auto is epoll on Linux and kqueue on the BSDs and macOS:
// unlike engine's callbacks, netconn hands every receive to a parked
// goroutine, and that hand-off costs more from an io_uring loop, whose
// goroutine is locked to its thread (README's figures); ask for IOURing
// to have it. Net is package net's blocking calls behind the loops'
// completions: the portable fallback, which Auto picks where there is
// no native backend. The environment variable GALE_BACKEND (epoll,
// io_uring, kqueue, net) overrides the choice.
const (
	Auto    = loop.Auto
	Epoll   = loop.Epoll
	IOURing = loop.IOURing
	Kqueue  = loop.Kqueue
	Net     = loop.Net
)

// autoKind is what Auto opens.
var autoKind = func() Backend {
	if runtime.GOOS == "linux" {
		return Epoll
	}
	return Auto
}()

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
