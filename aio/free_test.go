//go:build unix

package aio_test

import (
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// TestFreePending: Free completes the pending requests with ErrConnClosed,
// keeps their contexts, has no completion of its own, and closes the
// socket after the bytes already written.
func TestFreePending(t *testing.T) { backendtest.Run(t, testFreePending) }

func testFreePending(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		// A ReadFull with part of its bytes in, a read queued behind it,
		// and a write larger than the socket buffers that the peer does
		// not read: all stay pending.
		if err := w.ReadFull("rf", c, make([]byte, 8), time.Time{}); err != nil {
			t.Fatalf("ReadFull = %v", err)
		}
		if err := w.Read("r", c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		wbuf := make([]byte, 16<<20)
		if err := w.Write("w", c, wbuf); err != nil {
			t.Fatalf("Write = %v", err)
		}
		writePeer(t, peer, "abc")
		waitBytesRead(t, w, 3)
		w.Poke()
		if s := w.Stats().Total(); s.PendingReads != 2 || s.PendingWrites != 1 {
			t.Fatalf("before Free: Stats().Total() = %+v, want 2 pending reads, 1 pending write", s)
		}
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
		written := -1
		for _, r := range waitResults(t, col, 3) {
			if r.Error != aio.ErrConnClosed || r.Conn != c {
				t.Errorf("pending request after Free = %v, want ErrConnClosed on the conn", r)
			}
			switch r.Context {
			case "rf":
				if r.Operation != aio.OpRead || r.Size != 3 || string(r.Data) != "abc" {
					t.Errorf("pending ReadFull after Free = %v, want OpRead, size 3, \"abc\"", r)
				}
			case "r":
				if r.Operation != aio.OpRead || r.Size != 0 {
					t.Errorf("pending read after Free = %v, want OpRead, size 0", r)
				}
			case "w":
				if r.Operation != aio.OpWrite || r.Size < 0 || r.Size >= len(wbuf) {
					t.Errorf("pending write after Free = %v, want OpWrite, partial size", r)
				}
				written = r.Size
			default:
				t.Errorf("completion with ctx %v, want rf, r or w", r.Context)
			}
		}
		// The peer gets what was written, then end of file.
		if got := expectEOF(t, peer); len(got) != written {
			t.Errorf("peer read %d bytes before EOF, want the %d the write reported", len(got), written)
		}
		w.Poke()
		if s := w.Stats().Total(); s.Conns != 0 || s.PendingReads != 0 || s.PendingWrites != 0 || s.Completions != 3 {
			t.Errorf("after Free: Stats().Total() = %+v, want no conn, nothing pending, 3 completions", s)
		}
	})
}

// TestFreeDelegated: Free of a conn with nothing pending closes its
// socket; the peer sees end of file.
func TestFreeDelegated(t *testing.T) { backendtest.Run(t, testFreeDelegated) }

func testFreeDelegated(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		ino := sockInode(t, c) // the watcher's duplicate shares it
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		delegate(t, w, col, c, peer)
		before, haveFDs := openFDs()
		if haveFDs && len(socketFDs(before, ino)) != backendtest.SocketRefs() {
			t.Fatalf("fds %v refer to the delegated socket, want %d", socketFDs(before, ino), backendtest.SocketRefs())
		}
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
		if got := expectEOF(t, peer); len(got) != 0 {
			t.Errorf("peer read %q after Free, want EOF", got)
		}
		w.Poke()
		if haveFDs {
			after, _ := openFDs()
			if fds := socketFDs(after, ino); len(fds) != 0 {
				t.Errorf("fds %v still refer to the freed socket", fds)
			}
			if added := newFDs(before, after); len(added) != 0 {
				t.Errorf("Free opened descriptors:\n%s", describeFDs(added))
			}
		}
	})
}

// TestFreeNeverSeen: Free of a conn the watcher never saw closes it and
// leaves no descriptor behind.
func TestFreeNeverSeen(t *testing.T) { backendtest.Run(t, testFreeNeverSeen) }

