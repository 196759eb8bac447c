//go:build !unix && !windows

package sock

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// ErrNoSyscallConn reports a connection that is none of package net's
// socket types (a *tls.Conn, a net.Pipe end).
var ErrNoSyscallConn = errors.New("connection does not implement syscall.Conn")

// Without socket descriptors (WebAssembly), package net's objects
// stand in for them: a descriptor is a number in this table, naming the
// net.Conn, net.Listener or net.PacketConn it was made for. Dup and
// DupConn of an object already in the table share its entry, as dup(2)
// shares an open file description: the object closes with the last
// descriptor that names it, unless FileConn handed it out.
var table struct {
	mu   sync.Mutex
	next int
	fds  map[int]*object
	objs map[any]*object
}

// tableBase is where the table's numbers start: above the handles
// Windows gives sockets, which a Control callback of package net may pass
// to this package's calls (they fail there with EBADF, never reaching
// another socket).
const tableBase = 1 << 30

// object is one socket of package net in the table.
type object struct {
	v    any // net.Conn, net.Listener or net.PacketConn
	refs int
	out  bool // FileConn handed v to a caller, who closes it now
}

// put gives o a new descriptor.
func put(o *object) int {
	table.mu.Lock()
	defer table.mu.Unlock()
	if table.fds == nil {
		table.fds, table.objs = map[int]*object{}, map[any]*object{}
	}
	if table.next == 0 {
		table.next = tableBase
	}
	table.next++
	fd := table.next
	table.fds[fd] = o
	o.refs++
	return fd
}

// get returns the object fd names.
func get(fd int) (*object, bool) {
	table.mu.Lock()
	defer table.mu.Unlock()
	o, ok := table.fds[fd]
	return o, ok
}

// Object returns the package net object descriptor fd stands for: a
// net.Conn, net.Listener or net.PacketConn. The caller must not close it
// (Close(fd) does); the net backend reads and writes through it.
func Object(fd int) (any, bool) {
	o, ok := get(fd)
	if !ok {
		return nil, false
	}
	return o.v, true
}

// DupConn returns a descriptor for c's socket. Here that is c itself,
// entered in the table: the caller gives up c with Release, which leaves
// it open, instead of closing it as it would close the socket.
func DupConn(c syscall.Conn) (int, error) {
	switch c.(type) {
	case net.Conn, net.Listener, net.PacketConn:
	default:
		return -1, ErrNoSyscallConn
	}
	table.mu.Lock()
	o := table.objs[c]
	if o == nil {
		if table.objs == nil {
			table.fds, table.objs = map[int]*object{}, map[any]*object{}
		}
		o = &object{v: c}
		table.objs[c] = o
	}
	table.mu.Unlock()
	return put(o), nil
}

// Release ends the caller's use of the connection, listener or datagram
// socket it gave DupConn: here DupConn took the object itself, so it
// stays open for the descriptor.
func Release(io.Closer) {}

// Dup returns a second descriptor for fd's object.
func Dup(fd int) (int, error) {
	o, ok := get(fd)
	if !ok {
		return -1, syscall.EBADF
	}
	return put(o), nil
}

// Close releases descriptor fd, closing its object with the last
// descriptor that names it.
func Close(fd int) error {
	table.mu.Lock()
	o, ok := table.fds[fd]
	if !ok {
		table.mu.Unlock()
		return syscall.EBADF
	}
	delete(table.fds, fd)
	o.refs--
	last := o.refs == 0
	if last {
		delete(table.objs, o.v)
	}
	table.mu.Unlock()
	if !last || o.out {
		return nil
	}
	return o.v.(io.Closer).Close()
}

// FileConn returns the connection fd stands for, which the caller owns
// from now on: closing fd and the descriptors that share it no longer
// closes it. Its deadlines are cleared (a backend that stopped reading
// set them in the past).
func FileConn(fd int) (net.Conn, error) {
	o, ok := get(fd)
	if !ok {
		return nil, syscall.EBADF
	}
	c, ok := o.v.(net.Conn)
	if !ok {
		return nil, syscall.ENOTSOCK
	}
	table.mu.Lock()
	o.out = true
	table.mu.Unlock()
	c.SetDeadline(time.Time{})
	return c, nil
}

// IsStream reports whether fd's object is a stream connection or
// listener.
func IsStream(fd int) bool {
	o, ok := get(fd)
	if !ok {
		return true
	}
	_, pc := o.v.(net.PacketConn)
	return !pc
}
