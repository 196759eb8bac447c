package soak

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// session is one client connection playing its plan.
type session struct {
	p     plan
	t     *tally
	c     *net.TCPConn
	r     *echoReader
	stall time.Duration
	// sent counts the bytes written; a write adds its length first and
	// takes back what it did not write, so that an echo never outruns it.
	sent atomic.Int64
}

// errWrite marks a write's failure, already counted.
var errWrite = errors.New("write failed")

// runSession dials addr and plays p on the connection; it returns when the
// connection is closed, counting everything in t. When ctx ends, the
// connection stops sending and ends as its plan says. It returns false if
// the dial failed.
func runSession(ctx context.Context, addr string, p plan, t *tally, stall time.Duration) bool {
	d := net.Dialer{Timeout: stall}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.fail("dial", err)
		return false
	}
	t.opened.Add(1)
	t.open.Add(1)
	defer t.open.Add(-1)
	s := &session{p: p, t: t, c: c.(*net.TCPConn), stall: stall}
	s.r = newEchoReader(c, p.key, t, stall, &s.sent)
	go s.r.run()
	err = s.play(ctx)
	switch {
	case err == nil && p.end == endReset:
		s.reset()
	case err == nil && p.end == endHalfClose:
		s.halfClose()
	default:
		s.close(err)
	}
	return true
}

// play sends the plan's messages, waiting and pausing as it says. It
// stops early, with nil, at the reset point or when ctx ends; an error
// means the connection broke.
func (s *session) play(ctx context.Context) error {
	for _, m := range s.p.msgs {
		if s.resetDue() || ctx.Err() != nil {
			return nil
		}
		if err := s.write(m.size); err != nil || s.resetDue() {
			return err
		}
		s.t.messages.Add(1)
		if m.wait {
			if _, err := s.r.waitFor(s.sent.Load()); err != nil {
				return err
			}
		}
		if m.pause > 0 && !sleep(ctx, m.pause) {
			return nil
		}
	}
	return nil
}

// resetDue reports whether the plan resets the connection now.
func (s *session) resetDue() bool {
	return s.p.end == endReset && s.sent.Load() >= s.p.resetAt
}

// write sends the next size bytes of the stream in chunks, stopping
// short at the reset point.
func (s *session) write(size int) error {
	buf := buffers.Get().(*[chunk]byte)
	defer buffers.Put(buf)
	for left := int64(size); left > 0 && !s.resetDue(); {
		off := s.sent.Load()
		n := min(left, chunk)
		if s.p.end == endReset {
			n = min(n, s.p.resetAt-off)
		}
		p := buf[:n]
		s.p.key.fill(off, p)
		s.sent.Add(n)
		s.c.SetWriteDeadline(time.Now().Add(s.stall))
		w, err := s.c.Write(p)
		s.sent.Add(int64(w) - n)
		s.t.sent.Add(int64(w))
		if err != nil {
			s.t.fail("write", err)
			return errWrite
		}
		left -= n
	}
	return nil
}

// close waits for every echo, closes, and counts the bytes that never
// came back as lost. A connection whose play failed (playErr) ends here
// too, without waiting if a write failed.
func (s *session) close(playErr error) {
	if playErr != errWrite {
		s.r.waitFor(s.sent.Load())
	}
	s.c.Close()
	got, err := s.r.result()
	if !errors.Is(err, net.ErrClosed) {
		s.t.fail("read", err) // the server closed or broke it first
	}
	s.lose(got)
	s.t.closed.Add(1)
}

// halfClose shuts the write side, reads the rest of the echo up to the
// server's EOF, and closes.
func (s *session) halfClose() {
	s.r.eofOwed.Store(true)
	if err := s.c.CloseWrite(); err != nil {
		s.t.fail("shutdown", err)
	}
	s.r.waitEnd()
	s.c.Close()
	got, err := s.r.result()
	if !errors.Is(err, io.EOF) {
		s.t.fail("read", err)
	}
	s.lose(got)
	s.t.halfClosed.Add(1)
}

// reset closes with SO_LINGER 0, so the kernel drops what is queued
// either way and sends an RST (tcp(7)). The bytes whose echo had not
// come are abandoned, not lost; the reader's end is expected.
func (s *session) reset() {
	if err := s.c.SetLinger(0); err != nil {
		s.t.fail("setlinger", err)
	}
	s.c.Close()
	got, err := s.r.result()
	if errors.Is(err, net.ErrClosed) {
		s.t.expect("read after own reset", err)
	} else {
		s.t.fail("read", err)
	}
	s.t.abandoned.Add(max(0, s.sent.Load()-got))
	s.t.reset.Add(1)
}

// lose counts the bytes sent and not echoed on a connection the client
// did not reset.
func (s *session) lose(got int64) {
	s.t.lost.Add(max(0, s.sent.Load()-got))
}

// sleep waits for d or until ctx ends; it reports whether it slept the
// whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