func testFreeNeverSeen(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		ino := sockInode(t, c)
		before, haveFDs := openFDs()
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after Free = %v, want net.ErrClosed", err)
		}
		if got := expectEOF(t, peer); len(got) != 0 {
			t.Errorf("peer read %q after Free, want EOF", got)
		}
		if haveFDs {
			after, _ := openFDs()
			if fds := socketFDs(after, ino); len(fds) != 0 {
				t.Errorf("fds %v still refer to the freed socket", fds)
			}
			if added := newFDs(before, after); len(added) != 0 {
				t.Errorf("Free opened descriptors:\n%s", describeFDs(added))
			}
			if len(after) != len(before)-1 {
				t.Errorf("open fds after Free = %d, want %d", len(after), len(before)-1)
			}
		}
		w.Poke()
		if s := w.Stats().Total(); s.Conns != 0 || s.Completions != 0 {
			t.Errorf("Stats().Total() = %+v, want no conn, no completion", s)
		}
	})
}

// TestFreeLosesToClose: a Free that passed its closed check while Close
// was stopping the loops, on a conn delegated by a submission that the
// stopping loop refused, so that the conn never reached its loop and is no
// longer in the registry Close sweeps: Free reports ErrWatcherClosed and
// still closes the watcher's descriptor (the peer reads end of file).
func TestFreeLosesToClose(t *testing.T) { backendtest.Run(t, testFreeLosesToClose) }

func testFreeLosesToClose(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		ino := sockInode(t, c)
		if err := w.DelegateAndStopLoops(c); err != nil {
			t.Fatalf("delegating: %v", err)
		}
		if err := w.Free(c); err != aio.ErrWatcherClosed {
			t.Errorf("Free with the loops stopped = %v, want ErrWatcherClosed", err)
		}
		if got := expectEOF(t, peer); len(got) != 0 {
			t.Errorf("peer read %q after Free, want EOF", got)
		}
		if after, ok := openFDs(); ok {
			if fds := socketFDs(after, ino); len(fds) != 0 {
				t.Errorf("fds %v still refer to the freed socket", fds)
			}
		}
		w.Close()
	})
}

// TestSubmitAfterFree: a request on a freed conn fails (with an error
// matching net.ErrClosed) instead of hanging.
func TestSubmitAfterFree(t *testing.T) { backendtest.Run(t, testSubmitAfterFree) }

func testSubmitAfterFree(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		for _, s := range submitters {
			t.Run(s.name, func(t *testing.T) {
				c, peer := pair(t)
				w := newWatcher(t, aio.Config{})
				col := collect(t, w)
				delegate(t, w, col, c, peer)
				if err := w.Free(c); err != nil {
					t.Fatalf("Free = %v", err)
				}
				if err := s.call(w, c); err != nil {
					if !errors.Is(err, net.ErrClosed) {
						t.Fatalf("%s after Free = %v, want nil or an error matching net.ErrClosed", s.name, err)
					}
					return
				}
				r := waitResult(t, col)
				if r.Error == nil || !errors.Is(r.Error, net.ErrClosed) || r.Context != "ctx" {
					t.Errorf("%s after Free completed with %v, want an error matching net.ErrClosed", s.name, r)
				}
				expectEOF(t, peer)
			})
		}
	})
}

// TestFreeNil: Free of a nil conn, or a nil pointer of a conn type, is
// refused.
func TestFreeNil(t *testing.T) { backendtest.Run(t, testFreeNil) }

func testFreeNil(t *testing.T) {
	w := newWatcher(t, aio.Config{})
	for _, c := range []net.Conn{nil, (*net.TCPConn)(nil), (*net.UnixConn)(nil)} {
		if err := w.Free(c); err != aio.ErrUnsupported {
			t.Errorf("Free(%#v) = %v, want ErrUnsupported", c, err)
		}
	}
}
