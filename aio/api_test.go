package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

func TestOpType(t *testing.T) { backendtest.Run(t, testOpType) }

func testOpType(t *testing.T) {
	tests := []struct {
		op   aio.OpType
		val  int
		want string
	}{
		{aio.OpRead, 0, "read"},
		{aio.OpWrite, 1, "write"},
		{aio.OpType(7), 7, "unknown"},
	}
	for _, tt := range tests {
		if int(tt.op) != tt.val {
			t.Errorf("OpType %q = %d, want %d", tt.want, int(tt.op), tt.val)
		}
		if got := tt.op.String(); got != tt.want {
			t.Errorf("OpType(%d).String() = %q, want %q", int(tt.op), got, tt.want)
		}
	}
}

// checkRead checks the fields every completed read shares.
func checkRead(t *testing.T, r result, ctx any, c net.Conn, want string) {
	t.Helper()
	if r.Operation != aio.OpRead {
		t.Errorf("Operation = %v, want %v", r.Operation, aio.OpRead)
	}
	if r.Context != ctx {
		t.Errorf("Context = %v, want %v", r.Context, ctx)
	}
	if r.Conn != c {
		t.Errorf("Conn = %p, want the submitted conn %p", r.Conn, c)
	}
	if r.Error != nil {
		t.Errorf("Error = %v, want nil", r.Error)
	}
	if r.Size != len(want) || string(r.Data) != want {
		t.Errorf("Size, data = %d, %q; want %d, %q", r.Size, r.Data, len(want), want)
	}
}

// TestReadUserBuffer: a read into a caller buffer returns that buffer
// whole, with the data at its start.
func TestReadUserBuffer(t *testing.T) { backendtest.Run(t, testReadUserBuffer) }

func testReadUserBuffer(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		tests := []struct {
			name   string
			submit func(ctx any, buf []byte) error
		}{
			{"Read", func(ctx any, buf []byte) error { return w.Read(ctx, c, buf) }},
			{"ReadTimeout", func(ctx any, buf []byte) error {
				return w.ReadTimeout(ctx, c, buf, time.Now().Add(time.Hour))
			}},
			{"ReadTimeout/zero", func(ctx any, buf []byte) error { return w.ReadTimeout(ctx, c, buf, time.Time{}) }},
		}
		for _, tt := range tests {
			buf := make([]byte, 64)
			if err := tt.submit(tt.name, buf); err != nil {
				t.Fatalf("%s = %v, want nil", tt.name, err)
			}
			writePeer(t, peer, "hello "+tt.name)
			r := waitResult(t, col)
			checkRead(t, r, tt.name, c, "hello "+tt.name)
			if r.IsSwapBuffer {
				t.Errorf("%s: IsSwapBuffer = true, want false", tt.name)
			}
			if len(r.Buffer) != len(buf) || &r.Buffer[0] != &buf[0] {
				t.Errorf("%s: Buffer = len %d at %p, want the caller's buffer, len %d at %p",
					tt.name, len(r.Buffer), r.Buffer, len(buf), buf)
			}
		}
		// A completed request leaves no deadline timer behind.
		if n := w.Timers(); n != 0 {
			t.Errorf("Timers() after the reads completed = %d, want 0", n)
		}
	})
}

// TestReadSwapBuffer: a nil-buffer read returns a swap slice holding
// exactly the data.
func TestReadSwapBuffer(t *testing.T) { backendtest.Run(t, testReadSwapBuffer) }

func testReadSwapBuffer(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		for i, deadline := range []time.Time{{}, time.Now().Add(time.Hour)} {
			if err := w.ReadTimeout(i, c, nil, deadline); err != nil {
				t.Fatalf("ReadTimeout(nil buffer) = %v, want nil", err)
			}
			want := string(bytes.Repeat([]byte{'a' + byte(i)}, 1000))
			writePeer(t, peer, want)
			// One peer write may arrive in pieces; read until all is in.
			got := ""
			for len(got) < len(want) {
				r := waitResult(t, col)
				if r.Error != nil || r.Context != i || r.Conn != c || r.Operation != aio.OpRead {
					t.Fatalf("nil-buffer read completed with %v (conn %p), want ctx %d, conn %p, no error", r, r.Conn, i, c)
				}
				if !r.IsSwapBuffer {
					t.Errorf("IsSwapBuffer = false, want true")
				}
				if len(r.Buffer) != r.Size || r.Size == 0 {
					t.Errorf("len(Buffer), Size = %d, %d; want equal and > 0", len(r.Buffer), r.Size)
				}
				got += string(r.Data)
				if len(got) < len(want) {
					if err := w.Read(i, c, nil); err != nil {
						t.Fatalf("Read(nil buffer) = %v, want nil", err)
					}
				}
			}
			if got != want {
				t.Fatalf("nil-buffer reads got %q, want %q", got, want)
			}
		}
	})
}

