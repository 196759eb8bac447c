package aio_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// Echo benchmarks: a gale aio server next to a goroutine-per-connection
// std net server, in the same run, driven by the same std net client over
// 127.0.0.1. Only the server differs between the sub-benchmarks of one
// benchmark, whose names have the form Size/Impl for benchstat:
//
//	go test -run '^$' -bench 'Echo|PingPong' -benchtime 2s -count 5 ./aio/ | tee new.txt
//	benchstat new.txt
//
// Client and servers share the process, so allocs/op and B/op count both
// sides; the client is the same for every server.
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

// bxTimeout bounds every client connection of a benchmark, so a broken
// server fails the benchmark instead of hanging it.
const bxTimeout = 2 * time.Minute

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
	return bxServer{"stdnet", func(b *testing.B, ln net.Listener) func() { return bxStartStd(ln, bufSize) }}
}

// BenchmarkEcho64K streams 64 KiB messages over one connection; the client
// writes b.N of them from one goroutine while the benchmark goroutine reads
// the echo back. It ends when b.N × 64 KiB bytes came back.
func BenchmarkEcho64K(b *testing.B) {
	const size = 64 << 10
	servers := []bxServer{bxAIO("aio", size), bxAIO("aio-swap", 0), bxStd(size)}
	for _, s := range servers {
		b.Run("64K/"+s.name, func(b *testing.B) {
			ln := bxListen(b)
			defer s.start(b, ln)()
			bxStream(b, ln.Addr().String(), size)
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
			ln := bxListen(b)
			defer s.start(b, ln)()
			bxRounds(b, ln.Addr().String(), conns, size)
		})
	}
}

// BenchmarkPingPong runs 50 connections in a closed loop of 4-byte
// messages: write, read the echo, repeat. One op is one round trip.
func BenchmarkPingPong(b *testing.B) {
	const conns, size = 50, 4
	for _, s := range []bxServer{bxAIO("aio", 0), bxStd(4 << 10)} {
		b.Run("4B/"+s.name, func(b *testing.B) {
			ln := bxListen(b)
			defer s.start(b, ln)()
			bxPingPong(b, ln.Addr().String(), conns, size)
		})
	}
}

func bxListen(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("net.Listen = %v", err)
	}
	return ln
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

