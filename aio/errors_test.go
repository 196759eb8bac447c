package aio_test

import (
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// submitter is one of the watcher's request methods, called on c.
type submitter struct {
	name string
	call func(w *aio.Watcher, c net.Conn) error
}

var future = time.Now().Add(time.Hour)

// submitters are every method that submits a request, with a valid buffer.
var submitters = []submitter{
	{"Read", func(w *aio.Watcher, c net.Conn) error { return w.Read("ctx", c, make([]byte, 8)) }},
	{"Read/nil", func(w *aio.Watcher, c net.Conn) error { return w.Read("ctx", c, nil) }},
	{"ReadTimeout", func(w *aio.Watcher, c net.Conn) error { return w.ReadTimeout("ctx", c, make([]byte, 8), future) }},
	{"ReadFull", func(w *aio.Watcher, c net.Conn) error { return w.ReadFull("ctx", c, make([]byte, 8), future) }},
	{"Write", func(w *aio.Watcher, c net.Conn) error { return w.Write("ctx", c, []byte("x")) }},
	{"WriteTimeout", func(w *aio.Watcher, c net.Conn) error { return w.WriteTimeout("ctx", c, []byte("x"), future) }},
}

// releasers are the methods that hand a conn back.
var releasers = []submitter{
	{"Free", func(w *aio.Watcher, c net.Conn) error { return w.Free(c) }},
	{"Detach", func(w *aio.Watcher, c net.Conn) error {
		nc, err := w.Detach(c)
		if err != nil && nc != nil {
			return errors.New("Detach returned a conn with its error")
		}
		return err
	}},
}

// TestEmptyBuffer: writes and full reads of nothing are refused at once,
// and leave the conn alone.
func TestEmptyBuffer(t *testing.T) { backendtest.Run(t, testEmptyBuffer) }

func testEmptyBuffer(t *testing.T) {
	tests := []struct {
		name string
		call func(w *aio.Watcher, c net.Conn, buf []byte) error
	}{
		{"Write", func(w *aio.Watcher, c net.Conn, buf []byte) error { return w.Write(nil, c, buf) }},
		{"WriteTimeout", func(w *aio.Watcher, c net.Conn, buf []byte) error { return w.WriteTimeout(nil, c, buf, future) }},
		{"ReadFull", func(w *aio.Watcher, c net.Conn, buf []byte) error { return w.ReadFull(nil, c, buf, future) }},
		{"ReadFull/nodeadline", func(w *aio.Watcher, c net.Conn, buf []byte) error {
			return w.ReadFull(nil, c, buf, time.Time{})
		}},
	}
	c, peer := tcpPair(t)
	w := newWatcher(t, aio.Config{})
	for _, tt := range tests {
		for _, buf := range [][]byte{nil, {}, make([]byte, 0, 16)} {
			if err := tt.call(w, c, buf); err != aio.ErrEmptyBuffer {
				t.Errorf("%s(buffer len 0 cap %d nil %v) = %v, want ErrEmptyBuffer", tt.name, cap(buf), buf == nil, err)
			}
		}
	}
	w.Poke()
	if s := w.Stats().Total(); s.Conns != 0 || s.Completions != 0 {
		t.Errorf("after refused requests: Stats().Total() = %+v, want no conn, no completion", s)
	}
	// Not delegated: the conn still works.
	roundTrip(t, c, peer)
}

// TestNilConn: a nil conn, or a nil pointer of a conn type, is refused at
// once.
func TestNilConn(t *testing.T) { backendtest.Run(t, testNilConn) }

func testNilConn(t *testing.T) {
	w := newWatcher(t, aio.Config{})
	conns := []struct {
		name string
		c    net.Conn
	}{
		{"nil", nil},
		{"(*net.TCPConn)(nil)", (*net.TCPConn)(nil)},
		{"(*net.UnixConn)(nil)", (*net.UnixConn)(nil)},
	}
	for _, cc := range conns {
		for _, s := range append(submitters, releasers...) {
			if err := s.call(w, cc.c); err != aio.ErrUnsupported {
				t.Errorf("%s(%s) = %v, want ErrUnsupported", s.name, cc.name, err)
			}
		}
	}
	w.Poke()
	if s := w.Stats().Total(); s.Completions != 0 {
		t.Errorf("Completions = %d, want 0: a refused request has no completion", s.Completions)
	}
}

// TestClosedWatcher: after Close every method reports the close, and a
// conn offered to the closed watcher is left alone.
func TestClosedWatcher(t *testing.T) { backendtest.Run(t, testClosedWatcher) }

func testClosedWatcher(t *testing.T) {
	c, peer := tcpPair(t)          // delegated before Close
	fresh, freshPeer := tcpPair(t) // offered only after Close
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	delegate(t, w, col, c, peer)

	if err := w.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close() = %v, want nil", err)
	}
	for _, s := range append(submitters, releasers...) {
		for _, cc := range []net.Conn{c, fresh} {
			if err := s.call(w, cc); err != aio.ErrWatcherClosed {
				t.Errorf("%s after Close = %v, want ErrWatcherClosed", s.name, err)
			}
		}
	}
	if nc, err := w.Detach(fresh); nc != nil || err != aio.ErrWatcherClosed {
		t.Errorf("Detach after Close = %v, %v; want nil, ErrWatcherClosed", nc, err)
	}
	if rs, err := w.WaitIO(); rs != nil || err != aio.ErrWatcherClosed {
		t.Errorf("WaitIO after Close = %v, %v; want nil, ErrWatcherClosed", rs, err)
	}
	// Close released the delegated conn and never touched the fresh one.
	expectEOF(t, peer)
	roundTrip(t, fresh, freshPeer)
}

