package aio

import (
	"errors"
	"net"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
	"weak"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/cpu"
)

// registry maps a caller's net.Conn to its delegated conn. It is keyed by
// the address of the object behind the interface, like gaio, but holds only
// a weak reference to it: the object can still be collected, and an
// address reused by a new object is told apart because the weak pointer of
// the old entry no longer resolves to it.
//
// It is split into shards by that address, each with its own lock, so
// that submissions on different conns, and the registration of new ones,
// do not contend for one lock. The zero registry is ready for use.
type registry struct {
	shards [regShards]regShard
}

// regShards is the number of shards: enough that a few dozen submitting
// goroutines rarely meet on one lock, for 4 KiB per watcher.
const (
	regShardBits = 6
	regShards    = 1 << regShardBits
)

// regShard is one shard. Its lock guards m and, once the loops have
// exited, the released flag of the conns whose key it holds (Close's
// sweep and a Free's orphan may both find one).
type regShard struct {
	mu sync.RWMutex
	m  map[uintptr]*conn // made by the first registration
	_  cpu.CacheLinePad  // shards' locks on separate cache lines
}

// shard returns the shard of the object at key (Fibonacci hashing: heap
// objects of one size class sit at regular strides, which the multiply
// spreads over the top bits).
func (g *registry) shard(key uintptr) *regShard {
	return &g.shards[uint64(key)*0x9e3779b97f4a7c15>>(64-regShardBits)]
}

// afterDup, when set (tests only), runs in every registration right after
// the dup of the caller's descriptor: a test holds registrations there to
// see what they block.
var afterDup atomic.Pointer[func()]

// afterEnter, when set (tests only), runs in every registration that
// entered its duplicate, before it closes the caller's conn.
var afterEnter atomic.Pointer[func()]

// connPtr returns the data word of conn's interface: for pointer types, the
// object's address.
func connPtr(conn net.Conn) unsafe.Pointer {
	type iface struct{ typ, data unsafe.Pointer }
	return (*iface)(unsafe.Pointer(&conn)).data
}

// lookup returns the live delegated conn for conn, or nil. It allocates
// nothing and takes only the read lock of conn's shard.
func (g *registry) lookup(conn net.Conn) *conn {
	p := connPtr(conn)
	s := g.shard(uintptr(p))
	s.mu.RLock()
	c := s.m[uintptr(p)]
	s.mu.RUnlock()
	if c == nil || unsafe.Pointer(c.ref.Value()) != p {
		return nil
	}
	return c
}

// get returns the live entry for the object at p, or nil. s.mu is held.
func (s *regShard) get(p unsafe.Pointer) *conn {
	c := s.m[uintptr(p)]
	if c == nil || unsafe.Pointer(c.ref.Value()) != p {
		return nil
	}
	return c
}

// register delegates conn: it duplicates the descriptor (close-on-exec),
// closes the caller's conn so the duplicate is the only descriptor left,
// and assigns the connection to a loop.
//
// The dup runs outside the shard's lock, so that a registration held in
// it does not hold up submissions on conns already delegated; the close
// of the caller's conn, which must not overlap a Free's take (see below),
// runs under it. What the lock decides, against Free and Close:
//   - Free closes the caller's conn under the lock, delegated or not
//     (takeOrClose), and so does Detach of a delegated conn, unless the
//     registration closed it already (also under the lock: the conn is
//     closed once). Under the lock, register checks that the caller's
//     conn is still open before it enters the duplicate; if Free (or the
//     caller) closed it, the duplicate is closed and the request fails
//     with an error matching net.ErrClosed. So a registration either
//     comes before the Free, which then frees it, or fails: it never
//     delegates a conn Free let go.
//   - Close sets closed and then sweeps every shard under its lock; a
//     registration checks closed under the lock, so its entry is either
//     swept or never made.
//   - Two registrations of one conn each make a duplicate; the first to
//     take the lock enters its own, the other closes its duplicate and
//     uses the winner's; if a Free or Detach took the winner's entry
//     first, the other finds the caller's conn closed and fails. A
//     registration whose dup failed because the winner had already closed
//     the caller's conn finds the winner's entry, which was made before
//     that close (or fails, if it was taken since).
func (w *watcher) register(nc net.Conn) (*conn, error) {
	if reflect.TypeOf(nc).Kind() != reflect.Pointer {
		return nil, ErrUnsupported
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, ErrUnsupported
	}
	p := connPtr(nc)
	s := w.reg.shard(uintptr(p))
	fd, err := sock.DupConn(sc)
	if h := afterDup.Load(); h != nil {
		(*h)()
	}
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			// ENOTSUP or EOPNOTSUPP, or a platform without Unix
			// descriptors (internal/sock's stubs).
			return nil, ErrUnsupported
		}
		// A concurrent registration of nc may have entered its
		// duplicate and closed nc since submit looked: use it.
		if c := w.reg.lookup(nc); c != nil {
			return c, nil
		}
		return nil, opError(nc, "dup", err)
	}
	c := w.newConn(nc, fd, sock.IsStream(fd))
	if winner, err := s.enter(w, nc, sc, p, c); winner != c {
		sock.Close(fd)
		return winner, err
	}
	if h := afterEnter.Load(); h != nil {
		(*h)()
	}
	s.closeCaller(c, nc)
	return c, nil
}