// bxStartStd starts a goroutine-per-connection echo server: each
// connection reads into a bufSize buffer and writes back what it read. (No
// io.Copy: between two *net.TCPConn it splices in the kernel, which is not
// the design being compared.)
func bxStartStd(ln net.Listener, bufSize int) func() {
	var (
		mu     sync.Mutex
		conns  = make(map[net.Conn]struct{})
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				continue
			}
			conns[c] = struct{}{}
			wg.Add(1) // the accept goroutine's count keeps wg above 0
			mu.Unlock()
			go func() {
				defer wg.Done()
				bxStdEcho(c, bufSize)
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
		}
	}()
	return func() {
		ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

func bxStdEcho(c net.Conn, bufSize int) {
	buf := make([]byte, bufSize)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// ---- clients (std net, the same for every server) ----

// bxFill fills msg with a pattern that bxCheck recognises; the first 8
// bytes are left for a sequence number.
func bxFill(msg []byte) {
	for i := range msg {
		msg[i] = byte(i*7 + 3)
	}
}

// bxCheck verifies the echo of message seq cheaply: its sequence number
// (or as much of it as fits) and the pattern bytes in the middle and at
// the end.
func bxCheck(buf []byte, seq uint64) error {
	for i := range min(len(buf), 8) {
		if buf[i] != byte(seq>>(8*i)) {
			return fmt.Errorf("echo of message %d starts with %x", seq, buf[:min(len(buf), 8)])
		}
	}
	for _, i := range [...]int{len(buf) / 2, len(buf) - 1} {
		if i >= 8 && buf[i] != byte(i*7+3) {
			return fmt.Errorf("echo of message %d: byte %d = %#x, want %#x", seq, i, buf[i], byte(i*7+3))
		}
	}
	return nil
}

// bxStamp writes seq, little-endian, into the first bytes of msg (as many
// as fit).
func bxStamp(msg []byte, seq uint64) {
	for i := range min(len(msg), 8) {
		msg[i] = byte(seq >> (8 * i))
	}
}

func bxDial(b *testing.B, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatalf("net.Dial(%s) = %v", addr, err)
	}
	c.SetDeadline(time.Now().Add(bxTimeout))
	return c
}

// bxStream writes b.N messages of size bytes on one connection from a
// second goroutine and reads the echo back with io.ReadFull.
func bxStream(b *testing.B, addr string, size int) {
	c := bxDial(b, addr)
	werr := make(chan error, 1)
	defer func() {
		c.Close() // unblocks the writer if the reader failed
		<-werr
	}()
	n := b.N
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		msg := make([]byte, size)
		bxFill(msg)
		for i := range n {
			bxStamp(msg, uint64(i))
			if _, err := c.Write(msg); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	buf := make([]byte, size)
	for i := range n {
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatalf("reading echo %d of %d: %v", i, n, err)
		}
		if err := bxCheck(buf, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := <-werr; err != nil {
		werr <- nil // for the deferred receive
		b.Fatalf("writing: %v", err)
	}
	werr <- nil
}

// bxGate releases the client goroutines of bxRounds once per round. Open
// installs the next round's channel before closing the current one, so a
// goroutine released by round r that asks for the next channel gets round
// r+1's.
type bxGate struct {
	mu   sync.Mutex
	ch   chan struct{}
	quit bool
}

func (g *bxGate) open(quit bool) {
	g.mu.Lock()
	old := g.ch
	g.ch, g.quit = make(chan struct{}), quit
	g.mu.Unlock()
	close(old)
}

func (g *bxGate) next() (chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch, g.quit
}

// bxErr keeps the first error of many goroutines.
type bxErr struct{ p atomic.Pointer[error] }

func (e *bxErr) set(err error) { e.p.CompareAndSwap(nil, &err) }

func (e *bxErr) get() error {
	if p := e.p.Load(); p != nil {
		return *p
	}
	return nil
}

// bxRounds dials nconns connections once, outside the timed region, with a
// client goroutine each; every round, each goroutine writes size bytes and
// reads the echo back.
func bxRounds(b *testing.B, addr string, nconns, size int) {
	conns := make([]net.Conn, 0, nconns)
	gate := &bxGate{ch: make(chan struct{})}
	first := gate.ch
	var (
		round, exited sync.WaitGroup
		failed        bxErr
	)
	defer func() {
		for _, c := range conns {
			c.(*net.TCPConn).SetLinger(0) // reset: no TIME_WAIT left behind
			c.Close()
		}
		gate.open(true)
		exited.Wait()
	}()
	for range nconns {
		conns = append(conns, bxDial(b, addr))
	}
	for i, c := range conns {
		exited.Add(1)
		go func() {
			defer exited.Done()
			msg, buf := make([]byte, size), make([]byte, size)
			bxFill(msg)
			ch := first
			for r := uint64(0); ; r++ {
				<-ch
				var quit bool
				if ch, quit = gate.next(); quit {
					return
				}
				seq := r<<32 | uint64(i)
				bxStamp(msg, seq)
				if _, err := c.Write(msg); err != nil {
					failed.set(fmt.Errorf("conn %d round %d: write: %v", i, r, err))
				} else if _, err := io.ReadFull(c, buf); err != nil {
					failed.set(fmt.Errorf("conn %d round %d: read: %v", i, r, err))
				} else if err := bxCheck(buf, seq); err != nil {
					failed.set(fmt.Errorf("conn %d: %v", i, err))
				}
				round.Done()
			}
		}()
	}
	run := func() {
		round.Add(nconns)
		gate.open(false)
		round.Wait()
		if err := failed.get(); err != nil {
			b.Fatal(err)
		}
	}
	run() // warm-up: server goroutines, buffers, first-use allocations
	b.SetBytes(int64(nconns * size))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// bxPingPong runs b.N round trips of size-byte messages, spread over
// nconns connections that each run a closed loop.
func bxPingPong(b *testing.B, addr string, nconns, size int) {
	conns := make([]net.Conn, 0, nconns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range nconns {
		conns = append(conns, bxDial(b, addr))
	}
	var (
		wg     sync.WaitGroup
		failed bxErr
	)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i, c := range conns {
		n := b.N / nconns
		if i < b.N%nconns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg, buf := make([]byte, size), make([]byte, size)
			bxFill(msg)
			for k := range n {
				seq := uint64(i)<<24 | uint64(k)
				bxStamp(msg, seq)
				if _, err := c.Write(msg); err != nil {
					failed.set(fmt.Errorf("conn %d: write: %v", i, err))
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					failed.set(fmt.Errorf("conn %d: read: %v", i, err))
					return
				}
				if err := bxCheck(buf, seq); err != nil {
					failed.set(fmt.Errorf("conn %d: %v", i, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.get(); err != nil {
		b.Fatal(err)
	}
}