// TestCloseUnblocksWaitIO: a WaitIO blocked when Close happens returns
// ErrWatcherClosed.
func TestCloseUnblocksWaitIO(t *testing.T) { backendtest.Run(t, testCloseUnblocksWaitIO) }

func testCloseUnblocksWaitIO(t *testing.T) {
	for i := range 10 {
		w := newWatcher(t, aio.Config{})
		type ret struct {
			rs  []aio.OpResult
			err error
		}
		started := make(chan struct{})
		done := make(chan ret, 1)
		go func() {
			close(started)
			rs, err := w.WaitIO()
			done <- ret{rs, err}
		}()
		<-started
		if i%2 == 1 {
			// Let WaitIO reach its wait more often than not.
			runtime.Gosched()
		}
		w.Close()
		select {
		case r := <-done:
			if r.rs != nil || r.err != aio.ErrWatcherClosed {
				t.Fatalf("blocked WaitIO after Close = %v, %v; want nil, ErrWatcherClosed", r.rs, r.err)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("WaitIO still blocked %v after Close", waitTimeout)
		}
	}
}

func TestAffinity(t *testing.T) { backendtest.Run(t, testAffinity) }

func testAffinity(t *testing.T) {
	n := runtime.NumCPU()
	w := newWatcher(t, aio.Config{Loops: 2})
	tests := []struct {
		cpu  int
		want error
	}{
		{-1, aio.ErrCPUID},
		{n, aio.ErrCPUID},
		{n + 100, aio.ErrCPUID},
		{0, nil},
		{n - 1, nil},
	}
	for _, tt := range tests {
		if err := w.SetLoopAffinity(tt.cpu); err != tt.want {
			t.Errorf("SetLoopAffinity(%d) = %v, want %v", tt.cpu, err, tt.want)
		}
		if err := w.SetPollerAffinity(tt.cpu); err != tt.want {
			t.Errorf("SetPollerAffinity(%d) = %v, want %v", tt.cpu, err, tt.want)
		}
	}
	// The loops still work once pinned.
	c, peer := tcpPair(t)
	col := collect(t, w)
	delegate(t, w, col, c, peer)

	w.Close()
	if err := w.SetLoopAffinity(0); err != aio.ErrConnClosed {
		t.Errorf("SetLoopAffinity(0) after Close = %v, want ErrConnClosed", err)
	}
	if err := w.SetPollerAffinity(0); err != aio.ErrPollerClosed {
		t.Errorf("SetPollerAffinity(0) after Close = %v, want ErrPollerClosed", err)
	}
}

func TestNewWatcherSize(t *testing.T) { backendtest.Run(t, testNewWatcherSize) }

func testNewWatcherSize(t *testing.T) {
	if w, err := aio.NewWatcherSize(-1); err == nil || w != nil {
		if w != nil {
			w.Close()
		}
		t.Errorf("NewWatcherSize(-1) = %v, %v; want nil, an error", w, err)
	}
	for _, size := range []int{0, 1, 4096, 1 << 20} {
		w, err := aio.NewWatcherSize(size)
		if err != nil {
			t.Fatalf("NewWatcherSize(%d) = %v", size, err)
		}
		t.Cleanup(func() { w.Close() })
		c, peer := tcpPair(t)
		col := collect(t, w)
		if err := w.Read(size, c, nil); err != nil {
			t.Fatalf("NewWatcherSize(%d): Read(nil buffer) = %v", size, err)
		}
		writePeer(t, peer, "data")
		if r := waitResult(t, col); r.Error != nil || string(r.Data) != "data" || !r.IsSwapBuffer {
			t.Errorf("NewWatcherSize(%d): nil-buffer read = %v, want \"data\" in the swap buffer", size, r)
		}
	}
}

// TestErrorValues: the sentinels are the standard errors, or match them.
func TestErrorValues(t *testing.T) { backendtest.Run(t, testErrorValues) }

func testErrorValues(t *testing.T) {
	if aio.ErrDeadline != os.ErrDeadlineExceeded {
		t.Errorf("ErrDeadline = %v, want os.ErrDeadlineExceeded itself", aio.ErrDeadline)
	}
	tests := []struct {
		name   string
		err    error
		target error
	}{
		{"ErrConnClosed", aio.ErrConnClosed, net.ErrClosed},
		{"ErrConnClosed", aio.ErrConnClosed, io.ErrClosedPipe},
		{"ErrWatcherClosed", aio.ErrWatcherClosed, net.ErrClosed},
		{"ErrPollerClosed", aio.ErrPollerClosed, net.ErrClosed},
		{"ErrUnsupported", aio.ErrUnsupported, errors.ErrUnsupported},
		{"ErrDeadline", aio.ErrDeadline, os.ErrDeadlineExceeded},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.target) {
			t.Errorf("errors.Is(%s, %v) = false, want true", tt.name, tt.target)
		}
	}
	var ne net.Error
	if !errors.As(aio.ErrDeadline, &ne) || !ne.Timeout() {
		t.Errorf("ErrDeadline is not a net.Error with Timeout() true")
	}
}

