package engine_test

import (
	"net"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/benchtest"
)

// Echo benchmarks: an engine echo server (default Options) next to a
// goroutine-per-connection std net server, in the same run, driven by the
// same std net client over 127.0.0.1. Only the server differs between the
// sub-benchmarks of one benchmark, whose names have the form Size/Impl for
// benchstat:
//
//	go test -run '^$' -bench 'Engine' -benchtime 2s -count 6 ./engine/ | tee new.txt
//	benchstat new.txt
//
// The client and the std net server are internal/testkit/benchtest's, shared with
// the aio benchmarks. Client and server share the process, so allocs/op
// and B/op count both sides; the client is the same for every server.
// Every sub-benchmark starts its own server and stops it, with every
// connection closed, before the next one starts; a descriptor left open
// fails the benchmark.

// ebEcho is the engine echo server's handler: it writes back what it gets.
type ebEcho struct{ engine.BaseHandler }

func (ebEcho) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write(in.Bytes())
	in.Discard(in.Len())
	return engine.None
}

// ebServer names an echo server; start runs one on a loopback port and
// returns its address and the function that stops it, which returns once
// every connection and descriptor of the server is closed.
type ebServer struct {
	name  string
	start func(tb testing.TB) (addr string, stop func())
}

// ebServers returns the servers compared: the engine, and std net reading
// into a stdBuf-byte buffer per connection.
func ebServers(stdBuf int) []ebServer {
	return []ebServer{
		{"engine", ebStartEngine},
		{"stdnet", func(tb testing.TB) (string, func()) { return benchtest.ListenStdEcho(tb, stdBuf) }},
	}
}

// BenchmarkEngineEcho64K streams 64 KiB messages over one connection: a
// client goroutine writes b.N of them while the benchmark goroutine reads
// the echo back with io.ReadFull and checks a few bytes of each.
func BenchmarkEngineEcho64K(b *testing.B) {
	const size = 64 << 10
	for _, s := range ebServers(size) {
		b.Run("64K/"+s.name, func(b *testing.B) {
			defer ebCheckFDs(b)()
			addr, stop := s.start(b)
			defer stop()
			benchtest.Stream(b, addr, size)
		})
	}
}

// BenchmarkEnginePingPong runs 50 connections in a closed loop of 4-byte
// messages: write, read the echo, repeat. One op is one round trip.
func BenchmarkEnginePingPong(b *testing.B) {
	const conns, size = 50, 4
	for _, s := range ebServers(4 << 10) {
		b.Run("4B/"+s.name, func(b *testing.B) {
			defer ebCheckFDs(b)()
			addr, stop := s.start(b)
			defer stop()
			benchtest.PingPong(b, addr, conns, size)
		})
	}
}

// BenchmarkEngineEcho8K runs rounds over 8,192 connections, dialed before
// the timer starts: in each round every connection writes 1 KiB and reads
// it back. One op is one round. Client and server descriptors together
// (16,384) stay under the 20,000 a process may open here.
func BenchmarkEngineEcho8K(b *testing.B) {
	const conns, size = 8192, 1 << 10
	for _, s := range ebServers(4 << 10) {
		b.Run("8K/"+s.name, func(b *testing.B) {
			defer ebCheckFDs(b)()
			addr, stop := s.start(b)
			defer stop()
			benchtest.Rounds(b, addr, conns, size)
		})
	}
}

// ---- servers ----

// ebStartEngine starts an engine echo server with the default Options.
// stop stops the engine at once (its clients are closed by then) and
// checks that no connection survived.
func ebStartEngine(tb testing.TB) (string, func()) {
	tb.Helper()
	e, err := engine.New(ebEcho{}, engine.Options{})
	if err != nil {
		tb.Fatalf("engine.New = %v, want nil", err)
	}
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.Stop()
		tb.Fatalf("Listen(tcp, 127.0.0.1:0) = %v, want nil", err)
	}
	if err := e.Start(); err != nil {
		e.Stop()
		tb.Fatalf("Start() = %v, want nil", err)
	}
	return addr.String(), func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("Stop() = %v, want nil", err)
		}
		if n := e.Conns(); n != 0 {
			tb.Errorf("Conns() after Stop = %d, want 0", n)
		}
	}
}

// ---- descriptor accounting ----

var ebNetInit sync.Once

// ebCheckFDs counts the process's open descriptors and returns a function
// that fails tb if more are open when it runs: call it first, defer the
// result, so it runs after the server's stop and the clients' close. The
// runtime's own poller descriptors are created before the first count.
// Only Linux has /proc/self/fd; elsewhere it checks nothing.
func ebCheckFDs(tb testing.TB) func() {
	if runtime.GOOS != "linux" {
		return func() {}
	}
	ebNetInit.Do(func() {
		if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			ln.Close()
		}
	})
	before := ebFDs(tb)
	return func() {
		if after := ebFDs(tb); after != before {
			tb.Errorf("open descriptors after the sub-benchmark = %d, want %d (as before it)", after, before)
		}
	}
}

func ebFDs(tb testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatalf("ReadDir(/proc/self/fd) = %v, want nil", err)
	}
	return len(ents)
}
