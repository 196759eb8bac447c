package engine

import (
	"runtime"
	"time"

	"github.com/galeio/gale/internal/loop"
)

// Balance chooses the loop of each accepted connection when one acceptor
// serves a listener (Options.ReusePort false).
type Balance int

const (
	// RoundRobin gives connections to the loops in turn.
	RoundRobin Balance = iota
	// LeastConns gives each connection to the loop serving the fewest.
	LeastConns
	// SourceHash gives connections from one source address to one loop.
	SourceHash
)

// Options configures an Engine. The zero value gives the defaults, listed
// with each field.
type Options struct {
	// Loops is the number of event loops. Default runtime.GOMAXPROCS(0).
	Loops int
	// ReusePort opens one listener per loop with SO_REUSEPORT and lets the
	// kernel spread connections (TCP and UDP on Linux and FreeBSD). When
	// false, loop 0 accepts and Balance picks each connection's loop.
	ReusePort bool
	// Balance picks loops when ReusePort is false. Default RoundRobin.
	Balance Balance
	// ReadBufferSize is the size of each loop's read buffer, shared by its
	// connections. Default 64 KiB.
	ReadBufferSize int
	// WriteHighWater: once a connection has more bytes queued for output,
	// its loop stops reading from it. Default 1 MiB.
	WriteHighWater int
	// WriteLowWater: reading resumes once the queue is at most this long.
	// Default WriteHighWater / 4.
	WriteLowWater int
	// MaxWriteBuffer is the most output a connection may queue; a Write
	// beyond it fails with ErrWriteBufferFull and the connection closes.
	// Default 16 MiB.
	MaxWriteBuffer int
	// OutputBudget caps the output queued across the whole engine: above
	// it, every connection with queued output stops reading until the
	// total is below the budget again. 0 means no budget.
	OutputBudget int64
	// IdleTimeout closes a connection that has neither read nor written
	// for this long, reporting os.ErrDeadlineExceeded. 0 means none.
	IdleTimeout time.Duration
	// CloseOnDeadline closes a connection when a deadline passes (after
	// OnDeadline). By default the handler decides.
	CloseOnDeadline bool
	// TCPKeepAlive sets the keep-alive period of TCP connections; 0 keeps
	// the system's, negative disables it.
	TCPKeepAlive time.Duration
	// Backend selects epoll or io_uring; default Auto. See Backend.
	Backend Backend

	clock loop.Clock  // tests: manual clock
	open  loop.Opener // tests: fault injection
}

func (o *Options) setDefaults() {
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = 64 << 10
	}
	if o.WriteHighWater <= 0 {
		o.WriteHighWater = 1 << 20
	}
	if o.WriteLowWater <= 0 || o.WriteLowWater > o.WriteHighWater {
		o.WriteLowWater = o.WriteHighWater / 4
	}
	if o.MaxWriteBuffer <= 0 {
		o.MaxWriteBuffer = 16 << 20
	}
	o.MaxWriteBuffer = max(o.MaxWriteBuffer, o.WriteHighWater)
}
