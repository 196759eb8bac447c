package netconn_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// The tests of this file drive every method of net.Conn under hostile
// timing, on TCP and Unix, and check the documented errors with errors.Is
// and net.Error's Timeout. The loops run in real time, so "blocked" means
// started a moment (settle) before: a call that had not yet parked meets
// the same outcome through its first checks.

const (
	// settle is how long a test lets a goroutine reach its blocking call.
	settle = 50 * time.Millisecond
	// hang is how long a call that must return may take.
	hang = 5 * time.Second
	// blockSize is written to a peer that does not read: more than
	// loopback's socket buffers hold (tcp_wmem and tcp_rmem top out at a
	// few MiB), so the Write parks.
	blockSize = 32 << 20
)

// streamNetworks are the stream networks every conn test runs on.
var streamNetworks = []string{"tcp", "unix"}

// eachStream runs f per backend and stream network, with a fresh
// connected pair of netconn conns (a dialed, b accepted) closed at the end.
func eachStream(t *testing.T, f func(t *testing.T, a, b *netconn.Conn)) {
	backendtest.Run(t, func(t *testing.T) {
		for _, network := range streamNetworks {
			t.Run(network, func(t *testing.T) {
				a, b := connPair(t, network)
				f(t, a, b)
			})
		}
	})
}

// connPair connects two netconn conns: a dialed, b accepted.
func connPair(t *testing.T, network string) (a, b *netconn.Conn) {
	t.Helper()
	backendtest.NeedNetwork(t, network)
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(backendtest.TempDir(t), "s")
	}
	c1, c2, stop, err := pipe(t, network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c1.(*netconn.Conn), c2.(*netconn.Conn)
}

// result is the outcome of a Read or Write run in the background.
type result struct {
	n   int
	err error
	at  time.Duration // since the call started
}

func goRead(c net.Conn, p []byte) <-chan result {
	ch := make(chan result, 1)
	go func() {
		start := time.Now()
		n, err := c.Read(p)
		ch <- result{n, err, time.Since(start)}
	}()
	return ch
}

func goWrite(c net.Conn, p []byte) <-chan result {
	ch := make(chan result, 1)
	go func() {
		start := time.Now()
		n, err := c.Write(p)
		ch <- result{n, err, time.Since(start)}
	}()
	return ch
}

// await returns the call's outcome, failing t if it takes longer than
// limit; the conns' cleanup then unblocks the call.
func await(t *testing.T, what string, ch <-chan result, limit time.Duration) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(limit):
		t.Fatalf("%s did not return within %v", what, limit)
		return result{}
	}
}

// notYet fails t if the call returned within d.
func notYet(t *testing.T, what string, ch <-chan result, d time.Duration) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned early (after %v): %d, %v", what, r.at, r.n, r.err)
	case <-time.After(d):
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

func wantTimeout(t *testing.T, what string, n int, err error) {
	t.Helper()
	if !isTimeout(err) {
		t.Errorf("%s = %d, %v; want an error matching os.ErrDeadlineExceeded with Timeout() true", what, n, err)
	}
}

func wantClosed(t *testing.T, what string, n int, err error) {
	t.Helper()
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("%s = %d, %v; want net.ErrClosed", what, n, err)
	}
}

// laterCases move a parked call's deadline, firstDeadline away, to later
// or to none.
var laterCases = []struct {
	name string
	to   func() time.Time
}{
	{"extend", func() time.Time { return time.Now().Add(hang) }},
	{"clear", func() time.Time { return time.Time{} }},
}

const (
	// firstDeadline is the deadline the later cases start from.
	firstDeadline = 150 * time.Millisecond
	// lateTries bounds how often a test tries again when the machine's
	// load kept it from changing a deadline before the deadline passed:
	// only a change made in time proves anything about the conn.
	lateTries = 3
)

