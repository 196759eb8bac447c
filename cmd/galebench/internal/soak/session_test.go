package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests play hand-made plans against in-process servers, good and
// broken, and check the counts: what is verified, corrupted, lost or
// abandoned, how connections end, and which errors are expected.

// startServer serves each connection with handle on loopback until the
// test ends, then closes the listener and the connections and waits for
// the handlers.
func startServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { handle(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// echo is a correct echo server's handler: it closes after the client's
// EOF, once everything is echoed.
func echo(c net.Conn) {
	io.Copy(c, c)
	c.Close()
}

// msgs returns messages of the sizes given, each waited for.
func msgs(sizes ...int) []message {
	var ms []message
	for _, s := range sizes {
		ms = append(ms, message{size: s, wait: true})
	}
	return ms
}

// play runs plan p against addr and returns the totals.
func play(t *testing.T, addr string, p plan, stall time.Duration) Totals {
	t.Helper()
	tl := newTally()
	if !runSession(context.Background(), addr, p, tl, stall) {
		t.Fatalf("dial failed: %v", tl.totals("").Unexpected)
	}
	return tl.totals("test")
}

func TestSessionEndings(t *testing.T) {
	addr := startServer(t, echo)
	pipelined := []message{{size: 300000}, {size: 1}, {size: 70000, pause: 5 * time.Millisecond}, {size: 1 << 20}}
	tests := []struct {
		name                string
		p                   plan
		closed, half, reset int64
		abandoned           bool // some bytes may be abandoned
	}{
		{"close", plan{key: 1, msgs: msgs(1, 1000, 1<<20)}, 1, 0, 0, false},
		{"close pipelined", plan{key: 2, msgs: pipelined}, 1, 0, 0, false},
		{"half-close", plan{key: 3, msgs: pipelined, end: endHalfClose}, 0, 1, 0, false},
		{"reset mid-message", plan{key: 4, msgs: pipelined, end: endReset, resetAt: 350000}, 0, 0, 1, true},
		{"reset at once", plan{key: 5, end: endReset}, 0, 0, 1, false},
		{"no message", plan{key: 6}, 1, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := play(t, addr, tt.p, 10*time.Second)
			want := tt.p.total()
			if tt.p.end == endReset {
				want = tt.p.resetAt
			}
			if got.Sent != want || got.Verified+got.Abandoned != want || got.Lost != 0 || got.Corrupted != 0 {
				t.Errorf("sent %d, verified %d, abandoned %d, lost %d, corrupted %d; want %d sent, all verified or abandoned",
					got.Sent, got.Verified, got.Abandoned, got.Lost, got.Corrupted, want)
			}
			if !tt.abandoned && got.Abandoned != 0 {
				t.Errorf("abandoned %d, want 0", got.Abandoned)
			}
			if got.Opened != 1 || got.Closed != tt.closed || got.HalfClosed != tt.half || got.Reset != tt.reset {
				t.Errorf("opened %d, closed %d, half-closed %d, reset %d; want 1, %d, %d, %d",
					got.Opened, got.Closed, got.HalfClosed, got.Reset, tt.closed, tt.half, tt.reset)
			}
			if len(got.Unexpected) != 0 {
				t.Errorf("unexpected errors %v, want none", got.Unexpected)
			}
			if tt.reset == 1 && got.Expected["read after own reset: closed"] != 1 {
				t.Errorf("expected errors %v, want the reader's end after the reset", got.Expected)
			}
		})
	}
}

// TestSessionFaults plays plans against broken servers: each fault must
// show in the counts.
func TestSessionFaults(t *testing.T) {
	flip := func(c net.Conn) { // flips the echo's 10th and 70,000th bytes
		buf := make([]byte, 1<<16)
		var off int
		for {
			n, err := c.Read(buf)
			for _, at := range []int{9, 69999} {
				if at >= off && at < off+n {
					buf[at-off] ^= 0xff
				}
			}
			off += n
			c.Write(buf[:n])
			if err != nil {
				c.Close()
				return
			}
		}
	}
	truncate := func(c net.Conn) { // echoes 5,000 bytes, then closes: FIN or RST
		io.Copy(c, io.LimitReader(c, 5000))
		c.Close()
	}
	double := func(c net.Conn) { // echoes everything twice
		buf := make([]byte, 1<<16)
		for {
			n, err := c.Read(buf)
			c.Write(buf[:n])
			c.Write(buf[:n])
			if err != nil {
				c.Close()
				return
			}
		}
	}
	keep := func(c net.Conn) { // echoes, but never closes after the EOF
		io.Copy(c, c)
		time.Sleep(time.Second) // past the client's stall timeout
		c.Close()
	}
	tests := []struct {
		name   string
		handle func(net.Conn)
		p      plan
		check  func(Totals) string
	}{
		{"flipped bytes", flip, plan{key: 1, msgs: msgs(100000)}, func(g Totals) string {
			return expect(g.Corrupted == 2 && g.Verified == 100000-2 && g.Lost == 0 && len(g.Unexpected) == 0, "2 corrupted, the rest verified")
		}},
		{"truncated echo", truncate, plan{key: 2, msgs: msgs(20000)}, func(g Totals) string {
			return expect(g.Verified == 5000 && g.Lost == 15000 && g.UnexpectedErrors() == 1, "5,000 verified, 15,000 lost, a read error")
		}},
		{"truncated echo, reset planned later", truncate, plan{key: 3, msgs: msgs(20000, 10), end: endReset, resetAt: 20005}, func(g Totals) string {
			return expect(g.Lost == 15000 && g.Abandoned == 0 && g.Closed == 1 && g.UnexpectedErrors() == 1, "lost: the server broke the connection before the client's reset")
		}},
		// Extra bytes after the last echo show only when the client reads
		// on: to the EOF, after a half-close.
		{"doubled echo", double, plan{key: 4, msgs: []message{{size: 3000}, {size: 5000}}, end: endHalfClose}, func(g Totals) string {
			return expect(g.Corrupted >= 8000 && g.Verified+g.Corrupted == 16000, "every byte beyond those sent corrupted")
		}},
		{"no EOF after half-close", keep, plan{key: 5, msgs: msgs(10), end: endHalfClose}, func(g Totals) string {
			return expect(g.Verified == 10 && g.Unexpected["read: stall"] == 1, "a stall")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := play(t, startServer(t, tt.handle), tt.p, 500*time.Millisecond)
			if msg := tt.check(got); msg != "" {
				t.Errorf("%+v: want %s", got, msg)
			}
			if len(failures(&Result{Totals: []Totals{got}})) == 0 {
				t.Error("failures() = none, want the fault reported")
			}
		})
	}
}

func expect(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

// TestSessionStops checks that a session ends soon when the run ends,
// even in a long pause, and ends as its plan says.
func TestSessionStops(t *testing.T) {
	addr := startServer(t, echo)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	p := plan{key: 1, msgs: []message{{size: 10, pause: time.Hour}, {size: 10}}, end: endHalfClose}
	tl := newTally()
	start := time.Now()
	runSession(ctx, addr, p, tl, 10*time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("session took %v after its run ended", d)
	}
	if g := tl.totals(""); g.Sent != 10 || g.Verified != 10 || g.HalfClosed != 1 || len(g.Unexpected) != 0 {
		t.Errorf("%+v: want the first message only, verified, then a half-close", g)
	}
}

func TestErrKind(t *testing.T) {
	long := errors.New(strings.Repeat("x", 100))
	tests := []struct {
		op   string
		err  error
		want string
	}{
		{"read", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "read: ECONNRESET"},
		{"write", &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, "write: EPIPE"},
		{"dial", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "dial: ECONNREFUSED"},
		{"read", fmt.Errorf("x: %w", os.ErrDeadlineExceeded), "read: stall"},
		{"read", &net.OpError{Op: "read", Err: net.ErrClosed}, "read: closed"},
		{"read", io.EOF, "read: EOF"},
		{"read", long, "read: " + strings.Repeat("x", 80) + "…"},
	}
	for _, tt := range tests {
		if got := errKind(tt.op, tt.err); got != tt.want {
			t.Errorf("errKind(%q, %v) = %q, want %q", tt.op, tt.err, got, tt.want)
		}
	}
}
