package engine_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Helpers for the peer's side of a stream, and for the data sent on it.

// etReadFull reads n bytes from c, bounded by etWait.
func etReadFull(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(etWait))
	defer c.SetReadDeadline(time.Time{})
	b := make([]byte, n)
	if k, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("ReadFull(%d) = %d, %v (got %q...)", n, k, err, etHead(b[:k]))
	}
	return b
}

// etExpect reads len(want) bytes from c and compares them with want.
func etExpect(t testing.TB, c net.Conn, want string) {
	t.Helper()
	if got := etReadFull(t, c, len(want)); string(got) != want {
		t.Fatalf("read %q, want %q", etHead(got), etHead([]byte(want)))
	}
}

// etExpectEOF reads from c and fails unless it reports end of file
// (with nothing before it) within etWait.
func etExpectEOF(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(etWait))
	defer c.SetReadDeadline(time.Time{})
	var b [64]byte
	n, err := c.Read(b[:])
	if n != 0 || err != io.EOF {
		t.Fatalf("Read = %d, %v (%q), want 0, io.EOF", n, err, b[:n])
	}
}

// etReadAll reads c to end of file, bounded by etWait.
func etReadAll(t testing.TB, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(etWait))
	defer c.SetReadDeadline(time.Time{})
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("ReadAll = %d bytes, %v", len(b), err)
	}
	return b
}

func etHead(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// etPattern returns n bytes of a pattern that makes a lost, repeated or
// reordered stretch show: its period, 65521 bytes, is prime, so it lines
// up with no buffer or chunk size. The slice is shared: do not modify it.
func etPattern(n int) []byte {
	etPatternOnce.Do(func() {
		const period = 65521
		b := make([]byte, period, 40<<20)
		for j := range b {
			b[j] = byte(j*7 + j>>8)
		}
		for len(b) < cap(b) {
			b = append(b, b[:min(len(b), cap(b)-len(b))]...)
		}
		etPatternBuf = b
	})
	if n > len(etPatternBuf) {
		panic("etPattern: too long")
	}
	return etPatternBuf[:n:n]
}

var (
	etPatternOnce sync.Once
	etPatternBuf  []byte
)

// etCheckPattern reports the first offset where got differs from
// etPattern, or -1.
func etCheckPattern(got []byte) int {
	want := etPattern(len(got))
	if bytes.Equal(got, want) {
		return -1
	}
	for i := range got {
		if got[i] != want[i] {
			return i
		}
	}
	return -1
}

// etDrain reads c until end of file or error in the background and returns
// a channel with the bytes. Closing c ends it.
func etDrain(c net.Conn) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(etWait))
		b, _ := io.ReadAll(c)
		ch <- b
	}()
	return ch
}
