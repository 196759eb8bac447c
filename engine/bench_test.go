package engine_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
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
// Client and server share the process, so allocs/op and B/op count both
// sides; the client is the same for every server. Every sub-benchmark
// starts its own server and stops it, with every connection closed, before
// the next one starts; a descriptor left open fails the benchmark.

// ebTimeout bounds every client connection, so a broken server fails the
// benchmark instead of hanging it.
const ebTimeout = 2 * time.Minute

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
		{"stdnet", func(tb testing.TB) (string, func()) { return ebStartStd(tb, stdBuf) }},
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
			ebStream(b, addr, size)
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
			ebPingPong(b, addr, conns, size)
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
			ebRounds(b, addr, conns, size)
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

// ebStartStd starts a goroutine-per-connection std net echo server: each
// connection reads into a bufSize buffer and writes back what it read. (No
// io.Copy: between two *net.TCPConn it splices in the kernel, which is not
// the design being compared.) stop closes the listener and every
// connection and waits for the server's goroutines.
func ebStartStd(tb testing.TB, bufSize int) (string, func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("net.Listen = %v, want nil", err)
	}
	var (
		mu     sync.Mutex
		conns  = make(map[net.Conn]struct{})
		closed bool
		wg     sync.WaitGroup
	)
	serve := func(c net.Conn) {
		defer wg.Done()
		buf := make([]byte, bufSize)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		mu.Lock()
		delete(conns, c)
		mu.Unlock()
		c.Close()
	}
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
			wg.Add(1) // the accept goroutine's own count keeps wg above 0
			mu.Unlock()
			go serve(c)
		}
	}()
	return ln.Addr().String(), func() {
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

// ---- clients (std net, the same for every server) ----

// ebFill fills msg with the pattern ebCheck expects; the first 8 bytes are
// for a sequence number (ebStamp).
func ebFill(msg []byte) {
	for i := range msg {
		msg[i] = byte(i*13 + 5)
	}
}

// ebStamp writes seq, little-endian, into the first bytes of msg (as many
// as fit).
func ebStamp(msg []byte, seq uint64) {
	for i := range min(len(msg), 8) {
		msg[i] = byte(seq >> (8 * i))
	}
}

// ebCheck verifies a few bytes of the echo of message seq: its sequence
// number (as much of it as fits) and the pattern in the middle and at the
// end. Every byte is not compared: the check must stay cheap next to the
// I/O it measures.
func ebCheck(buf []byte, seq uint64) error {
	for i := range min(len(buf), 8) {
		if buf[i] != byte(seq>>(8*i)) {
			return fmt.Errorf("echo of message %d: byte %d = %#x, want %#x", seq, i, buf[i], byte(seq>>(8*i)))
		}
	}
	for _, i := range [...]int{len(buf) / 2, len(buf) - 1} {
		if want := byte(i*13 + 5); i >= 8 && buf[i] != want {
			return fmt.Errorf("echo of message %d: byte %d = %#x, want %#x", seq, i, buf[i], want)
		}
	}
	return nil
}

func ebDial(b *testing.B, addr string) *net.TCPConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatalf("net.Dial(tcp, %s) = %v, want nil", addr, err)
	}
	c.SetDeadline(time.Now().Add(ebTimeout))
	return c.(*net.TCPConn)
}

// ebFirstErr keeps the first error of many goroutines.
type ebFirstErr struct{ p atomic.Pointer[error] }

func (f *ebFirstErr) set(err error) { f.p.CompareAndSwap(nil, &err) }

func (f *ebFirstErr) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}

// ebStream writes b.N messages of size bytes on one connection from a
// second goroutine while the caller reads the echo back with io.ReadFull.
func ebStream(b *testing.B, addr string, size int) {
	c := ebDial(b, addr)
	werr := make(chan error, 1)
	writing := false
	defer func() {
		c.Close() // unblocks the writer if the reader failed
		if writing {
			<-werr
		}
	}()
	n := b.N
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	writing = true
	go func() {
		msg := make([]byte, size)
		ebFill(msg)
		for i := range n {
			ebStamp(msg, uint64(i))
			if _, err := c.Write(msg); err != nil {
				werr <- fmt.Errorf("writing message %d of %d: %v", i, n, err)
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
		if err := ebCheck(buf, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	writing = false
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
}

// ebPingPong runs b.N round trips of size-byte messages, spread over
// nconns connections that each run a closed loop.
func ebPingPong(b *testing.B, addr string, nconns, size int) {
	conns := make([]*net.TCPConn, 0, nconns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range nconns {
		conns = append(conns, ebDial(b, addr))
	}
	var (
		wg     sync.WaitGroup
		failed ebFirstErr
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
			ebFill(msg)
			for k := range n {
				seq := uint64(i)<<24 | uint64(k)
				ebStamp(msg, seq)
				if _, err := c.Write(msg); err != nil {
					failed.set(fmt.Errorf("conn %d: write: %v", i, err))
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					failed.set(fmt.Errorf("conn %d: read: %v", i, err))
					return
				}
				if err := ebCheck(buf, seq); err != nil {
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

// ebGate starts the rounds of ebRounds. open installs the next round's
// channel before closing the current one, so a client released by round r
// that asks for its next channel gets round r+1's.
type ebGate struct {
	mu   sync.Mutex
	ch   chan struct{}
	quit bool
}

func (g *ebGate) open(quit bool) {
	g.mu.Lock()
	cur := g.ch
	g.ch, g.quit = make(chan struct{}), quit
	g.mu.Unlock()
	close(cur)
}

func (g *ebGate) next() (chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch, g.quit
}

// ebRounds dials nconns connections, each with a client goroutine, before
// the timed loop; in every round each client writes size bytes and reads
// the echo back. One warm-up round runs untimed.
func ebRounds(b *testing.B, addr string, nconns, size int) {
	conns := make([]*net.TCPConn, 0, nconns)
	gate := &ebGate{ch: make(chan struct{})}
	first := gate.ch
	var (
		round, clients sync.WaitGroup
		failed         ebFirstErr
	)
	defer func() {
		for _, c := range conns {
			c.SetLinger(0) // reset: no TIME_WAIT left for the next run
			c.Close()
		}
		gate.open(true)
		clients.Wait()
	}()
	for range nconns {
		conns = append(conns, ebDial(b, addr))
	}
	for i, c := range conns {
		clients.Add(1)
		go func() {
			defer clients.Done()
			msg, buf := make([]byte, size), make([]byte, size)
			ebFill(msg)
			ch := first
			for r := uint64(0); ; r++ {
				<-ch
				var quit bool
				if ch, quit = gate.next(); quit {
					return
				}
				seq := r<<32 | uint64(i)
				ebStamp(msg, seq)
				if _, err := c.Write(msg); err != nil {
					failed.set(fmt.Errorf("conn %d round %d: write: %v", i, r, err))
				} else if _, err := io.ReadFull(c, buf); err != nil {
					failed.set(fmt.Errorf("conn %d round %d: read: %v", i, r, err))
				} else if err := ebCheck(buf, seq); err != nil {
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
	run() // warm-up: goroutine stacks, buffers, first-use allocations
	b.SetBytes(int64(nconns * size))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}
