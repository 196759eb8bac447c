package aio_test

import (
	"bytes"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestCloseWrite: a Write, then CloseWrite at once: the peer reads every
// byte of the write, then end of file; the conn still reads what the peer
// sends, and CloseWrite has no completion of its own.
func TestCloseWrite(t *testing.T) { backendtest.Run(t, testCloseWrite) }

func testCloseWrite(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		msg := stPattern(1, 256<<10)
		if err := w.Write("write", c, msg); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if err := w.CloseWrite(c); err != nil {
			t.Fatalf("CloseWrite = %v, want nil", err)
		}
		if got := expectEOF(t, peer); !bytes.Equal(got, msg) {
			t.Errorf("peer read %d bytes before EOF, want the %d written", len(got), len(msg))
		}
		if r := waitResult(t, col); r.Context != "write" || r.Error != nil || r.Size != len(msg) {
			t.Errorf("Write = %v, want %d bytes, nil", r, len(msg))
		}
		if err := w.Read("read", c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
		writePeer(t, peer, "back")
		if r := waitResult(t, col); r.Context != "read" || r.Error != nil || string(r.Data) != "back" {
			t.Errorf("Read after CloseWrite = %v, want \"back\", nil", r)
		}
		w.Poke()
		if s := w.Stats().Total(); s.Completions != 2 || s.PendingWrites != 0 {
			t.Errorf("Stats().Total() = %+v, want 2 completions (the write and the read), no write pending", s)
		}
		if err := w.CloseWrite(c); err != nil {
			t.Errorf("second CloseWrite = %v, want nil", err)
		}
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
	})
}

// TestCloseWriteAfterPendingWrite: a CloseWrite submitted while a Write
// larger than the socket buffers is still pending takes effect after it:
// the write completes whole and the peer reads all of it before end of
// file.
func TestCloseWriteAfterPendingWrite(t *testing.T) {
	backendtest.Run(t, testCloseWriteAfterPendingWrite)
}

func testCloseWriteAfterPendingWrite(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		msgs := [][]byte{stPattern(2, 8<<20), stPattern(3, 1<<20)}
		for i, m := range msgs {
			if err := w.Write(i, c, m); err != nil {
				t.Fatalf("Write = %v, want nil", err)
			}
		}
		if err := w.CloseWrite(c); err != nil {
			t.Fatalf("CloseWrite = %v, want nil", err)
		}
		// The peer has not read: the first write cannot be done yet.
		stWaitFor(t, w, "the writes pending", func() bool { return w.Stats().Total().PendingWrites == 2 })
		got := expectEOF(t, peer)
		if want := bytes.Join(msgs, nil); !bytes.Equal(got, want) {
			t.Errorf("peer read %d bytes before EOF, want the %d written, in order", len(got), len(want))
		}
		for i, r := range waitResults(t, col, 2) {
			if r.Context != i || r.Error != nil || r.Size != len(msgs[i]) {
				t.Errorf("Write %d = %v, want %d bytes, nil", i, r, len(msgs[i]))
			}
		}
	})
}

// TestWriteAfterCloseWrite: a Write submitted after CloseWrite completes
// with a *net.OpError matching net.ErrClosed and writes nothing; the
// writes before it go out.
func TestWriteAfterCloseWrite(t *testing.T) { backendtest.Run(t, testWriteAfterCloseWrite) }

func testWriteAfterCloseWrite(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		if err := w.Write("before", c, []byte("abc")); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if err := w.CloseWrite(c); err != nil {
			t.Fatalf("CloseWrite = %v, want nil", err)
		}
		if err := w.WriteTimeout("after", c, []byte("xyz"), time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("Write after CloseWrite = %v, want nil (the error comes as its completion)", err)
		}
		rs := waitResults(t, col, 2)
		if r := rs[0]; r.Context != "before" || r.Error != nil || r.Size != 3 {
			t.Errorf("Write before CloseWrite = %v, want 3 bytes, nil", r)
		}
		r := rs[1]
		var opErr *net.OpError
		if r.Context != "after" || r.Operation != aio.OpWrite || r.Size != 0 ||
			!errors.As(r.Error, &opErr) || opErr.Op != "write" || !errors.Is(r.Error, net.ErrClosed) {
			t.Errorf("Write after CloseWrite = %v, want size 0 and a *net.OpError (write) matching net.ErrClosed", r)
		}
		if got := expectEOF(t, peer); string(got) != "abc" {
			t.Errorf("peer read %q before EOF, want %q", got, "abc")
		}
		if n := w.Timers(); n != 0 {
			t.Errorf("%d timers scheduled, want 0: the refused write's deadline is gone", n)
		}
	})
}

// TestCloseWriteDroppedByFree: Free while a CloseWrite waits behind a
// pending write completes the write with ErrConnClosed and nothing for
// the CloseWrite; the peer sees the end of the stream.
func TestCloseWriteDroppedByFree(t *testing.T) { backendtest.Run(t, testCloseWriteDroppedByFree) }

