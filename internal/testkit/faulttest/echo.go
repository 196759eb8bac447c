package faulttest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ErrMismatch reports an echo that differs from what was sent: a byte
// lost, duplicated, reordered or corrupted, or more bytes than were sent.
var ErrMismatch = errors.New("faulttest: echo differs from what was sent")

// Echo drives one connection to an echo server: Send writes the next
// bytes of a stream determined by the seed, and a reader goroutine checks
// that what comes back is that stream, byte for byte. Send is for one
// goroutine at a time; the other methods are safe from any goroutine.
type Echo struct {
	c    net.Conn
	wgen gen // the writer's stream
	sent atomic.Int64
	got  atomic.Int64 // bytes echoed and checked
	err  atomic.Pointer[error]
	done chan struct{} // closed when the reader ends
	once sync.Once
}

// NewEcho starts checking the echo on c, whose stream is determined by
// seed. Close, or the end of t, stops it.
func NewEcho(t testing.TB, c net.Conn, seed uint64) *Echo {
	e := &Echo{c: c, wgen: gen{s: seed}, done: make(chan struct{})}
	go e.read(gen{s: seed})
	t.Cleanup(e.Close)
	return e
}

// Conn returns the connection.
func (e *Echo) Conn() net.Conn { return e.c }

// Send writes the next n bytes of the stream, in pieces of 1 to 4 KiB,
// bounded by timeout. It returns the write's error.
func (e *Echo) Send(n int, timeout time.Duration) error {
	e.c.SetWriteDeadline(time.Now().Add(timeout))
	buf := make([]byte, 4<<10)
	for n > 0 {
		k := min(n, 1+int(e.wgen.s%uint64(len(buf))))
		e.wgen.fill(buf[:k])
		e.sent.Add(int64(k)) // before the write: the echo may come back at once
		if _, err := e.c.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Sent returns the bytes written so far.
func (e *Echo) Sent() int64 { return e.sent.Load() }

// Got returns the bytes echoed and checked so far.
func (e *Echo) Got() int64 { return e.got.Load() }

// Wait waits until every byte sent is echoed, the reader ends, or d
// passes; it reports whether everything came back.
func (e *Echo) Wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if e.got.Load() == e.sent.Load() {
			return true
		}
		select {
		case <-e.done:
			return e.got.Load() == e.sent.Load()
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// Err returns why the reader ended (an error wrapping ErrMismatch, or
// the read's error), or nil while it runs.
func (e *Echo) Err() error {
	select {
	case <-e.done:
		return *e.err.Load()
	default:
		return nil
	}
}

// Ended waits up to d for the reader to end (the server closed or reset
// the connection, or a mismatch) and returns why, or nil if it still
// runs.
func (e *Echo) Ended(d time.Duration) error {
	select {
	case <-e.done:
		return *e.err.Load()
	case <-time.After(d):
		return nil
	}
}

// Close closes the connection and waits for the reader.
func (e *Echo) Close() {
	e.once.Do(func() { e.c.Close() })
	<-e.done
}

func (e *Echo) read(g gen) {
	var err error
	defer func() {
		e.err.Store(&err)
		close(e.done)
	}()
	buf := make([]byte, 32<<10)
	want := make([]byte, len(buf))
	for {
		n, rerr := e.c.Read(buf)
		if n > 0 {
			if off := e.got.Load(); off+int64(n) > e.sent.Load() {
				err = fmt.Errorf("%w: %d bytes echoed, %d sent", ErrMismatch, off+int64(n), e.sent.Load())
				return
			}
			g.fill(want[:n])
			for i := range n {
				if buf[i] != want[i] {
					err = fmt.Errorf("%w: byte %d is %#x, want %#x", ErrMismatch, e.got.Load()+int64(i), buf[i], want[i])
					return
				}
			}
			e.got.Add(int64(n))
		}
		if rerr != nil {
			err = rerr
			return
		}
	}
}

// gen is a deterministic byte stream (xorshift64*).
type gen struct {
	s   uint64
	buf [8]byte
	n   int // unread bytes of buf
}

func (g *gen) next() uint64 {
	if g.s == 0 {
		g.s = 0x9e3779b97f4a7c15
	}
	g.s ^= g.s >> 12
	g.s ^= g.s << 25
	g.s ^= g.s >> 27
	return g.s * 0x2545f4914f6cdd1d
}

// fill writes the next len(b) bytes of the stream into b.
func (g *gen) fill(b []byte) {
	for len(b) > 0 {
		if g.n == 0 {
			binary.LittleEndian.PutUint64(g.buf[:], g.next())
			g.n = 8
		}
		k := copy(b, g.buf[8-g.n:])
		b, g.n = b[k:], g.n-k
	}
}
