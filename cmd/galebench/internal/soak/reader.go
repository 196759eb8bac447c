package soak

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// chunk is the size of the client's reads and writes, and of the buffers
// they use.
const chunk = 64 << 10

// buffers recycles the chunk-sized buffers of connections that ended.
var buffers = sync.Pool{New: func() any { return new([chunk]byte) }}

// echoReader reads a connection's echo on its own goroutine and verifies
// each byte against the stream as it comes, in order.
type echoReader struct {
	c     net.Conn
	key   stream
	t     *tally
	stall time.Duration
	sent  *atomic.Int64 // the writer's count, bumped before each write
	// eofOwed is set once the client has shut its write side: the server
	// owes an EOF, so quiet is a stall even with every echo in.
	eofOwed atomic.Bool
	done    chan struct{} // closed when run returns
	// corrupt is set, by run, once a corruption has been seen.
	corrupt bool

	mu   sync.Mutex
	cond sync.Cond
	got  int64 // bytes received; written by run only, under mu
	err  error // why reading ended; nil while it goes on
}

func newEchoReader(c net.Conn, key stream, t *tally, stall time.Duration, sent *atomic.Int64) *echoReader {
	r := &echoReader{c: c, key: key, t: t, stall: stall, sent: sent, done: make(chan struct{})}
	r.cond.L = &r.mu
	return r
}

// run reads until an error: the client's own close (net.ErrClosed), the
// server's (io.EOF), a failure, or a stall: no byte for the stall timeout
// while echoes or an EOF are owed. A quiet connection that owes nothing
// is not stalled: the client may be pausing.
func (r *echoReader) run() {
	defer close(r.done)
	buf, scratch := buffers.Get().(*[chunk]byte), buffers.Get().(*[chunk]byte)
	defer buffers.Put(buf)
	defer buffers.Put(scratch)
	for {
		r.c.SetReadDeadline(time.Now().Add(r.stall))
		n, err := r.c.Read(buf[:])
		if n > 0 {
			r.verify(buf[:n], scratch[:])
		}
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) && r.got >= r.sent.Load() && !r.eofOwed.Load() {
			continue
		}
		r.mu.Lock()
		r.err = err
		r.cond.Broadcast()
		r.mu.Unlock()
		return
	}
}

// verify checks p, the next bytes of the echo: against the stream, and
// against what was sent, since a byte beyond that cannot be an echo.
func (r *echoReader) verify(p, scratch []byte) {
	n := int64(len(p))
	extra := max(0, min(n, r.got+n-r.sent.Load()))
	bad := int64(r.key.mismatches(r.got, p[:n-extra], scratch))
	if bad > 0 && !r.corrupt {
		r.corrupt = true // the first corruption of a connection is described
		r.t.corruption(func() Corruption { return describeCorruption(r.key, r.got, p[:n-extra], scratch) })
	}
	r.t.verified.Add(n - extra - bad)
	r.t.corrupted.Add(bad + extra)
	r.mu.Lock()
	r.got += n
	r.cond.Broadcast()
	r.mu.Unlock()
}

// waitFor waits until n bytes have come back or reading has ended; it
// returns the bytes received and, if reading ended, why.
func (r *echoReader) waitFor(n int64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.got < n && r.err == nil {
		r.cond.Wait()
	}
	return r.got, r.err
}

// waitEnd waits until reading has ended.
func (r *echoReader) waitEnd() (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.err == nil {
		r.cond.Wait()
	}
	return r.got, r.err
}

// result returns, once run has returned, the bytes received and why
// reading ended.
func (r *echoReader) result() (int64, error) {
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got, r.err
}
