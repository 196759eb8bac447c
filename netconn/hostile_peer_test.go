package netconn_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// The tests of this file are hostile_test.go's for what the peer does:
// half-closes, an end of file, a reset, a stream sent ahead of Read.

// TestCloseWrite: after CloseWrite the peer reads what was written and
// then io.EOF, for every later Read; the other direction still works;
// a Write on the closed side fails.
func TestCloseWrite(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		a.Write([]byte("last words"))
		if err := a.CloseWrite(); err != nil {
			t.Fatalf("CloseWrite = %v", err)
		}
		b.SetReadDeadline(time.Now().Add(hang))
		got, err := io.ReadAll(b)
		if string(got) != "last words" || err != nil {
			t.Errorf("peer ReadAll = %q, %v; want %q, nil", got, err, "last words")
		}
		for i := range 3 {
			if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
				t.Errorf("Read %d after EOF = %d, %v; want 0, io.EOF", i, n, err)
			}
		}
		// The other way is open.
		if _, err := b.Write([]byte("reply")); err != nil {
			t.Fatalf("peer Write after our CloseWrite: %v", err)
		}
		buf := make([]byte, 16)
		a.SetReadDeadline(time.Now().Add(hang))
		n, err := io.ReadAtLeast(a, buf, 5)
		if string(buf[:n]) != "reply" || err != nil {
			t.Errorf("Read after CloseWrite = %q, %v; want %q", buf[:n], err, "reply")
		}
		if n, err := a.Write([]byte("x")); err == nil {
			t.Errorf("Write after CloseWrite = %d, nil; want an error", n)
		} else if !errors.Is(err, syscall.EPIPE) {
			t.Logf("Write after CloseWrite: %v", err)
		}
	})
}

// TestCloseRead: CloseRead ends a parked Read with io.EOF.
func TestCloseRead(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		ch := goRead(a, make([]byte, 16))
		time.Sleep(settle)
		if err := a.CloseRead(); err != nil {
			t.Fatalf("CloseRead = %v", err)
		}
		if r := await(t, "Read under CloseRead", ch, hang); r.n != 0 || r.err != io.EOF {
			t.Errorf("Read under CloseRead = %d, %v; want 0, io.EOF", r.n, r.err)
		}
		if n, err := a.Read(make([]byte, 16)); n != 0 || err != io.EOF {
			t.Errorf("Read after CloseRead = %d, %v; want 0, io.EOF", n, err)
		}
		// Our sending side is still open.
		a.Write([]byte("still"))
		buf := make([]byte, 16)
		b.SetReadDeadline(time.Now().Add(hang))
		n, err := io.ReadAtLeast(b, buf, 5)
		if string(buf[:n]) != "still" || err != nil {
			t.Errorf("peer Read = %q, %v; want %q", buf[:n], err, "still")
		}
	})
}

// TestReadAfterEOF: once the peer closed, every Read returns io.EOF.
func TestReadAfterEOF(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		b.Write([]byte("bye"))
		b.Close()
		a.SetReadDeadline(time.Now().Add(hang))
		got, err := io.ReadAll(a)
		if string(got) != "bye" || err != nil {
			t.Errorf("ReadAll = %q, %v; want %q, nil", got, err, "bye")
		}
		for i := range 3 {
			if n, err := a.Read(make([]byte, 8)); n != 0 || err != io.EOF {
				t.Errorf("Read %d after EOF = %d, %v; want 0, io.EOF", i, n, err)
			}
		}
	})
}

// isReset reports whether err is the failure of a conn the peer reset.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// resetPair gives a TCP pair whose accepted side b resets on Close.
func resetPair(t *testing.T) (a, b *netconn.Conn) {
	a, b = connPair(t, "tcp")
	if err := b.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestPeerReset: a peer's reset (SO_LINGER 0, then Close) fails Read
// with ECONNRESET and Write with ECONNRESET or EPIPE, whether the call was
// parked when it came or started after; none hangs. TCP only.
func TestPeerReset(t *testing.T) {
	backendtest.SkipUnderWine(t, backendtest.LingerFIN)
	backendtest.Run(t, func(t *testing.T) {
		t.Run("read-after", func(t *testing.T) {
			a, b := resetPair(t)
			b.Close()
			a.SetReadDeadline(time.Now().Add(hang))
			n, err := a.Read(make([]byte, 16))
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("Read after the peer's reset = %d, %v; want ECONNRESET", n, err)
			}
			// And it stays failed.
			if n, err := a.Read(make([]byte, 16)); err == nil || isTimeout(err) {
				t.Errorf("second Read after the peer's reset = %d, %v; want an error", n, err)
			}
		})
		t.Run("read-parked", func(t *testing.T) {
			a, b := resetPair(t)
			ch := goRead(a, make([]byte, 16))
			time.Sleep(settle)
			b.Close()
			r := await(t, "Read under the peer's reset", ch, hang)
			if !errors.Is(r.err, syscall.ECONNRESET) {
				t.Errorf("Read under the peer's reset = %d, %v; want ECONNRESET", r.n, r.err)
			}
		})
		t.Run("write-after", func(t *testing.T) {
			a, b := resetPair(t)
			b.Close()
			time.Sleep(settle) // let the reset arrive
			var err error
			for i := 0; i < 3 && err == nil; i++ {
				_, err = a.Write([]byte("into the void"))
			}
			if !isReset(err) {
				t.Errorf("Write after the peer's reset = %v; want ECONNRESET or EPIPE", err)
			}
		})
		t.Run("write-parked", func(t *testing.T) {
			a, b := resetPair(t)
			ch := blockWrite(a)
			b.Close()
			r := await(t, "Write under the peer's reset", ch, hang)
			if !isReset(r.err) {
				t.Errorf("Write under the peer's reset = %d, %v; want ECONNRESET or EPIPE", r.n, r.err)
			}
		})
		t.Run("std-peer", func(t *testing.T) {
			// The same, with package net's conn resetting.
			ln, err := netconn.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			std, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer std.Close()
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ch := goRead(c, make([]byte, 16))
			time.Sleep(settle)
			std.(*net.TCPConn).SetLinger(0)
			std.Close()
			r := await(t, "Read under the peer's reset", ch, hang)
			if !errors.Is(r.err, syscall.ECONNRESET) {
				t.Errorf("Read under the peer's reset = %d, %v; want ECONNRESET", r.n, r.err)
			}
		})
	})
}

// TestReadStashThenClose: bytes received ahead of Read are returned, in
// order, across many small Reads and a full stash.
func TestReadStashThenClose(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		const n = 1 << 20 // past the 64 KiB the loop holds ahead of Read
		want := make([]byte, n)
		fillPattern(want, 7, 0)
		done := make(chan error, 1)
		go func() {
			_, err := b.Write(want)
			b.Close()
			done <- err
		}()
		time.Sleep(settle) // the loop fills its stash, then pauses
		a.SetReadDeadline(time.Now().Add(hang))
		var got bytes.Buffer
		buf := make([]byte, 1000) // odd-sized small Reads
		for {
			k, err := a.Read(buf)
			got.Write(buf[:k])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read after %d bytes: %v", got.Len(), err)
			}
		}
		if err := <-done; err != nil {
			t.Errorf("peer Write: %v", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("read %d bytes, want %d, equal: %v", got.Len(), n, false)
		}
	})
}
