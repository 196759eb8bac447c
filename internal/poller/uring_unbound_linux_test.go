//go:build linux

package poller

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// handOffProvider is a Provider whose owner hands completions off: it
// gets an unbound ring.
type handOffProvider struct{ buf []byte }

func (p *handOffProvider) Provide() ([]byte, int) { return p.buf, 0 }
func (p *handOffProvider) Commit(int, int)        {}
func (p *handOffProvider) HandsOff() bool         { return true }

// TestUnboundSurvivesThreadExit: an unbound ring's loop goroutine moves
// between threads, and a thread that submitted operations may exit while
// they are in flight (Go ends the thread of a goroutine that returns
// locked to it). Their completions then have no thread of their own to
// run on, and some kernels cancel them; the backend resubmits what it did
// not cancel itself. Either way the receive gets the bytes sent
// afterwards and the send completes whole, in order.
func TestUnboundSurvivesThreadExit(t *testing.T) {
	b, tag, fds := urPair(t, &handOffProvider{buf: make([]byte, 4096)}, 8)
	if !b.unbound {
		t.Fatal("a HandOff provider's ring is bound to its thread")
	}
	unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
	out := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: far more than the socket holds
	rbuf := make([]byte, 64)
	var got []Completion
	collect := func(c *Completion) { got = append(got, *c) }
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never undone: the thread ends with this goroutine
		b.Recv(tag, rbuf)
		b.Send(tag, [][]byte{out})
		b.Wait(0, collect) // submits both from this thread
		close(exited)
	}()
	<-exited
	if len(got) > 0 {
		t.Fatalf("completions before any data: %+v", got)
	}
	// The peer reads everything sent, then sends a greeting.
	sent := make(chan []byte, 1)
	go func() {
		var all []byte
		buf := make([]byte, 64<<10)
		for len(all) < len(out) {
			n, err := unix.Read(fds[1], buf)
			if err == unix.EAGAIN {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil || n == 0 {
				break
			}
			all = append(all, buf[:n]...)
		}
		unix.Write(fds[1], []byte("hello"))
		sent <- all
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		if err := b.Wait(100*time.Millisecond, collect); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) < 2 {
		t.Fatalf("completions after the submitting thread exited: %+v, want a receive and a send", got)
	}
	for _, c := range got {
		switch c.Op {
		case OpRecv:
			if c.Err != 0 || string(rbuf[:c.N]) != "hello" {
				t.Errorf("receive: %d bytes %q, errno %v; want \"hello\"", c.N, rbuf[:c.N], c.Err)
			}
		case OpSend:
			if c.Err != 0 || c.N != len(out) {
				t.Errorf("send: %d of %d bytes, errno %v", c.N, len(out), c.Err)
			}
		}
	}
	if all := <-sent; !bytes.Equal(all, out) {
		t.Errorf("the peer got %d bytes, not the %d sent in order", len(all), len(out))
	}
}

// transientHandOff hands its completions off but lends buffers only for
// the callback (netconn's loops).
type transientHandOff struct{ handOffProvider }

func (transientHandOff) Transient() bool { return true }

// TestTransientHandOffStaysBound: a provider that hands off but is
// Transient (netconn) keeps the single-issuer ring its loop reads in
// place; a HandOff one that is not (aio) gets the unbound ring.
func TestTransientHandOffStaysBound(t *testing.T) {
	b, _, _ := urPair(t, &transientHandOff{handOffProvider{buf: make([]byte, 64)}}, 8)
	if b.unbound {
		t.Fatal("a Transient HandOff provider's ring is unbound")
	}
	if !b.direct {
		t.Fatal("a Transient provider's ring does not lend its buffers")
	}
}