// waitBytesRead waits until the watcher has read n bytes in all.
func waitBytesRead(t *testing.T, w *aio.Watcher, n uint64) {
	t.Helper()
	waitFor(t, "the watcher to read the peer's bytes", func() bool {
		return w.Stats().Total().BytesRead >= n
	})
}

// TestReadFull: ReadFull completes only with the whole buffer, assembled
// from several peer writes, and reads nothing beyond it.
func TestReadFull(t *testing.T) { backendtest.Run(t, testReadFull) }

func testReadFull(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		buf := make([]byte, 12)
		if err := w.ReadFull("full", c, buf, time.Time{}); err != nil {
			t.Fatalf("ReadFull = %v, want nil", err)
		}
		// Each part is read before the next is sent, so the request
		// really spans several reads.
		writePeer(t, peer, "abcd")
		waitBytesRead(t, w, 4)
		writePeer(t, peer, "efgh")
		waitBytesRead(t, w, 8)
		writePeer(t, peer, "ijklXYZ")
		r := waitResult(t, col)
		checkRead(t, r, "full", c, "abcdefghijkl")
		if r.IsSwapBuffer || len(r.Buffer) != len(buf) || &r.Buffer[0] != &buf[0] {
			t.Errorf("Buffer = len %d swap %v, want the caller's buffer", len(r.Buffer), r.IsSwapBuffer)
		}
		// The bytes past the buffer are left for the next read.
		if err := w.Read("rest", c, nil); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
		checkRead(t, waitResult(t, col), "rest", c, "XYZ")
	})
}

// TestReadFullEOF: a peer that closes early ends ReadFull with the bytes
// it sent and io.EOF.
func TestReadFullEOF(t *testing.T) { backendtest.Run(t, testReadFullEOF) }

func testReadFullEOF(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		buf := make([]byte, 10)
		if err := w.ReadFull("full", c, buf, time.Time{}); err != nil {
			t.Fatalf("ReadFull = %v, want nil", err)
		}
		writePeer(t, peer, "abcd")
		waitBytesRead(t, w, 4)
		peer.Close()
		r := waitResult(t, col)
		if r.Error != io.EOF || r.Size != 4 || string(r.Data) != "abcd" {
			t.Fatalf("ReadFull = %v, want size 4, data \"abcd\", io.EOF", r)
		}
	})
}

// TestWrite: every byte of a write larger than the socket buffers
// arrives, in order, and the completion reports the whole length.
func TestWrite(t *testing.T) { backendtest.Run(t, testWrite) }

func testWrite(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		tests := []struct {
			name   string
			submit func(w *aio.Watcher, c net.Conn, buf []byte) error
		}{
			{"Write", func(w *aio.Watcher, c net.Conn, buf []byte) error { return w.Write("w", c, buf) }},
			{"WriteTimeout", func(w *aio.Watcher, c net.Conn, buf []byte) error {
				return w.WriteTimeout("w", c, buf, time.Now().Add(time.Hour))
			}},
			{"WriteTimeout/zero", func(w *aio.Watcher, c net.Conn, buf []byte) error {
				return w.WriteTimeout("w", c, buf, time.Time{})
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, peer := pair(t)
				w := newWatcher(t, aio.Config{})
				col := collect(t, w)
				buf := make([]byte, 4<<20)
				for i := range buf {
					buf[i] = byte(i * 7 / 5)
				}
				got := make(chan []byte, 1)
				go func() {
					peer.SetReadDeadline(time.Now().Add(waitTimeout))
					b := make([]byte, len(buf))
					n, _ := io.ReadFull(peer, b)
					got <- b[:n]
				}()
				if err := tt.submit(w, c, buf); err != nil {
					t.Fatalf("%s = %v, want nil", tt.name, err)
				}
				r := waitResult(t, col)
				if r.Operation != aio.OpWrite || r.Context != "w" || r.Conn != c || r.Error != nil || r.Size != len(buf) {
					t.Errorf("%s completed with %v, want OpWrite, ctx w, size %d, nil error", tt.name, r, len(buf))
				}
				if r.IsSwapBuffer || len(r.Buffer) != len(buf) || &r.Buffer[0] != &buf[0] {
					t.Errorf("Buffer = len %d swap %v, want the caller's buffer", len(r.Buffer), r.IsSwapBuffer)
				}
				if b := <-got; !bytes.Equal(b, buf) {
					t.Errorf("peer received %d bytes, want the %d written, in order", len(b), len(buf))
				}
			})
		}
	})
}

