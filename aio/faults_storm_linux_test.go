package aio_test

// Storms of injected system-call failures (internal/faulttest) on the
// watcher's reads and writes, on every backend: transient errnos are
// retried without a trace, resource errnos complete one connection's
// request with a clear error. (aio has no accept of its own: the caller
// accepts; see faults_emfile_test.go for what it does at the descriptor
// limit.)

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/faulttest"
	"golang.org/x/sys/unix"
)

// fsServer is the echo server of the fault tests: connections accepted
// with package net, delegated to a watcher with their first read, echoed
// with writes of copies. A request that fails has its error recorded
// and its connection freed.
type fsServer struct {
	w    *aio.Watcher
	addr net.Addr
	user bool // reads into the server's own buffers, else the swap buffer

	mu   sync.Mutex
	errs map[string]error // the first error of each connection, by peer address
}

// fsConn is a connection's request context.
type fsConn struct{ buf []byte }

// startFSServer starts an fsServer; everything stops at cleanup.
func startFSServer(t testing.TB, user bool) *fsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v", err)
	}
	s := &fsServer{w: newWatcher(t, aio.Config{}), addr: ln.Addr(), user: user, errs: map[string]error{}}
	var wg sync.WaitGroup
	wg.Go(func() { s.accept(ln) })
	wg.Go(s.serve)
	t.Cleanup(func() {
		ln.Close()
		s.w.Close()
		wg.Wait()
	})
	return s
}

func (s *fsServer) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		ctx := &fsConn{}
		if s.user {
			ctx.buf = make([]byte, 16<<10)
		}
		if s.w.Read(ctx, c, ctx.buf) != nil {
			c.Close()
		}
	}
}

func (s *fsServer) serve() {
	for {
		rs, err := s.w.WaitIO()
		if err != nil {
			return
		}
		for _, r := range rs {
			ctx := r.Context.(*fsConn)
			switch {
			case r.Error != nil:
				s.failed(r)
			case r.Operation == aio.OpRead:
				s.w.Write(ctx, r.Conn, bytes.Clone(r.Buffer[:r.Size]))
			default:
				s.w.Read(ctx, r.Conn, ctx.buf)
			}
		}
	}
}

// failed records r's error, the first of its connection, and frees it.
func (s *fsServer) failed(r aio.OpResult) {
	key := r.Conn.RemoteAddr().String()
	s.mu.Lock()
	if s.errs[key] == nil {
		s.errs[key] = fmt.Errorf("%v: %w", r.Operation, r.Error)
	}
	s.mu.Unlock()
	s.w.Free(r.Conn)
}

// errOf returns the first error of the connection from peer.
func (s *fsServer) errOf(peer net.Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[peer.LocalAddr().String()]
}

// errCount returns how many connections failed.
func (s *fsServer) errCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs)
}

// fsClients dials n echo clients of s.
func fsClients(t *testing.T, s *fsServer, n int, seed uint64) []*faulttest.Echo {
	t.Helper()
	cs := make([]*faulttest.Echo, n)
	for i := range cs {
		c, err := net.DialTimeout("tcp", s.addr.String(), waitTimeout)
		if err != nil {
			t.Fatalf("Dial = %v", err)
		}
		cs[i] = faulttest.NewEcho(t, c, seed+uint64(i))
	}
	return cs
}

// fsRounds makes every client, each on its own goroutine, send rounds
// messages of 1 to 2 KiB, each after the echo of the one before. With
// immediate, every echo must come back (within waitTimeout); otherwise a
// client waits 20 ms for it and goes on, its next message bringing the
// edge a held socket waits for.
func fsRounds(cs []*faulttest.Echo, rounds int, immediate bool) error {
	wait := 20 * time.Millisecond
	if immediate {
		wait = waitTimeout
	}
	errs := make(chan error, len(cs))
	for i, c := range cs {
		go func() {
			for r := range rounds {
				if err := c.Send(1<<10+(r*331)%(1<<10), waitTimeout); err != nil {
					errs <- fmt.Errorf("client %d, round %d: Send = %v", i, r, err)
					return
				}
				if !c.Wait(wait) && immediate {
					errs <- fmt.Errorf("client %d, round %d: %d of %d bytes echoed (reader: %v), want all: the errno is retried at once", i, r, c.Got(), c.Sent(), c.Err())
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range cs {
		err = errors.Join(err, <-errs)
	}
	return err
}

// fsSendAll makes every client send n bytes, each on its own goroutine,
// and waits for the writes.
func fsSendAll(cs []*faulttest.Echo, n int) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.Send(n, waitTimeout) })
	}
	wg.Wait()
}

// fsBuffers names the two ways the server reads.
var fsBuffers = []struct {
	name string
	user bool
}{{"swap", false}, {"user", true}}

// TestStormTransient checks that storms of EINTR and EAGAIN, every 2nd
// to 10th read and write, are invisible to the watcher's user: every
// connection echoes every byte in order and no request fails. EINTR (and,
// on io_uring, EAGAIN: the kernel may complete an operation with it) is
// retried at once, so every round trip completes during the storm. On
// epoll EAGAIN means "wait for the next edge", which the kernel never
// returns while data or space is there: an injected one holds the socket
// until more traffic arrives, so a client that waited 20 ms for its echo
// sends its next message anyway, and after the storm a last message on
// every connection brings the last edges.
func TestStormTransient(t *testing.T) { backendtest.Run(t, testStormTransient) }

