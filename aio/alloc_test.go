//go:build !race

package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// stAllocEcho is a steady-state echo between two watchers: a client that
// writes 4 bytes and reads them back, and a server that echoes them. Every
// buffer is allocated up front and every ctx is nil, so a round should not
// allocate at all.
type stAllocEcho struct {
	t      *testing.T
	ws, wc *aio.Watcher
	sc, cc net.Conn
	swap   bool   // the server reads into the swap buffer
	msg    []byte // what the client sends
	sbuf   []byte // the server's read buffer (unused with swap)
	echo   []byte // the server's write buffer
	cbuf   []byte // the client's read buffer
}

func stNewAllocEcho(t *testing.T, swap bool) *stAllocEcho {
	ws := stWatcher(t, aio.Config{})
	wc := stWatcher(t, aio.Config{})
	stWatchdog(t, 2*stTimeout, ws, wc)
	sc, cc := stTCPPair(t)
	e := &stAllocEcho{
		t: t, ws: ws, wc: wc, sc: sc, cc: cc, swap: swap,
		msg: []byte("ping"), sbuf: make([]byte, 64), echo: make([]byte, 4), cbuf: make([]byte, 4),
	}
	e.serverRead()
	e.clientRead(0)
	return e
}

func (e *stAllocEcho) serverRead() {
	buf := e.sbuf
	if e.swap {
		buf = nil
	}
	if err := e.ws.Read(nil, e.sc, buf); err != nil {
		e.t.Fatalf("server Read = %v, want nil", err)
	}
}

func (e *stAllocEcho) clientRead(got int) {
	if err := e.wc.Read(nil, e.cc, e.cbuf[got:]); err != nil {
		e.t.Fatalf("client Read = %v, want nil", err)
	}
}

// round sends the message and waits until it is back and every write has
// completed; one read stays pending on each side between rounds.
func (e *stAllocEcho) round() {
	if err := e.wc.Write(nil, e.cc, e.msg); err != nil {
		e.t.Fatalf("client Write = %v, want nil", err)
	}

	// Server: echo what arrives until the 4 bytes are back out.
	got, writing := 0, 0
	for got < len(e.msg) || writing > 0 {
		res, err := e.ws.WaitIO()
		if err != nil {
			e.t.Fatalf("server WaitIO() = %v, want nil", err)
		}
		for _, r := range res {
			if r.Error != nil {
				e.t.Fatalf("server %v = %v, want nil", r.Operation, r.Error)
			}
			if r.Operation == aio.OpWrite {
				writing--
				continue
			}
			if r.IsSwapBuffer != e.swap || got+r.Size > len(e.echo) {
				e.t.Fatalf("server read: %d bytes, swap %v, want at most %d, swap %v", r.Size, r.IsSwapBuffer, len(e.echo)-got, e.swap)
			}
			n := copy(e.echo[got:], r.Buffer[:r.Size])
			if err := e.ws.Write(nil, e.sc, e.echo[got:got+n]); err != nil {
				e.t.Fatalf("server Write = %v, want nil", err)
			}
			got += n
			writing++
			e.serverRead()
		}
	}

	// Client: its write and the echo.
	got, written := 0, false
	for got < len(e.msg) || !written {
		res, err := e.wc.WaitIO()
		if err != nil {
			e.t.Fatalf("client WaitIO() = %v, want nil", err)
		}
		for _, r := range res {
			if r.Error != nil {
				e.t.Fatalf("client %v = %v, want nil", r.Operation, r.Error)
			}
			if r.Operation == aio.OpWrite {
				written = true
				continue
			}
			got += r.Size
			if got < len(e.msg) {
				e.clientRead(got)
			}
		}
	}
	if !bytes.Equal(e.cbuf, e.msg) {
		e.t.Fatalf("echo = %q, want %q", e.cbuf, e.msg)
	}
	e.clientRead(0)
}

func stCheckEchoAllocs(t *testing.T, swap bool) {
	backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
	e := stNewAllocEcho(t, swap)
	for range 200 {
		e.round()
	}
	start := time.Now()
	if allocs := testing.AllocsPerRun(1000, e.round); allocs != 0 {
		t.Errorf("allocations per echo round = %v, want 0", allocs)
	}
	t.Logf("1000 rounds in %v", time.Since(start))
}

func TestAllocEchoUserBuffers(t *testing.T) { backendtest.Run(t, testAllocEchoUserBuffers) }

func testAllocEchoUserBuffers(t *testing.T) { stCheckEchoAllocs(t, false) }

func TestAllocEchoSwapServer(t *testing.T) { backendtest.Run(t, testAllocEchoSwapServer) }

func testAllocEchoSwapServer(t *testing.T) { stCheckEchoAllocs(t, true) }
