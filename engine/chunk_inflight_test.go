package engine

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// openRecorder hands every opened Conn to a channel.
type openRecorder struct {
	BaseHandler
	opened chan *Conn
}

func (h *openRecorder) OnOpen(c *Conn) ([]byte, Action) {
	h.opened <- c
	return nil, None
}

// TestInFlightChunksNotRecycled closes a connection while a send of its
// queued output is in flight: the chunks that send covers must not return
// to the pool, where another connection's Write would overwrite bytes
// the kernel may still be sending (io_uring's send reads them until its
// last completion). They did.
func TestInFlightChunksNotRecycled(t *testing.T) {
	backendtest.Run(t, testInFlightChunksNotRecycled)
}

func testInFlightChunksNotRecycled(t *testing.T) {
	h := &openRecorder{opened: make(chan *Conn, 1)}
	e, err := New(h, Options{Loops: 1, WriteHighWater: 8 << 20, MaxWriteBuffer: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	e.Start()
	a, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := net.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.(*net.TCPConn).SetReadBuffer(4 << 10)
	var c *Conn
	select {
	case c = <-h.opened:
	case <-time.After(10 * time.Second):
		t.Fatal("no OnOpen")
	}
	data := bytes.Repeat([]byte("a"), 64<<10)
	for i := 0; c.OutboundBuffered() < 1<<20; i++ {
		if i > 1024 {
			t.Fatal("64 MiB written and the queue still short")
		}
		c.Write(data)
	}
	inFlight := map[*chunk]bool{}
	done := make(chan struct{})
	c.Execute(func(c *Conn) {
		defer close(done)
		c.mu.Lock()
		sending := c.mbits.has(bSending)
		for _, ch := range c.q.out[:len(c.q.vec)] { // what the send covers
			inFlight[ch] = true
		}
		c.mu.Unlock()
		if !sending {
			t.Error("no send in flight with 1 MiB queued to a peer that does not read")
			return
		}
		c.fail(net.ErrClosed)
	})
	<-done
	e.chunks.each(func(ch *chunk) {
		if inFlight[ch] {
			t.Error("a chunk of the send in flight went back to the pool when its connection closed")
		}
	})
}

// each calls fn with every value the lists hold, under their lock.
func (f *freeLists[T]) each(fn func(T)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, free := range f.free {
		for _, v := range free {
			fn(v)
		}
	}
}