// tooLate records that try changed its deadline too late, and fails t
// after lateTries of them.
func tooLate(t *testing.T, try int) {
	t.Helper()
	if try >= lateTries {
		t.Fatalf("the machine's load kept the test from changing the deadline in time, %d times", try)
	}
	t.Logf("try %d changed the deadline after it passed (a loaded machine); trying again", try)
}

// TestDeadlinePassed: a deadline already passed fails Read and Write at
// once with n == 0, even with data waiting to be read.
func TestDeadlinePassed(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		if _, err := b.Write([]byte("waiting")); err != nil {
			t.Fatal(err)
		}
		a.SetReadDeadline(time.Now().Add(-time.Second))
		a.SetWriteDeadline(time.Now().Add(-time.Second))
		n, err := a.Read(make([]byte, 16))
		if n != 0 {
			t.Errorf("Read after the deadline: n = %d, want 0", n)
		}
		wantTimeout(t, "Read after the deadline", n, err)
		n, err = a.Write([]byte("x"))
		if n != 0 {
			t.Errorf("Write after the deadline: n = %d, want 0", n)
		}
		wantTimeout(t, "Write after the deadline", n, err)

		// Cleared, both work again and the waiting bytes are intact.
		a.SetDeadline(time.Time{})
		buf := make([]byte, 16)
		n, err = io.ReadAtLeast(a, buf, len("waiting"))
		if err != nil || string(buf[:n]) != "waiting" {
			t.Errorf("Read after clearing = %q, %v; want %q", buf[:n], err, "waiting")
		}
		if n, err := a.Write([]byte("x")); n != 1 || err != nil {
			t.Errorf("Write after clearing = %d, %v; want 1, nil", n, err)
		}
	})
}

// TestReadDeadlineWhileBlocked changes the read deadline of a Read
// already parked.
func TestReadDeadlineWhileBlocked(t *testing.T) {
	for _, tc := range laterCases {
		t.Run(tc.name, func(t *testing.T) {
			eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
				for try := 1; ; try++ {
					first := time.Now().Add(firstDeadline)
					a.SetReadDeadline(first)
					ch := goRead(a, make([]byte, 16))
					time.Sleep(settle)
					a.SetReadDeadline(tc.to())
					if time.Now().Before(first) {
						notYet(t, "Read past its first deadline", ch, 400*time.Millisecond)
						b.Write([]byte("late"))
						if r := await(t, "Read", ch, hang); r.n != 4 || r.err != nil {
							t.Errorf("Read = %d, %v; want 4, nil", r.n, r.err)
						}
						return
					}
					a.SetReadDeadline(time.Now().Add(-time.Second))
					await(t, "Read", ch, hang)
					tooLate(t, try)
				}
			})
		})
	}
	t.Run("shorten", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			a.SetReadDeadline(time.Now().Add(time.Hour))
			ch := goRead(a, make([]byte, 16))
			time.Sleep(settle)
			a.SetReadDeadline(time.Now().Add(settle))
			r := await(t, "Read with a shortened deadline", ch, hang)
			if r.n != 0 {
				t.Errorf("Read n = %d, want 0", r.n)
			}
			wantTimeout(t, "Read with a shortened deadline", r.n, r.err)
		})
	})
	t.Run("past", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			ch := goRead(a, make([]byte, 16))
			time.Sleep(settle)
			a.SetReadDeadline(time.Now().Add(-time.Second))
			r := await(t, "Read with a deadline moved to the past", ch, hang)
			wantTimeout(t, "Read with a deadline moved to the past", r.n, r.err)
		})
	})
	t.Run("again", func(t *testing.T) {
		// After a timeout, a new deadline serves the next Read, and the
		// bytes that came meanwhile are not lost.
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			for i := range 3 {
				a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				n, err := a.Read(make([]byte, 16))
				wantTimeout(t, "Read", n, err)
				if _, err := b.Write([]byte{byte('0' + i)}); err != nil {
					t.Fatal(err)
				}
				a.SetReadDeadline(time.Now().Add(hang))
				buf := make([]byte, 16)
				n, err = a.Read(buf)
				if n != 1 || err != nil || buf[0] != byte('0'+i) {
					t.Fatalf("Read after a timeout = %q, %v; want %q", buf[:n], err, string(rune('0'+i)))
				}
			}
		})
	})
}

