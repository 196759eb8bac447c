package netconn

import (
	"runtime"

	"github.com/galeio/gale/internal/loop"
)

// Backend names the kernel interface of the loops serving a connection.
type Backend = loop.Backend

// The backends. Auto is io_uring where the kernel allows it, epoll
// otherwise on Linux, and kqueue on the BSDs and macOS. The environment
// variable GALE_BACKEND (epoll, io_uring, kqueue) overrides the choice.
const (
	Auto    = loop.Auto
	Epoll   = loop.Epoll
	IOURing = loop.IOURing
	Kqueue  = loop.Kqueue
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
