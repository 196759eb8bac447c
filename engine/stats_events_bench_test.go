package engine

import (
	"io"
	"net"
	"syscall"
	"testing"
)

// BenchmarkEventCounters measures what the counters of stats_events.go
// cost per event, on one goroutine as on the loop: a deadline, a close
// with a clean end and with a peer's reset (the errors.Is walks of
// countClose), and a handshake's begin and end.
func BenchmarkEventCounters(b *testing.B) {
	lp := &eloop{}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	b.Run("Deadline", func(b *testing.B) {
		for b.Loop() {
			lp.stats.ev.countDeadline(ErrReadDeadline)
		}
	})
	b.Run("CloseEOF", func(b *testing.B) {
		for b.Loop() {
			lp.countClose(io.EOF)
		}
	})
	b.Run("CloseReset", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lp.countClose(reset)
		}
	})
	b.Run("Handshake", func(b *testing.B) {
		t, hs := &tlsState{}, &handshake{}
		for b.Loop() {
			t.hs = hs
			lp.countHandshake(hs)
			t.endHandshake()
		}
	})
}
