package aio

import (
	"net"
	"reflect"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
	"weak"

	"github.com/galeio/gale/internal/sock"
)

// registry maps a caller's net.Conn to its delegated conn. It is keyed by
// the address of the object behind the interface, like gaio, but holds only
// a weak reference to it: the object can still be collected, and an
// address reused by a new object is told apart because the weak pointer of
// the old entry no longer resolves to it.
type registry struct {
	mu sync.RWMutex
	m  map[uintptr]*conn
}

// connPtr returns the data word of conn's interface: for pointer types, the
// object's address.
func connPtr(conn net.Conn) unsafe.Pointer {
	type iface struct{ typ, data unsafe.Pointer }
	return (*iface)(unsafe.Pointer(&conn)).data
}

// lookup returns the live delegated conn for conn, or nil.
func (g *registry) lookup(conn net.Conn) *conn {
	p := connPtr(conn)
	g.mu.RLock()
	c := g.m[uintptr(p)]
	g.mu.RUnlock()
	if c == nil || unsafe.Pointer(c.ref.Value()) != p {
		return nil
	}
	return c
}

// register delegates conn: it duplicates the descriptor (close-on-exec),
// closes the caller's conn so the duplicate is the only descriptor left,
// and assigns the connection to a loop.
func (w *watcher) register(nc net.Conn) (*conn, error) {
	if reflect.TypeOf(nc).Kind() != reflect.Pointer {
		return nil, ErrUnsupported
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, ErrUnsupported
	}
	g := &w.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.closed.Load() {
		return nil, ErrWatcherClosed // Close sweeps the registry under mu
	}
	p := connPtr(nc)
	if c := g.m[uintptr(p)]; c != nil && unsafe.Pointer(c.ref.Value()) == p {
		return c, nil // registered by a concurrent submission
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		if err == syscall.ENOTSUP || err == syscall.EOPNOTSUPP {
			return nil, ErrUnsupported
		}
		c := &conn{network: addrNetwork(nc.LocalAddr()), laddr: nc.LocalAddr(), raddr: nc.RemoteAddr()}
		return nil, c.opError("dup", err)
	}
	c := w.newConn(nc, fd)
	nc.Close()
	obj := (*byte)(p)
	c.ref = weak.Make(obj)
	c.cleanup = runtime.AddCleanup(obj, (*conn).collected, c)
	g.m[uintptr(p)] = c
	return c, nil
}

func (w *watcher) newConn(nc net.Conn, fd int) *conn {
	c := &conn{
		w:       w,
		lp:      w.pickLoop(),
		key:     uintptr(connPtr(nc)),
		stream:  sock.IsStream(fd),
		network: addrNetwork(nc.LocalAddr()),
		laddr:   nc.LocalAddr(),
		raddr:   nc.RemoteAddr(),
	}
	c.fd.Init(fd)
	return c
}

func addrNetwork(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.Network()
}

// unregister drops c's entry if it is still c's.
func (w *watcher) unregister(c *conn) {
	g := &w.reg
	g.mu.Lock()
	if g.m[c.key] == c {
		delete(g.m, c.key)
	}
	g.mu.Unlock()
}

// take removes and returns the live delegated conn for conn, or nil.
func (w *watcher) take(nc net.Conn) *conn {
	p := connPtr(nc)
	g := &w.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.takeLocked(p)
}

// takeOrClose is take for Free: a conn never delegated is closed, under
// the registry's lock, so that a submission delegating it at the same
// time either comes first (and take finds it) or finds it closed (and its
// request fails), never delegates a conn that Free has let go.
func (w *watcher) takeOrClose(nc net.Conn) *conn {
	p := connPtr(nc)
	g := &w.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.takeLocked(p)
	if c == nil {
		nc.Close()
	}
	return c
}

// takeLocked removes and returns the live entry for the object at p, or
// nil. g.mu is held.
func (g *registry) takeLocked(p unsafe.Pointer) *conn {
	c := g.m[uintptr(p)]
	if c == nil || unsafe.Pointer(c.ref.Value()) != p {
		return nil
	}
	delete(g.m, uintptr(p))
	return c
}

// collected runs, on a runtime goroutine, once the caller's conn object is
// unreachable; the loop then releases the descriptor.
func (c *conn) collected() {
	c.w.gcFound.Add(1)
	r := c.w.pool.get()
	r.kind, r.c = kGC, c
	if c.lp.l.Post(r) != nil {
		c.w.pool.put(r)
	}
}

// pickLoop spreads connections over the loops in turn. A connection stays
// on its loop for life, which keeps its completions in submission order.
func (w *watcher) pickLoop() *loopState {
	if len(w.loops) == 1 {
		return w.loops[0]
	}
	return w.loops[w.next.Add(1)%uint32(len(w.loops))]
}

// sweep closes the descriptors of connections that were registered but
// never reached their loop. It runs after every loop has exited, so the
// loop-owned fields are safe to read.
func (w *watcher) sweep() {
	g := &w.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, c := range g.m {
		if !c.released {
			c.released = true
			c.cleanup.Stop()
			c.fd.Close()
		}
		delete(g.m, k)
	}
}