// TestContext: the ctx of a request comes back unchanged, whatever it is.
func TestContext(t *testing.T) { backendtest.Run(t, testContext) }

func testContext(t *testing.T) {
	type key struct{ a, b int }
	ptr := new(int)
	ctxs := []any{nil, 0, 42, "s", ptr, key{1, 2}, aio.OpWrite, t}
	c, peer := tcpPair(t)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	for _, ctx := range ctxs {
		if err := w.Write(ctx, c, []byte{'x'}); err != nil {
			t.Fatalf("Write(ctx %v) = %v, want nil", ctx, err)
		}
	}
	// Writes on one conn complete in order.
	for i, r := range waitResults(t, col, len(ctxs)) {
		if r.Context != ctxs[i] {
			t.Errorf("completion %d: Context = %#v, want %#v", i, r.Context, ctxs[i])
		}
	}
	readPeer(t, peer, len(ctxs))
}

// TestStats follows the counters through a quiet connection's life.
func TestStats(t *testing.T) { backendtest.Run(t, testStats) }

func testStats(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		check := func(step string, want aio.LoopStats) {
			t.Helper()
			w.Poke()
			got := w.Stats().Total()
			got.SwapBytes, want.SwapBytes = 0, 0 // checked apart
			if env := os.Getenv("GALE_BACKEND"); got.Backend.String() != env {
				t.Errorf("Stats().Total().Backend = %v, want %v (GALE_BACKEND)", got.Backend, env)
			}
			want.Backend = got.Backend
			if got != want {
				t.Errorf("after %s: Stats().Total() = %+v, want %+v", step, got, want)
			}
		}
		if s, want := w.Stats(), runtime.GOMAXPROCS(0); len(s.Loops) != want {
			t.Fatalf("len(Stats().Loops) = %d, want GOMAXPROCS = %d (the default)", len(s.Loops), want)
		}
		check("start", aio.LoopStats{})

		if err := w.Read("r1", c, nil); err != nil {
			t.Fatalf("Read = %v", err)
		}
		check("a pending read", aio.LoopStats{Conns: 1, PendingReads: 1})

		big := make([]byte, 8<<20)
		if err := w.Write("w1", c, big); err != nil {
			t.Fatalf("Write = %v", err)
		}
		// The peer reads nothing yet: the write stays pending once the
		// socket buffers are full.
		w.Poke()
		if s := w.Stats().Total(); s.PendingWrites != 1 || s.PendingReads != 1 || s.Completions != 0 {
			t.Errorf("with a blocked write: Stats().Total() = %+v, want PendingReads 1, PendingWrites 1, Completions 0", s)
		}
		drained := drainPeer(peer, len(big))
		if r := waitResult(t, col); r.Error != nil || r.Size != len(big) {
			t.Fatalf("Write completed with %v, want size %d", r, len(big))
		}
		if err := <-drained; err != nil {
			t.Fatalf("peer read of the write = %v", err)
		}
		check("the write", aio.LoopStats{Conns: 1, PendingReads: 1, BytesWritten: uint64(len(big)), Completions: 1})

		writePeer(t, peer, "1234567")
		if r := waitResult(t, col); r.Error != nil || r.Size != 7 {
			t.Fatalf("Read completed with %v, want size 7", r)
		}
		check("the read", aio.LoopStats{Conns: 1, BytesRead: 7, BytesWritten: uint64(len(big)), Completions: 2})
		if s := w.Stats().Total(); s.SwapBytes <= 0 {
			t.Errorf("after a nil-buffer read: SwapBytes = %d, want > 0", s.SwapBytes)
		}

		if err := w.Read("r2", c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		check("a second pending read", aio.LoopStats{Conns: 1, PendingReads: 1, BytesRead: 7, BytesWritten: uint64(len(big)), Completions: 2})
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v", err)
		}
		if r := waitResult(t, col); r.Context != "r2" || r.Error != aio.ErrConnClosed {
			t.Fatalf("pending read after Free completed with %v, want ctx r2, ErrConnClosed", r)
		}
		// Free has no completion of its own.
		check("Free", aio.LoopStats{BytesRead: 7, BytesWritten: uint64(len(big)), Completions: 3})
	})
}