// closeCaller closes the caller's conn nc for its entry c, unless a Free or
// Detach that took c closed it first.
func (s *regShard) closeCaller(c *conn, nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.closeCallerLocked(nc)
}

// closeCallerLocked closes nc, the caller's conn of c, if it is still
// open. The shard's lock is held: a registration checks under it that nc
// is open before it enters a duplicate (see register).
func (c *conn) closeCallerLocked(nc net.Conn) {
	if c.callerOpen {
		c.callerOpen = false
		sock.Release(nc)
	}
}

// enter puts c, just made for the caller's conn sc at p, in the shard,
// and returns it; or, without entering it, the conn a concurrent
// registration of sc entered first, or nil and why c must not be (see
// register).
func (s *regShard) enter(w *watcher, nc net.Conn, sc syscall.Conn, p unsafe.Pointer, c *conn) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.closed.Load() {
		return nil, ErrWatcherClosed // Close sweeps every shard under its lock
	}
	if old := s.get(p); old != nil {
		return old, nil
	}
	if err := checkOpen(sc); err != nil {
		return nil, opError(nc, "dup", err)
	}
	obj := (*byte)(p)
	c.ref = weak.Make(obj)
	c.callerOpen = true
	c.cleanup = runtime.AddCleanup(obj, (*conn).collected, c)
	if s.m == nil {
		s.m = make(map[uintptr]*conn)
	}
	s.m[uintptr(p)] = c
	return c, nil
}

// checkOpen returns nil if the caller's conn sc is still open, and the
// error of using it otherwise (one matching net.ErrClosed once it is
// closed). RawConn.Control takes no system call: it only holds the
// descriptor, which fails once it is closed.
func checkOpen(sc syscall.Conn) error {
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(uintptr) {})
}

// failedConn is a conn that was never made, to describe a failure of
// conn's delegation in an error.
func (w *watcher) newConn(nc net.Conn, fd int, stream bool) *conn {
	c := &conn{
		w:      w,
		lp:     w.pickLoop(),
		key:    uintptr(connPtr(nc)),
		stream: stream,
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
	s := w.reg.shard(c.key)
	s.mu.Lock()
	if s.m[c.key] == c {
		delete(s.m, c.key)
	}
	s.mu.Unlock()
}

// take removes and returns the live delegated conn for conn, or nil; for
// Detach. If it finds one, it closes the caller's conn under the lock (see
// takeOrClose).
func (w *watcher) take(nc net.Conn) *conn {
	p := connPtr(nc)
	s := w.reg.shard(uintptr(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.take(p)
	if c != nil {
		c.closeCallerLocked(nc)
	}
	return c
}

// takeOrClose is take for Free. It closes the caller's conn under its
// shard's lock in every case, so that no registration enters a duplicate
// of it afterwards (register checks it is open under the lock):
//   - a conn never delegated: a submission delegating it at the same time
//     either comes first (and take finds it) or finds it closed (and its
//     request fails);
//   - a conn delegated by a registration that has not yet closed the
//     caller's conn itself: a second registration, whose dup came before
//     the first one's entry, would otherwise find no entry and the conn
//     still open, and delegate it again after the Free.
//
// The caller's conn is closed once: by the registration or by the take,
// whichever comes first under the lock.
func (w *watcher) takeOrClose(nc net.Conn) *conn {
	p := connPtr(nc)
	s := w.reg.shard(uintptr(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.take(p)
	if c == nil {
		nc.Close()
	} else {
		c.closeCallerLocked(nc)
	}
	return c
}

// take removes and returns the live entry for the object at p, or nil.
// s.mu is held.
func (s *regShard) take(p unsafe.Pointer) *conn {
	c := s.get(p)
	if c != nil {
		delete(s.m, uintptr(p))
	}
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
	for i := range w.reg.shards {
		s := &w.reg.shards[i]
		s.mu.Lock()
		for k, c := range s.m {
			c.closeOrphan()
			delete(s.m, k)
		}
		s.mu.Unlock()
	}
}

// closeOrphan closes the descriptor of c, which its loop has not
// released, once that loop has exited. The lock of c's shard is held: it
// orders sweep and orphan, which may both find c.
func (c *conn) closeOrphan() {
	if !c.released {
		c.released = true
		c.cleanup.Stop()
		c.fd.Close()
	}
}