// blockWrite starts a Write of blockSize bytes to b, which does not read,
// and lets it park.
func blockWrite(a net.Conn) <-chan result {
	ch := goWrite(a, make([]byte, blockSize))
	time.Sleep(settle)
	return ch
}

// drain reads n bytes from c in the background; the channel gives the
// failure, if any.
func drain(c net.Conn, n int) <-chan error {
	ch := make(chan error, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(hang))
		k, err := io.CopyN(io.Discard, c, int64(n))
		if err != nil {
			err = fmt.Errorf("peer read %d of %d bytes: %w", k, n, err)
		}
		ch <- err
	}()
	return ch
}

// TestWriteDeadlineWhileBlocked changes the write deadline of a Write
// parked because the peer does not read.
func TestWriteDeadlineWhileBlocked(t *testing.T) {
	for _, tc := range laterCases {
		t.Run(tc.name, func(t *testing.T) {
			eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
				for try := 1; ; try++ {
					first := time.Now().Add(firstDeadline)
					a.SetWriteDeadline(first)
					ch := blockWrite(a)
					a.SetWriteDeadline(tc.to())
					if time.Now().Before(first) {
						notYet(t, "Write past its first deadline", ch, 400*time.Millisecond)
						drained := drain(b, blockSize)
						if r := await(t, "Write", ch, hang); r.n != blockSize || r.err != nil {
							t.Errorf("Write = %d, %v; want %d, nil", r.n, r.err, blockSize)
						}
						if err := <-drained; err != nil {
							t.Error(err)
						}
						return
					}
					a.SetWriteDeadline(time.Now().Add(-time.Second))
					await(t, "Write", ch, hang)
					tooLate(t, try)
					a, b = connPair(t, a.LocalAddr().Network()) // a sent part of its stream
				}
			})
		})
	}
	t.Run("shorten", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			a.SetWriteDeadline(time.Now().Add(time.Hour))
			ch := blockWrite(a)
			a.SetWriteDeadline(time.Now().Add(settle))
			r := await(t, "Write with a shortened deadline", ch, hang)
			if r.n >= blockSize {
				t.Errorf("Write n = %d, want less than %d", r.n, blockSize)
			}
			wantTimeout(t, "Write with a shortened deadline", r.n, r.err)
			// What Write reports written is what the peer gets.
			b.CloseWrite()
			a.Close()
			b.SetReadDeadline(time.Now().Add(hang))
			if k, err := io.Copy(io.Discard, b); k != int64(r.n) || err != nil {
				t.Errorf("peer read %d bytes, %v; Write reported %d", k, err, r.n)
			}
		})
	})
	t.Run("past", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			ch := blockWrite(a)
			a.SetWriteDeadline(time.Now().Add(-time.Second))
			r := await(t, "Write with a deadline moved to the past", ch, hang)
			wantTimeout(t, "Write with a deadline moved to the past", r.n, r.err)
		})
	})
}