func testCloseWriteDroppedByFree(t *testing.T) {
	c, peer := tcpPair(t)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	if err := w.Write("big", c, make([]byte, 16<<20)); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	if err := w.CloseWrite(c); err != nil {
		t.Fatalf("CloseWrite = %v, want nil", err)
	}
	if err := w.Free(c); err != nil {
		t.Fatalf("Free = %v, want nil", err)
	}
	if r := waitResult(t, col); r.Context != "big" || r.Error != aio.ErrConnClosed {
		t.Errorf("pending Write after Free = %v, want ErrConnClosed", r)
	}
	expectEOF(t, peer)
	w.Poke()
	if s := w.Stats().Total(); s.Completions != 1 || s.Conns != 0 || s.PendingWrites != 0 {
		t.Errorf("Stats().Total() = %+v, want 1 completion, no conn, nothing pending", s)
	}
}

// TestCloseWriteNeverDelegated: CloseWrite of a conn the watcher never
// delegated shuts it down directly; it stays the caller's and reads on.
func TestCloseWriteNeverDelegated(t *testing.T) { backendtest.Run(t, testCloseWriteNeverDelegated) }

func testCloseWriteNeverDelegated(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		if err := w.CloseWrite(c); err != nil {
			t.Fatalf("CloseWrite = %v, want nil", err)
		}
		if got := expectEOF(t, peer); len(got) != 0 {
			t.Errorf("peer read %q, want EOF", got)
		}
		writePeer(t, peer, "hi")
		if got := readPeer(t, c, 2); string(got) != "hi" {
			t.Errorf("the caller's conn read %q after CloseWrite, want %q", got, "hi")
		}
		if _, err := c.Write([]byte("x")); !backendtest.IsErrno(err, syscall.EPIPE) {
			t.Errorf("the caller's Write after CloseWrite = %v, want EPIPE", err)
		}
		w.Poke()
		if n := w.Stats().Total().Conns; n != 0 {
			t.Errorf("Stats().Total().Conns = %d after CloseWrite, want 0: it delegated the conn", n)
		}
	})
}

// TestCloseWriteErrors: the synchronous errors of CloseWrite.
func TestCloseWriteErrors(t *testing.T) { backendtest.Run(t, testCloseWriteErrors) }

func testCloseWriteErrors(t *testing.T) {
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	t.Run("nil", func(t *testing.T) {
		for _, c := range []net.Conn{nil, (*net.TCPConn)(nil)} {
			if err := w.CloseWrite(c); err != aio.ErrUnsupported {
				t.Errorf("CloseWrite(%#v) = %v, want ErrUnsupported", c, err)
			}
		}
	})
	t.Run("pipe", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		if err := w.CloseWrite(a); err != aio.ErrUnsupported {
			t.Errorf("CloseWrite(net.Pipe end) = %v, want ErrUnsupported", err)
		}
	})
	t.Run("udp", func(t *testing.T) {
		c, peer := udpPair(t)
		if err := w.Write("udp", c, []byte("x")); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if r := waitResult(t, col); r.Error != nil {
			t.Fatalf("delegating Write = %v, want nil error", r)
		}
		readPeer(t, peer, 1)
		if err := w.CloseWrite(c); err != aio.ErrUnsupported {
			t.Errorf("CloseWrite(delegated UDP conn) = %v, want ErrUnsupported", err)
		}
		w.Free(c)
	})
	t.Run("freed", func(t *testing.T) {
		c, peer := tcpPair(t)
		delegate(t, w, col, c, peer)
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
		if err := w.CloseWrite(c); err != aio.ErrConnClosed {
			t.Errorf("CloseWrite after Free = %v, want ErrConnClosed", err)
		}
	})
	t.Run("detached", func(t *testing.T) {
		c, peer := tcpPair(t)
		delegate(t, w, col, c, peer)
		dc, err := w.Detach(c)
		if err != nil {
			t.Fatalf("Detach = %v, want nil", err)
		}
		defer dc.Close()
		if err := w.CloseWrite(c); err != aio.ErrConnClosed {
			t.Errorf("CloseWrite of the conn given to Detach = %v, want ErrConnClosed", err)
		}
	})
	t.Run("closed by the caller", func(t *testing.T) {
		c, _ := tcpPair(t)
		c.Close()
		if err := w.CloseWrite(c); err != aio.ErrConnClosed {
			t.Errorf("CloseWrite of a closed conn = %v, want ErrConnClosed", err)
		}
	})
	t.Run("watcher closed", func(t *testing.T) {
		c, peer := tcpPair(t)
		w2 := newWatcher(t, aio.Config{})
		col2 := collect(t, w2)
		delegate(t, w2, col2, c, peer)
		w2.Close()
		if err := w2.CloseWrite(c); err != aio.ErrWatcherClosed {
			t.Errorf("CloseWrite after Close = %v, want ErrWatcherClosed", err)
		}
	})
}

// udpPair returns a connected pair of UDP sockets on 127.0.0.1.
func udpPair(t testing.TB) (c, peer net.Conn) {
	t.Helper()
	backendtest.NeedNetwork(t, "udp")
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("ListenUDP = %v", err)
	}
	b, err := net.DialUDP("udp", nil, a.LocalAddr().(*net.UDPAddr))
	if err != nil {
		a.Close()
		t.Fatalf("DialUDP = %v", err)
	}
	closeAtCleanup(t, a, b)
	return b, a
}
