package netconn

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
)

// linger is how long a group's loops outlive their last connection, so
// that a program dialing one connection after another does not start and
// stop loops each time.
const linger = 200 * time.Millisecond

// readBufSize is the size of each loop's read buffer, lent to receives.
const readBufSize = 64 << 10

// A group is the set of loops serving one backend's connections: one loop
// per GOMAXPROCS, started with the first connection or listener and
// stopped a linger after the last one closed.
type group struct {
	kind  backend.Kind
	key   groupKey
	loops []*nloop
	refs  int // guarded by groups.mu
	next  atomic.Uint32
	idle  *time.Timer // the pending stop, guarded by groups.mu
}

var groups struct {
	mu sync.Mutex
	m  map[groupKey]*group
}

// groupKey names a group: the backend asked for, and GALE_BACKEND, which
// overrides it (tests run the same code on each backend in turn).
type groupKey struct {
	kind backend.Kind
	env  string
}

func keyOf(kind backend.Kind) groupKey { return groupKey{kind, os.Getenv("GALE_BACKEND")} }

// acquire returns the running group of kind, starting it if need be, and
// counts one more user.
func acquire(kind backend.Kind) (*group, error) {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	key := keyOf(kind)
	g := groups.m[key]
	if g == nil {
		var err error
		if g, err = startGroup(kind); err != nil {
			return nil, err
		}
		g.key = key
		if groups.m == nil {
			groups.m = map[groupKey]*group{}
		}
		groups.m[key] = g
	}
	if g.idle != nil {
		g.idle.Stop()
		g.idle = nil
	}
	g.refs++
	return g, nil
}

// release ends one use of g; the last one stops g after linger.
func (g *group) release() {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	g.refs--
	if g.refs > 0 {
		return
	}
	g.idle = time.AfterFunc(linger, func() {
		groups.mu.Lock()
		if g.refs > 0 || groups.m[g.key] != g {
			groups.mu.Unlock()
			return
		}
		delete(groups.m, g.key)
		groups.mu.Unlock()
		g.stop()
	})
}

func startGroup(kind backend.Kind) (*group, error) {
	g := &group{kind: kind}
	for range max(1, runtime.GOMAXPROCS(0)) {
		lp := &nloop{buf: make([]byte, readBufSize)}
		l, err := loop.New(loop.Config{Provider: lp, Backend: kind, Fault: lp.fault, Flush: lp.flush})
		if err != nil {
			g.stop()
			return nil, fmt.Errorf("netconn: %w", err)
		}
		lp.l = l
		lp.conns = loop.NewSet(func(c *Conn) *int32 { return &c.index })
		g.loops = append(g.loops, lp)
		l.Start()
	}
	return g, nil
}

func (g *group) stop() {
	for _, lp := range g.loops {
		lp.l.Stop(nil)
	}
}

// pick chooses the loop of a new connection, in turn.
func (g *group) pick() *nloop {
	return g.loops[int(g.next.Add(1))%len(g.loops)]
}

// An nloop is one loop of a group and what its goroutine owns.
type nloop struct {
	l     *loop.Loop
	buf   []byte
	conns loop.Set[*Conn]
	err   error // the backend failure that ended the loop; loop-owned
	woke  bool  // this iteration may have readied a parked goroutine
}

// flush tells the loop whether it readied goroutines this iteration, so
// that it yields before it blocks in the kernel: a goroutine readied by
// the loop waits in the loop's P otherwise, until the scheduler notices
// the P is blocked (on io_uring, tens of microseconds and more).
func (lp *nloop) flush() bool {
	w := lp.woke
	lp.woke = false
	return w
}

// Provide lends the loop's read buffer; a receive's owner copies the bytes
// out before its Complete returns.
func (lp *nloop) Provide() ([]byte, int) { return lp.buf, 0 }

// Commit is a no-op: the buffer is whole again once Complete returns.
func (lp *nloop) Commit(int, int) {}

// Transient tells a completion backend that the buffer is free again
// when Complete returns.
func (lp *nloop) Transient() bool { return true }

// HandsOff tells the backend that receives go to goroutines parked in
// Read: on epoll the loop waits through a relay, so that those hand-offs
// stay on one thread (io_uring keeps its ring bound: the provider is
// Transient).
func (lp *nloop) HandsOff() bool { return true }

// fault fails every connection of a loop whose backend failed.
func (lp *nloop) fault(l *loop.Loop, err error) {
	lp.err = err
	for _, c := range append([]*Conn(nil), lp.conns.Members()...) {
		c.fail(l, err)
	}
}