// TestCloseWhileBlocked closes a conn under a parked Read, and under a
// parked Write.
func TestCloseWhileBlocked(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			ch := goRead(a, make([]byte, 16))
			time.Sleep(settle)
			if err := a.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			r := await(t, "Read under Close", ch, hang)
			if r.n != 0 {
				t.Errorf("Read n = %d, want 0", r.n)
			}
			wantClosed(t, "Read under Close", r.n, r.err)
		})
	})
	t.Run("write", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			ch := blockWrite(a)
			if err := a.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			r := await(t, "Write under Close", ch, hang)
			if r.n >= blockSize {
				t.Errorf("Write n = %d, want less than %d", r.n, blockSize)
			}
			wantClosed(t, "Write under Close", r.n, r.err)
		})
	})
	t.Run("both", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			rch := goRead(a, make([]byte, 16))
			wch := blockWrite(a)
			cch := make(chan error, 2)
			for range 2 { // racing Closes: one wins, the other gets net.ErrClosed
				go func() { cch <- a.Close() }()
			}
			e1, e2 := <-cch, <-cch
			if (e1 == nil) == (e2 == nil) {
				t.Errorf("two racing Closes = %v, %v; want one nil and one net.ErrClosed", e1, e2)
			}
			r := await(t, "Read under Close", rch, hang)
			wantClosed(t, "Read under Close", r.n, r.err)
			w := await(t, "Write under Close", wch, hang)
			wantClosed(t, "Write under Close", w.n, w.err)
		})
	})
}

// TestCloseTwice: the second Close fails with net.ErrClosed.
func TestCloseTwice(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		if err := a.Close(); err != nil {
			t.Errorf("first Close = %v, want nil", err)
		}
		if err := a.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close = %v, want net.ErrClosed", err)
		}
	})
}

// TestAfterClose: every method of a closed conn fails with net.ErrClosed
// and blocks nothing; the addresses stay known, as package net's do.
func TestAfterClose(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		for _, c := range []*netconn.Conn{a, b} {
			c.Close()
			n, err := c.Read(make([]byte, 1))
			wantClosed(t, "Read", n, err)
			n, err = c.Write([]byte("x"))
			wantClosed(t, "Write", n, err)
			n, err = c.Read(nil)
			wantClosed(t, "Read(nil)", n, err)
			n, err = c.Write(nil)
			wantClosed(t, "Write(nil)", n, err)
			for name, set := range map[string]func(time.Time) error{
				"SetDeadline": c.SetDeadline, "SetReadDeadline": c.SetReadDeadline,
				"SetWriteDeadline": c.SetWriteDeadline,
			} {
				if err := set(time.Now().Add(time.Second)); !errors.Is(err, net.ErrClosed) {
					t.Errorf("%s = %v, want net.ErrClosed", name, err)
				}
			}
			if err := c.CloseWrite(); !errors.Is(err, net.ErrClosed) {
				t.Errorf("CloseWrite = %v, want net.ErrClosed", err)
			}
			if err := c.CloseRead(); !errors.Is(err, net.ErrClosed) {
				t.Errorf("CloseRead = %v, want net.ErrClosed", err)
			}
		}
	})
	// A separate case, so that the failure above, if any, stays apart.
	t.Run("addrs", func(t *testing.T) {
		eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
			for name, c := range map[string]*netconn.Conn{"dialed": a, "accepted": b} {
				c.Close()
				if c.LocalAddr() == nil || c.RemoteAddr() == nil {
					t.Errorf("%s conn after Close: LocalAddr() = %v, RemoteAddr() = %v; want both known, as package net's",
						name, c.LocalAddr(), c.RemoteAddr())
				}
			}
		})
	})
}

// TestEmptyReadWrite: a Write of no bytes sends nothing and returns 0,
// nil; so does a Read into no space.
func TestEmptyReadWrite(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		for _, p := range [][]byte{nil, {}} {
			if n, err := a.Write(p); n != 0 || err != nil {
				t.Errorf("Write(%#v) = %d, %v; want 0, nil", p, n, err)
			}
			if n, err := b.Read(p); n != 0 || err != nil {
				t.Errorf("Read(%#v) = %d, %v; want 0, nil", p, n, err)
			}
		}
		a.Write([]byte("after"))
		buf := make([]byte, 16)
		b.SetReadDeadline(time.Now().Add(hang))
		n, err := io.ReadAtLeast(b, buf, 5)
		if string(buf[:n]) != "after" || err != nil {
			t.Errorf("peer read %q, %v; want %q: empty Writes must send nothing", buf[:n], err, "after")
		}
	})
}
