package aio_test

// Churn: short connections, one after another from several dialers,
// against one watcher's echo loop. Each dials, sends a message, reads its
// echo and hangs up (stresstest.Churn). Afterwards nothing may be left
// of them: no descriptor, no goroutine, no heap, no connection or request
// in the watcher's counters.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// stChurnMode is the context of a connection's requests: whether it reads
// into the swap buffer or into a buffer of its own.
type stChurnMode int

const (
	stChurnOwn stChurnMode = iota
	stChurnSwap
)

// stChurnServer accepts on a loopback listener and echoes every
// connection through a watcher: every other connection reads into a
// 4 KiB buffer of its own and writes from it, the others read into the
// swap buffer and write a copy. A connection is freed at end of file.
type stChurnServer struct {
	w               *aio.Watcher
	ln              net.Listener
	accepted, freed atomic.Int64
	errs            stErrs
}

func stStartChurn(t *testing.T, w *aio.Watcher) *stChurnServer {
	s := &stChurnServer{w: w}
	s.ln = stServe(t, w, &s.errs, s.start, s.serve)
	return s
}

func (s *stChurnServer) start(c net.Conn) error {
	if s.accepted.Add(1)%2 == 0 {
		return s.w.Read(stChurnSwap, c, nil)
	}
	return s.w.Read(stChurnOwn, c, make([]byte, 4<<10))
}

func (s *stChurnServer) serve(r aio.OpResult) error {
	mode, _ := r.Context.(stChurnMode)
	switch {
	case r.Operation == aio.OpRead && r.Error == nil && r.Size > 0:
		if r.IsSwapBuffer != (mode == stChurnSwap) {
			s.errs.add(fmt.Errorf("read in mode %d: IsSwapBuffer %v", mode, r.IsSwapBuffer))
		}
		out := r.Buffer[:r.Size]
		if r.IsSwapBuffer {
			out = bytes.Clone(out) // the swap buffer is reused after the next WaitIO
		}
		return s.w.Write(mode, r.Conn, out)
	case r.Operation == aio.OpRead && r.Error == io.EOF:
		s.freed.Add(1)
		return s.w.Free(r.Conn)
	case r.Operation == aio.OpWrite && r.Error == nil && mode == stChurnSwap:
		return s.w.Read(mode, r.Conn, nil)
	case r.Operation == aio.OpWrite && r.Error == nil:
		return s.w.Read(mode, r.Conn, r.Buffer[:cap(r.Buffer)])
	default:
		s.errs.add(fmt.Errorf("%v: size %d, %v", r.Operation, r.Size, r.Error))
		s.freed.Add(1)
		return s.w.Free(r.Conn)
	}
}

// TestChurn runs stresstest.Churn's connect–exchange–disconnect cycles
// against one watcher's echo loop: every echo checked, and then the
// process's descriptors, goroutines and heap back to where they were
// before the cycles, within Churn's tolerances. It checks that the
// watcher then holds no connection and no pending request, and that it
// read and wrote every byte of the cycles.
func TestChurn(t *testing.T) { backendtest.Run(t, testChurn) }

func testChurn(t *testing.T) {
	w := stWatcher(t, aio.Config{})
	srv := stStartChurn(t, w)
	s0 := w.Stats().Total()
	r := stresstest.Churn(t, srv.ln.Addr(), stresstest.ChurnConfig{
		Released: func() bool {
			s := w.Stats().Total()
			return s.Conns == 0 && s.PendingReads == 0 && s.PendingWrites == 0 && srv.freed.Load() == srv.accepted.Load()
		},
		Timeout: stTimeout,
	})
	s := w.Stats().Total()
	t.Logf("swap %d KiB after the cycles", s.SwapBytes>>10)
	if in, out := s.BytesRead-s0.BytesRead, s.BytesWritten-s0.BytesWritten; in != uint64(r.Sent) || out != uint64(r.Sent) {
		t.Errorf("watcher read %d and wrote %d bytes in %d cycles, want %d each", in, out, r.Cycles, r.Sent)
	}
	if a, f := srv.accepted.Load(), srv.freed.Load(); a != f {
		t.Errorf("%d connections accepted, %d freed, want as many", a, f)
	}
	srv.errs.check(t, "echo loop")
}
