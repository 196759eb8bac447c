package aio_test

import (
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/galeio/gale/aio"
)

// resets are ways to make the peer of c reset the connection: a TCP close
// with SO_LINGER 0 sends RST; a Unix stream socket closed with unread data
// makes its peer's next read fail with ECONNRESET (unix_release_sock in
// net/unix/af_unix.c).
var resets = []struct {
	name  string
	pair  pairFunc
	reset func(t *testing.T, c, peer net.Conn)
}{
	{"tcp", tcpPair, func(t *testing.T, c, peer net.Conn) {
		backendtest.SkipUnderWine(t, backendtest.LingerFIN)
		if err := peer.(*net.TCPConn).SetLinger(0); err != nil {
			t.Fatalf("SetLinger(0) = %v", err)
		}
		peer.Close()
	}},
	{"unix", unixPair, func(t *testing.T, c, peer net.Conn) {
		peer.Close() // c wrote "unread" before delegation
	}},
}

// checkOpError checks that err is a *net.OpError of op around an
// *os.SyscallError, matching one of errnos.
func checkOpError(t *testing.T, err error, op string, errnos ...syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("error %v (%T) is not a *net.OpError", err, err)
	}
	if oe.Op != op {
		t.Errorf("OpError.Op = %q, want %q", oe.Op, op)
	}
	var se *os.SyscallError
	if !errors.As(err, &se) {
		t.Errorf("error %v does not wrap an *os.SyscallError", err)
	}
	for _, e := range errnos {
		if errors.Is(err, e) {
			return
		}
	}
	t.Errorf("error %v matches none of %v", err, errnos)
}

// TestReadReset: a read pending when the peer resets fails with
// ECONNRESET, wrapped like package net does.
func TestReadReset(t *testing.T) { backendtest.Run(t, testReadReset) }

func testReadReset(t *testing.T) {
	for _, rs := range resets {
		for _, buf := range [][]byte{make([]byte, 8), nil} {
			name := rs.name + "/buffer"
			if buf == nil {
				name = rs.name + "/nil"
			}
			t.Run(name, func(t *testing.T) {
				c, peer := rs.pair(t)
				if _, err := c.Write([]byte("unread")); err != nil {
					t.Fatalf("Write = %v", err)
				}
				w := newWatcher(t, aio.Config{})
				col := collect(t, w)
				if err := w.Read("r", c, buf); err != nil {
					t.Fatalf("Read = %v", err)
				}
				w.Poke() // the read is pending
				rs.reset(t, c, peer)
				r := waitResult(t, col)
				if r.Size != 0 || r.Context != "r" || r.Operation != aio.OpRead {
					t.Errorf("read after reset = %v, want size 0, ctx r, OpRead", r)
				}
				checkOpError(t, r.Error, "read", syscall.ECONNRESET)
			})
		}
	}
}

// TestWriteClosedPeer: writing to a peer that reset or closed ends with
// EPIPE or ECONNRESET within a bounded number of writes.
func TestWriteClosedPeer(t *testing.T) { backendtest.Run(t, testWriteClosedPeer) }

func testWriteClosedPeer(t *testing.T) {
	closes := append(resets[:len(resets):len(resets)], struct {
		name  string
		pair  pairFunc
		reset func(t *testing.T, c, peer net.Conn)
	}{"tcp/close", tcpPair, func(t *testing.T, c, peer net.Conn) { peer.Close() }})
	for _, rs := range closes {
		t.Run(rs.name, func(t *testing.T) {
			c, peer := rs.pair(t)
			if _, err := c.Write([]byte("unread")); err != nil {
				t.Fatalf("Write = %v", err)
			}
			w := newWatcher(t, aio.Config{})
			col := collect(t, w)
			rs.reset(t, c, peer)
			buf := make([]byte, 64<<10)
			// After a close (not a reset), TCP accepts writes until the
			// peer's RST arrives; 100 × 64 KiB is far beyond any buffer.
			for i := range 100 {
				if err := w.Write(i, c, buf); err != nil {
					t.Fatalf("Write = %v", err)
				}
				r := waitResult(t, col)
				if r.Error == nil {
					continue
				}
				if r.Context != i || r.Operation != aio.OpWrite || r.Size < 0 || r.Size > len(buf) {
					t.Errorf("failed write = %v, want ctx %d, OpWrite, 0 <= size <= %d", r, i, len(buf))
				}
				checkOpError(t, r.Error, "write", syscall.EPIPE, syscall.ECONNRESET)
				return
			}
			t.Fatalf("100 writes to a closed peer succeeded, want an error")
		})
	}
}
