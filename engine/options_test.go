package engine_test

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/galeio/gale/engine"
)

// TestNew checks New's defaults and its refusal of a nil handler.
func TestNew(t *testing.T) {
	if e, err := engine.New(nil, engine.Options{}); err == nil {
		e.Stop()
		t.Fatal("New(nil handler) = nil error")
	}
	e := etNew(t, etNewHandler(), engine.Options{})
	if n, want := len(e.Stats().Loops), runtime.GOMAXPROCS(0); n != want {
		t.Errorf("%d loops by default, want GOMAXPROCS = %d", n, want)
	}
	e = etNew(t, etNewHandler(), engine.Options{Loops: 3})
	if n := len(e.Stats().Loops); n != 3 {
		t.Errorf("%d loops with Loops: 3", n)
	}
	if n := e.Conns(); n != 0 {
		t.Errorf("Conns() = %d on a new engine", n)
	}
}

// TestReadBufferSize checks that one OnData never gets more new bytes
// than the read buffer holds, and that the stream still arrives whole.
func TestReadBufferSize(t *testing.T) {
	const size = 1000
	var maxLen atomic.Int64
	var got bytes.Buffer
	done := make(chan struct{})
	const total = 256 << 10
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		if n := int64(in.Len()); n > maxLen.Load() {
			maxLen.Store(n)
		}
		got.Write(in.Bytes())
		in.Discard(in.Len())
		if got.Len() == total {
			close(done)
		}
		return engine.None
	}
	_, _, peer := etServe(t, h, engine.Options{ReadBufferSize: size}, "tcp")
	go peer.Write(etPattern(total))
	etRecv(t, done, "all bytes")
	if m := maxLen.Load(); m > size {
		t.Errorf("OnData got %d bytes at once with ReadBufferSize %d", m, size)
	}
	if i := etCheckPattern(got.Bytes()); i >= 0 {
		t.Errorf("difference at %d", i)
	}
}