// TestZeroLengthRead: a non-nil empty buffer reads nothing and is not end
// of file; the data waiting stays for the next read.
func TestZeroLengthRead(t *testing.T) { backendtest.Run(t, testZeroLengthRead) }

func testZeroLengthRead(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		writePeer(t, peer, "data")
		for _, buf := range [][]byte{{}, make([]byte, 0, 16)} {
			if err := w.Read("zero", c, buf); err != nil {
				t.Fatalf("Read(empty buffer) = %v", err)
			}
			r := waitResult(t, col)
			if r.Error != nil || r.Size != 0 || r.IsSwapBuffer || r.Context != "zero" {
				t.Errorf("Read(len 0, cap %d) = %v, want size 0, nil error", cap(buf), r)
			}
		}
		if err := w.Read("data", c, make([]byte, 16)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		if r := waitResult(t, col); r.Error != nil || string(r.Data) != "data" {
			t.Errorf("Read after empty reads = %v, want \"data\"", r)
		}
	})
}

// TestPeerClose: a read on a conn whose peer closed ends with io.EOF
// itself.
func TestPeerClose(t *testing.T) { backendtest.Run(t, testPeerClose) }

func testPeerClose(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		tests := []struct {
			name string
			buf  []byte
			full bool
		}{
			{"Read", make([]byte, 8), false},
			{"Read/nil", nil, false},
			{"ReadFull", make([]byte, 8), true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, peer := pair(t)
				w := newWatcher(t, aio.Config{})
				col := collect(t, w)
				// One read pending when the peer closes, one submitted after.
				for i := range 2 {
					var err error
					if tt.full {
						err = w.ReadFull(i, c, tt.buf, time.Time{})
					} else {
						err = w.Read(i, c, tt.buf)
					}
					if err != nil {
						t.Fatalf("%s = %v", tt.name, err)
					}
					if i == 0 {
						w.Poke()
						peer.Close()
					}
					r := waitResult(t, col)
					if r.Error != io.EOF || r.Size != 0 || r.Context != i {
						t.Errorf("%s %d after peer close = %v, want size 0, io.EOF", tt.name, i, r)
					}
				}
			})
		}
	})
}

// TestDeadlineError: an expired request fails with ErrDeadline, a
// net.Error whose Timeout is true.
func TestDeadlineError(t *testing.T) { backendtest.Run(t, testDeadlineError) }

func testDeadlineError(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, _ := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		past := time.Now().Add(-time.Second)
		calls := []submitter{
			{"ReadTimeout", func(w *aio.Watcher, c net.Conn) error { return w.ReadTimeout("ctx", c, make([]byte, 8), past) }},
			{"ReadTimeout/nil", func(w *aio.Watcher, c net.Conn) error { return w.ReadTimeout("ctx", c, nil, past) }},
			{"ReadFull", func(w *aio.Watcher, c net.Conn) error { return w.ReadFull("ctx", c, make([]byte, 8), past) }},
		}
		for _, s := range calls {
			if err := s.call(w, c); err != nil {
				t.Fatalf("%s = %v", s.name, err)
			}
			r := waitResult(t, col)
			if r.Error != aio.ErrDeadline || r.Size != 0 || r.Context != "ctx" {
				t.Errorf("%s with a past deadline = %v, want size 0, ErrDeadline", s.name, r)
			}
			var ne net.Error
			if !errors.As(r.Error, &ne) || !ne.Timeout() {
				t.Errorf("%s: error %v is not a net.Error with Timeout() true", s.name, r.Error)
			}
			if !errors.Is(r.Error, os.ErrDeadlineExceeded) {
				t.Errorf("%s: errors.Is(%v, os.ErrDeadlineExceeded) = false", s.name, r.Error)
			}
		}
	})
}
