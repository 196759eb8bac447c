package benchtest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Timeout is the deadline of every client connection, so a broken server
// fails the benchmark instead of hanging it. It is far above any
// benchmark's run time.
const Timeout = 2 * time.Minute

// Fill fills msg with the pattern Check expects. The first 8 bytes are
// left for a sequence number (Stamp).
func Fill(msg []byte) {
	for i := range msg {
		msg[i] = pattern(i)
	}
}

// pattern is byte i of every message past its sequence number.
func pattern(i int) byte { return byte(i*13 + 5) }

// Stamp writes seq, little-endian, into the first bytes of msg (as many
// as fit), so the echo shows which message it is.
func Stamp(msg []byte, seq uint64) {
	for i := range min(len(msg), 8) {
		msg[i] = byte(seq >> (8 * i))
	}
}

// Check verifies a few bytes of buf, the echo of message seq (Fill then
// Stamp): its sequence number, as much of it as fits, and the pattern in
// the middle and at the end. Not every byte is compared: the check must
// stay cheap next to the I/O it measures, and a mixed-up or torn message
// shows in these bytes anyway.
func Check(buf []byte, seq uint64) error {
	// Where the two original copies differed, this reports the byte and
	// the value wanted (the engine version) rather than the first 8 bytes.
	for i := range min(len(buf), 8) {
		if want := byte(seq >> (8 * i)); buf[i] != want {
			return fmt.Errorf("echo of message %d: byte %d = %#x, want %#x", seq, i, buf[i], want)
		}
	}
	for _, i := range [...]int{len(buf) / 2, len(buf) - 1} {
		if want := pattern(i); i >= 8 && buf[i] != want {
			return fmt.Errorf("echo of message %d: byte %d = %#x, want %#x", seq, i, buf[i], want)
		}
	}
	return nil
}

// Dial connects to the TCP server at addr with a deadline of Timeout, or
// fails tb. It returns *net.TCPConn so that callers can reset connections
// with SetLinger(0).
func Dial(tb testing.TB, addr string) *net.TCPConn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("net.Dial(tcp, %s) = %v, want nil", addr, err)
	}
	c.SetDeadline(time.Now().Add(Timeout))
	return c.(*net.TCPConn)
}

// firstErr keeps the first error of many goroutines; the others are
// usually its consequences.
type firstErr struct{ p atomic.Pointer[error] }

func (f *firstErr) set(err error) { f.p.CompareAndSwap(nil, &err) }

func (f *firstErr) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}

// Stream measures throughput over one connection to addr: a second
// goroutine writes b.N messages of size bytes while the benchmark
// goroutine reads the echo back with io.ReadFull and checks each. The
// writer never waits for the echo, so the server's reads and writes
// overlap as they would in a proxy. It returns once the writer goroutine
// has exited and the connection is closed.
func Stream(b *testing.B, addr string, size int) {
	c := Dial(b, addr)
	werr := make(chan error, 1)
	// writing says the writer's result is still to be received. Of the two
	// original copies this is the more careful one: the deferred receive
	// cannot block when no writer ran or its result was already taken.
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
		Fill(msg)
		for i := range n {
			Stamp(msg, uint64(i))
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
		if err := Check(buf, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	writing = false
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
}

// PingPong measures latency under load: b.N round trips of size-byte
// messages, spread over nconns connections to addr that each run a closed
// loop (write, read the echo, repeat). One op is one round trip. The
// connections are dialed before the timer starts and closed on return.
func PingPong(b *testing.B, addr string, nconns, size int) {
	conns := make([]*net.TCPConn, 0, nconns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range nconns {
		conns = append(conns, Dial(b, addr))
	}
	var (
		wg     sync.WaitGroup
		failed firstErr
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
			if err := pingPong(c, n, uint64(i)<<24, size); err != nil {
				failed.set(fmt.Errorf("conn %d: %v", i, err))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.get(); err != nil {
		b.Fatal(err)
	}
}

// pingPong runs n round trips of size bytes on c; message k carries the
// sequence number base|k.
func pingPong(c net.Conn, n int, base uint64, size int) error {
	msg, buf := make([]byte, size), make([]byte, size)
	Fill(msg)
	for k := range n {
		seq := base | uint64(k)
		Stamp(msg, seq)
		if _, err := c.Write(msg); err != nil {
			return fmt.Errorf("write: %v", err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return fmt.Errorf("read: %v", err)
		}
		if err := Check(buf, seq); err != nil {
			return err
		}
	}
	return nil
}
