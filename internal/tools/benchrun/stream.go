package benchrun

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// patternPeriod is prime, so the pattern never lines up with write sizes.
const patternPeriod = 65521

// patternTable holds two periods of the stream pattern, so that the bytes
// at any offset are one slice: patternAt(off, n) for n <= patternPeriod.
var patternTable = func() []byte {
	t := make([]byte, 2*patternPeriod)
	x := uint32(2463534242)
	for i := range patternPeriod {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		t[i] = byte(x)
	}
	copy(t[patternPeriod:], t[:patternPeriod])
	return t
}()

// patternAt returns the n pattern bytes at stream offset off.
func patternAt(off int64, n int) []byte {
	i := int(off % patternPeriod)
	return patternTable[i : i+n]
}

// stream sends 64 KiB writes over one connection for o.Duration while a
// second goroutine reads the echo back and checks every byte. At the end
// the writer reports how much it sent and the reader reads until it has
// all of it back. The connection is not half-closed: several peers treat
// a FIN as a full close and drop the echo still to be written. Over TLS
// (tls-stream) the writes and reads are crypto/tls's, on the same
// connection at once.
func stream(ch *Child, cs Case, o Options) (result, error) {
	c, err := dialerFor(cs)(ch.Addr())
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	if cs.TLS() {
		// A TLS 1.3 client's handshake ends before the server's, which
		// still has the client's Finished to read. One echo first waits
		// for the server's end, so that the stream measures the record
		// layer alone, not the handshake.
		if err := echoOnce(c, 1, 0); err != nil {
			return result{}, fmt.Errorf("tls-stream: the first echo: %w", err)
		}
	}
	stop := make(chan struct{})
	total := make(chan writerEnd, 1)
	go streamWriter(c, stop, total)
	start := time.Now()
	deadline := start.Add(o.Duration)
	buf := make([]byte, min(streamChunk, patternPeriod))
	var got int64
	sent := int64(-1) // unknown until the writer stops
	progress := start
	for got != sent {
		if sent < 0 && time.Now().After(deadline) {
			closeOnce(stop)
		}
		if sent < 0 && isClosed(stop) {
			select {
			case end := <-total:
				if end.err != nil {
					return result{}, fmt.Errorf("stream: write after %d bytes: %w", end.sent, end.err)
				}
				sent = end.sent
				continue
			default:
			}
		}
		// Once stopped, read in short slices: the writer's total may come
		// after the last byte, and must not wait behind a blocked read.
		wait := 10 * time.Second
		if isClosed(stop) && sent < 0 {
			wait = 20 * time.Millisecond
		}
		c.SetReadDeadline(time.Now().Add(wait))
		n, err := c.Read(buf)
		if !bytes.Equal(buf[:n], patternAt(got, n)) {
			return result{}, fmt.Errorf("stream: the %d bytes echoed at offset %d differ from those sent", n, got)
		}
		got += int64(n)
		if n > 0 {
			progress = time.Now()
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Since(progress) < 10*time.Second {
			continue
		}
		if err != nil {
			closeOnce(stop)
			return result{}, fmt.Errorf("stream: read after %d bytes: %w", got, err)
		}
		if sent >= 0 && got > sent {
			return result{}, fmt.Errorf("stream: %d bytes echoed, %d sent", got, sent)
		}
	}
	elapsed := time.Since(start)
	return result{value: float64(got) / elapsed.Seconds() / 1e6, msgs: got / streamChunk, bytes: got, elapsed: elapsed}, nil
}

// writerEnd is what the stream's writer reports when it stops.
type writerEnd struct {
	sent int64
	err  error
}

// streamWriter writes the pattern in 64 KiB writes until stop closes or a
// write fails, then reports the bytes written.
func streamWriter(c net.Conn, stop chan struct{}, total chan<- writerEnd) {
	buf := make([]byte, streamChunk)
	var sent int64
	for !isClosed(stop) {
		for i := 0; i < streamChunk; {
			i += copy(buf[i:], patternAt(sent+int64(i), min(streamChunk-i, patternPeriod)))
		}
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Write(buf)
		sent += int64(n)
		if err != nil {
			total <- writerEnd{sent, err}
			return
		}
	}
	total <- writerEnd{sent, nil}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
