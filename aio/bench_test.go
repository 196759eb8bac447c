package aio_test

import (
	"net"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/benchtest"
)

// Echo benchmarks: a gale aio server next to a goroutine-per-connection
// std net server, in the same run, driven by the same std net client over
// 127.0.0.1. Only the server differs between the sub-benchmarks of one
// benchmark, whose names have the form Size/Impl for benchstat:
//
//	go test -run '^$' -bench 'Echo|PingPong' -benchtime 2s -count 5 ./aio/ | tee new.txt
//	benchstat new.txt
//
// The client and the std net server are internal/testkit/benchtest's, shared with
// the engine benchmarks. Client and servers share the process, so
// allocs/op and B/op count both sides; the client is the same for every
// server.
//
// GALE_AIO_LOOPS=n sets Config.Loops of the aio servers (default: the
// watcher's, one per GOMAXPROCS), to compare loop counts with benchstat:
//
//	GALE_AIO_LOOPS=1 go test -run '^$' -bench 'Echo8K|PingPong' ./aio/ > loops1.txt
//	GALE_AIO_LOOPS=2 go test -run '^$' -bench 'Echo8K|PingPong' ./aio/ > loops2.txt
//	benchstat loops1.txt loops2.txt
//
// On a 2-core machine with client and server in one process (November
// 2026, 6 interleaved runs), Loops 2 made Echo8K 29% faster and PingPong
// 19% slower than Loops 1; Echo64K did not change.

// bxServer names an echo server; start runs it on ln and returns the
// function that stops it: it closes ln and every connection and waits for
// the server's goroutines, so no descriptor outlives the sub-benchmark.
type bxServer struct {
	name  string
	start func(b *testing.B, ln net.Listener) (stop func())
}

// bxAIO is an aio echo server reading into a bufSize buffer per
// connection, or into the swap buffer when bufSize is 0.
func bxAIO(name string, bufSize int) bxServer {
	return bxServer{name, func(b *testing.B, ln net.Listener) func() { return bxStartAIO(b, ln, bufSize) }}
}

// bxStd is a goroutine-per-connection std net echo server.
func bxStd(bufSize int) bxServer {
	return bxServer{"stdnet", func(b *testing.B, ln net.Listener) func() { return benchtest.StartStdEcho(ln, bufSize) }}
}

// BenchmarkEcho64K streams 64 KiB messages over one connection; the client
// writes b.N of them from one goroutine while the benchmark goroutine reads
// the echo back. It ends when b.N × 64 KiB bytes came back.
func BenchmarkEcho64K(b *testing.B) {
	const size = 64 << 10
	servers := []bxServer{bxAIO("aio", size), bxAIO("aio-swap", 0), bxStd(size)}
	for _, s := range servers {
		b.Run("64K/"+s.name, func(b *testing.B) {
			ln := benchtest.Listen(b)
			defer s.start(b, ln)()
			benchtest.Stream(b, ln.Addr().String(), size)
		})
	}
}

// BenchmarkEcho8K runs rounds over 8,192 connections: in each round every
// connection writes 1 KiB and reads it back. One op is one round.
func BenchmarkEcho8K(b *testing.B) {
	const conns, size = 8192, 1 << 10
	// The aio server reads into the swap buffer, as a server of many
	// connections would.
	for _, s := range []bxServer{bxAIO("aio", 0), bxStd(size)} {
		b.Run("8K/"+s.name, func(b *testing.B) {
			ln := benchtest.Listen(b)
			defer s.start(b, ln)()
			benchtest.Rounds(b, ln.Addr().String(), conns, size)
		})
	}
}

// BenchmarkPingPong runs 50 connections in a closed loop of 4-byte
// messages: write, read the echo, repeat. One op is one round trip.
func BenchmarkPingPong(b *testing.B) {
	const conns, size = 50, 4
	for _, s := range []bxServer{bxAIO("aio", 0), bxStd(4 << 10)} {
		b.Run("4B/"+s.name, func(b *testing.B) {
			ln := benchtest.Listen(b)
			defer s.start(b, ln)()
			benchtest.PingPong(b, ln.Addr().String(), conns, size)
		})
	}
}

// bxLoops returns Config.Loops for the aio servers: $GALE_AIO_LOOPS, or 0
// for the watcher's default (one loop per GOMAXPROCS).
func bxLoops(b *testing.B) int {
	s := os.Getenv("GALE_AIO_LOOPS")
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("GALE_AIO_LOOPS = %q, want a positive integer", s)
	}
	return n
}

// ---- servers ----

// bxAIOConn is one connection of an aio echo server; it travels as the
// context of the connection's requests, which also keeps the caller's
// net.Conn reachable while a request is pending.
type bxAIOConn struct {
	buf  []byte
	swap bool // reads go to the swap buffer; buf holds the copy being written
}

// bxStartAIO starts an aio echo server. With bufSize > 0 each connection
// reads into its own bufSize buffer and writes that buffer back: Read,
// Write, Read. With bufSize 0 it reads with a nil buffer (the watcher's
// swap buffer).
//
// Swap data is valid only until the next WaitIO, but a Write keeps using
// its buffer until the write completes, which is always after a later
// WaitIO: writing res.Buffer straight back would let the loop receive
// another connection's bytes into it mid-write. So the server copies the
// swap bytes into the connection's own buffer and writes the copy. The
// copy is safe to reuse at the next read completion because each
// connection has one request pending at a time: the next Read is submitted
// only when the Write completed. The buffer grows to the largest read and
// is then reused, so the steady state allocates nothing.
func bxStartAIO(b *testing.B, ln net.Listener, bufSize int) func() {
	w, err := aio.NewWatcherConfig(aio.Config{Loops: bxLoops(b)})
	if err != nil {
		ln.Close()
		b.Fatalf("NewWatcherConfig = %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			st := &bxAIOConn{swap: bufSize == 0}
			if !st.swap {
				st.buf = make([]byte, bufSize)
			}
			if err := w.Read(st, c, st.readBuf()); err != nil {
				c.Close() // the watcher is closed: the benchmark is over
			}
		}
	}()
	go func() {
		defer wg.Done()
		bxAIOEcho(w)
	}()
	return func() {
		ln.Close()
		w.Close()
		wg.Wait()
	}
}

func (st *bxAIOConn) readBuf() []byte {
	if st.swap {
		return nil
	}
	return st.buf[:cap(st.buf)]
}

// bxAIOEcho is the server's WaitIO loop; it returns when w is closed.
func bxAIOEcho(w *aio.Watcher) {
	for {
		results, err := w.WaitIO()
		if err != nil {
			return
		}
		for _, res := range results {
			st := res.Context.(*bxAIOConn)
			if res.Error != nil {
				w.Free(res.Conn)
				continue
			}
			switch res.Operation {
			case aio.OpRead:
				data := res.Buffer[:res.Size]
				if res.IsSwapBuffer {
					st.buf = append(st.buf[:0], data...)
					data = st.buf
				}
				w.Write(st, res.Conn, data)
			case aio.OpWrite:
				w.Read(st, res.Conn, st.readBuf())
			}
		}
	}
}