func testStormTransient(t *testing.T) {
	for _, buf := range fsBuffers {
		for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN} {
			t.Run(buf.name+"/"+unix.ErrnoName(errno), func(t *testing.T) {
				s := startFSServer(t, buf.user)
				cs := fsClients(t, s, 4, 1)
				storm := faulttest.Start(t, faulttest.Storm{Errno: errno, MinGap: 2, MaxGap: 10})
				immediate := errno == unix.EINTR || s.w.Stats().Total().Backend == aio.IOURing
				if err := fsRounds(cs, 100, immediate); err != nil {
					t.Error(err)
				}
				storm.Stop()
				fsSendAll(cs, 1<<10)
				for i, c := range cs {
					if !c.Wait(waitTimeout) {
						t.Fatalf("client %d: %d of %d bytes echoed (reader: %v)", i, c.Got(), c.Sent(), c.Err())
					}
				}
				if storm.Hits() == 0 {
					t.Fatalf("no failure injected in %d calls", storm.Calls())
				}
				if n := s.errCount(); n != 0 {
					t.Errorf("%d connections failed, want none", n)
				}
				t.Logf("%d of %d calls failed with %s", storm.Hits(), storm.Calls(), unix.ErrnoName(errno))
			})
		}
	}
}

// TestStormConnErrors checks that ENOMEM and ENOBUFS from one
// connection's reads or writes complete that connection's request with
// the error, as a *net.OpError of the call around an *os.SyscallError,
// and touch nothing else: its peer reads an exact prefix of its echo, the
// other connections echo every byte. On io_uring an ENOBUFS ending a
// provided-buffer receive (swap-buffer reads) means the buffer ring ran
// dry (io_uring's ABI), which the backend re-arms: there the read is
// retried and the connection goes on.
func TestStormConnErrors(t *testing.T) { backendtest.Run(t, testStormConnErrors) }

func testStormConnErrors(t *testing.T) {
	for _, buf := range fsBuffers {
		for _, op := range []aio.OpType{aio.OpRead, aio.OpWrite} {
			for _, errno := range []syscall.Errno{unix.ENOMEM, unix.ENOBUFS} {
				t.Run(fmt.Sprintf("%s/%v/%s", buf.name, op, unix.ErrnoName(errno)), func(t *testing.T) {
					fsStormConn(t, buf.user, op, errno)
				})
			}
		}
	}
}

func fsStormConn(t *testing.T, user bool, op aio.OpType, errno syscall.Errno) {
	s := startFSServer(t, user)
	cs := fsClients(t, s, 3, 10)
	fsSendAll(cs, 1<<10) // all delegated and echoing
	for _, c := range cs {
		c.Wait(waitTimeout)
	}
	fop := faulttest.Read
	if op == aio.OpWrite {
		fop = faulttest.Write
	}
	storm := faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{fop},
		Peers: []net.Addr{cs[0].Conn().LocalAddr()}})
	fsSendAll(cs, 48<<10) // the target's writes may fail: it is reset
	target := cs[0]
	ring := s.w.Stats().Total().Backend == aio.IOURing
	if op == aio.OpRead && errno == unix.ENOBUFS && ring && !user {
		if !target.Wait(waitTimeout) {
			t.Fatalf("target: %d of %d bytes echoed (reader: %v), want all: ENOBUFS from the ring is retried", target.Got(), target.Sent(), target.Err())
		}
	} else {
		if err := target.Ended(waitTimeout); err == nil || errors.Is(err, faulttest.ErrMismatch) {
			t.Fatalf("target's peer: %v after %d of %d bytes, want the end of an exact prefix of its echo", err, target.Got(), target.Sent())
		}
		fsCheckOpError(t, s.errOf(target.Conn()), op, errno)
	}
	for i, c := range cs[1:] {
		if !c.Wait(waitTimeout) {
			t.Errorf("client %d: %d of %d bytes echoed (reader: %v)", i+1, c.Got(), c.Sent(), c.Err())
		}
		if err := s.errOf(c.Conn()); err != nil {
			t.Errorf("client %d: the server's request failed: %v", i+1, err)
		}
	}
	if storm.Hits() == 0 {
		t.Errorf("no failure injected in %d calls", storm.Calls())
	}
	t.Logf("%d %s failures injected; target echoed %d of %d bytes", storm.Hits(), unix.ErrnoName(errno), target.Got(), target.Sent())
}

// fsCheckOpError checks that err is op's *net.OpError around an
// *os.SyscallError of errno.
func fsCheckOpError(t *testing.T, err error, op aio.OpType, errno syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	var se *os.SyscallError
	switch {
	case err == nil:
		t.Fatalf("the target's request did not fail")
	case !errors.As(err, &oe) || oe.Op != op.String():
		t.Fatalf("target's error = %v, want a *net.OpError of %q", err, op)
	case !errors.As(err, &se) || !errors.Is(err, errno):
		t.Fatalf("target's error = %v, want an *os.SyscallError of %s", err, unix.ErrnoName(errno))
	}
}
