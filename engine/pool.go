package engine

import (
	"runtime"
	"time"

	"github.com/galeio/gale/internal/workpool"
)

// A Pool runs connections' callbacks off their loops, on a bounded set of
// goroutines, in order per connection: give it to an engine as
// Options.Pool (or to package websocket as its Options.Pool) and a
// callback may block (a database call, a slow computation) without
// stalling the other connections of its loop.
//
// For each connection the pool keeps a queue of its events, and runs
// them one at a time, in the order the loop saw them: never two
// callbacks of one connection at once, so a handler needs no lock for
// its per-connection state. A connection occupies at most one worker at
// a time; a worker runs a few of its callbacks, then puts it at the back
// of the queue, so a connection that floods takes turns with the others.
// The loop never waits for the pool: handing an event over takes a lock
// for a few instructions, whatever the workers are doing. The input
// queued for a connection is bounded by PoolOptions.MaxQueued: past it,
// the loop stops reading that connection (TCP then slows its peer) until
// a worker takes the input.
//
// Workers are started when there is work and none is idle, up to
// PoolOptions.MaxWorkers, and end after PoolOptions.IdleTimeout without
// work: an idle connection holds no goroutine, and an idle pool none.
// One pool may serve several engines.
//
// The bound on workers is the one knob a peer could turn against the
// others: with every worker blocked in callbacks that wait for their
// peers, the other connections wait their turn. So size MaxWorkers for
// the callbacks that wait (as one would size a database's connection
// pool), and bound each wait with a deadline or a context. Conn.WaitOutput
// called from a pooled callback gives its worker up while it waits, so
// peers that do not read what they are sent cannot take the pool that
// way.
type Pool struct {
	wp *workpool.Pool
}

// PoolOptions configures a Pool. The zero value gives the defaults,
// listed with each field.
type PoolOptions struct {
	// MaxWorkers caps the goroutines running callbacks at once. Default
	// max(64, 16 * GOMAXPROCS).
	MaxWorkers int
	// MaxQueued bounds the input queued for a connection and not yet
	// handed to its OnData (or to package websocket's callbacks: the
	// payloads of the messages waiting): past it the loop stops reading
	// the connection until a worker takes the input. It does not count
	// what OnData leaves unconsumed, which Options.MaxInputBuffer caps.
	// Default 64 KiB, as Options.WriteHighWater.
	MaxQueued int
	// IdleTimeout is how long a worker with nothing to do waits before it
	// ends. Default 2 s.
	IdleTimeout time.Duration
}

// NewPool returns a Pool with the options o.
func NewPool(o PoolOptions) *Pool {
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = max(64, 16*runtime.GOMAXPROCS(0))
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 64 << 10
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Second
	}
	wp := workpool.New(o.MaxWorkers, o.IdleTimeout)
	wp.MaxQueued = o.MaxQueued
	return &Pool{wp: wp}
}

// Close ends the pool's idle workers and waits until the callbacks queued
// have run and every worker has ended. Close it once the engines using it
// have stopped (their Stop and Shutdown wait for the callbacks of their
// connections); a closed pool still runs what it is given, on workers
// that end as soon as they have nothing to do.
func (p *Pool) Close() { p.wp.Close() }

// Workers returns the number of goroutines the pool has, running
// callbacks or idle.
func (p *Pool) Workers() int { return p.wp.Workers() }

func init() {
	workpool.FromEngine = func(p any) *workpool.Pool { return p.(*Pool).wp }
	workpool.Hold = func(c any) { c.(*Conn).lbits.set(bQueued, true) }
	workpool.Unhold = func(c any) { c.(*Conn).unqueue() }
}
