package aio

import (
	"net"
	"time"
)

// Read submits a read on conn. It completes with the bytes of the first
// read that returns data, io.EOF when the peer closed, or an error.
//
// A nil buf reads into the watcher's swap buffer; the data stays valid
// until the next WaitIO call. A non-nil buf is the caller's until the
// request completes. ctx comes back unchanged in OpResult.Context.
//
// The first request on a conn delegates it: the watcher duplicates the
// descriptor and closes conn, which from then on serves only as the
// connection's identity (and its addresses). Safe from any goroutine;
// requests on one conn and direction complete in the order submitted.
func (w *watcher) Read(ctx any, conn net.Conn, buf []byte) error {
	return w.submit(ctx, kRead, conn, buf, time.Time{})
}

// ReadTimeout is Read with an absolute deadline; a zero deadline means
// none. A request still pending at the deadline completes with ErrDeadline.
func (w *watcher) ReadTimeout(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	return w.submit(ctx, kRead, conn, buf, deadline)
}

// ReadFull submits a read that completes only once len(buf) bytes have
// arrived, or with the partial Size on io.EOF, an error or the deadline (a
// zero deadline means none). buf must not be empty: ErrEmptyBuffer.
func (w *watcher) ReadFull(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	if len(buf) == 0 {
		return ErrEmptyBuffer
	}
	return w.submit(ctx, kReadFull, conn, buf, deadline)
}

// Write submits a write of all of buf on conn. It completes once every byte
// is written, or with the partial Size on an error. buf must not be
// changed until then, and must not be empty: ErrEmptyBuffer. Safe from any
// goroutine; writes on one conn go out in the order submitted.
func (w *watcher) Write(ctx any, conn net.Conn, buf []byte) error {
	return w.WriteTimeout(ctx, conn, buf, time.Time{})
}

// WriteTimeout is Write with an absolute deadline; a zero deadline means
// none. A write cut short by its deadline leaves its first Size bytes in
// the stream.
func (w *watcher) WriteTimeout(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	if len(buf) == 0 {
		return ErrEmptyBuffer
	}
	return w.submit(ctx, kWrite, conn, buf, deadline)
}

// Free releases conn: its pending requests complete with ErrConnClosed and
// its descriptor is closed. It returns at once and produces no completion
// of its own; it is ordered after requests submitted before it. A conn the
// watcher never delegated is simply closed (a request submitted on it at
// the same time either delegates it first, and is freed with it, or fails
// with an error matching net.ErrClosed). Safe from any goroutine.
func (w *watcher) Free(conn net.Conn) error {
	if w.closed.Load() {
		return ErrWatcherClosed
	}
	if conn == nil || connPtr(conn) == nil {
		return ErrUnsupported
	}
	c := w.takeOrClose(conn)
	if c == nil {
		return nil
	}
	r := w.pool.get()
	r.kind, r.c = kFree, c
	if c.lp.l.Post(r) != nil {
		w.pool.put(r)
		w.orphan(c)
		return ErrWatcherClosed
	}
	return nil
}

// orphan closes c's descriptor after a Free that took c from the registry
// found its loop stopping. If c reached its loop, the loop's stop released
// it; if not, Close's sweep, which sees only the registry, would miss it.
// So orphan waits for the loop to exit, when its fields are safe to read,
// and closes the descriptor unless the loop did.
func (w *watcher) orphan(c *conn) {
	<-c.lp.l.Done()
	s := w.reg.shard(c.key)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.closeOrphan()
}

// submit queues a request for conn's loop. Requests that cannot be
// delegated complete through WaitIO with the reason.
func (w *watcher) submit(ctx any, k kind, conn net.Conn, buf []byte, deadline time.Time) error {
	if w.closed.Load() {
		return ErrWatcherClosed
	}
	if conn == nil || connPtr(conn) == nil {
		return ErrUnsupported
	}
	r := w.pool.get()
	r.kind, r.ctx, r.conn, r.buf = k, ctx, conn, buf
	r.setDeadline(deadline)
	c := w.reg.lookup(conn)
	if c == nil {
		var err error
		if c, err = w.register(conn); err == ErrWatcherClosed {
			w.pool.put(r)
			return err
		} else if err != nil {
			r.err = err
			w.results.push1(r)
			return nil
		}
	}
	r.c = c
	if c.lp.l.Post(r) != nil {
		w.pool.put(r)
		return ErrWatcherClosed
	}
	return nil
}
