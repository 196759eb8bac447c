package benchrun

import (
	"bytes"
	"fmt"
	"io"
	"net"
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
// the writer half-closes the connection and the reader reads to end of
// file, so it knows when the last echoed byte has arrived.
func stream(ch *child, _ Case, o Options) (result, error) {
	c, err := net.Dial("tcp", ch.addr)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	const chunk = streamChunk
	var sent int64
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		buf := make([]byte, chunk)
		for {
			select {
			case <-stop:
				werr <- c.(*net.TCPConn).CloseWrite()
				return
			default:
			}
			for i := 0; i < chunk; {
				i += copy(buf[i:], patternAt(sent+int64(i), min(chunk-i, patternPeriod)))
			}
			if _, err := c.Write(buf); err != nil {
				werr <- err
				return
			}
			sent += chunk
		}
	}()
	start := time.Now()
	deadline := start.Add(o.Duration)
	buf := make([]byte, min(chunk, patternPeriod))
	var got int64
	for {
		if time.Now().After(deadline) {
			closeOnce(stop)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if !bytes.Equal(buf[:n], patternAt(got, n)) {
			return result{}, fmt.Errorf("stream: the %d bytes echoed at offset %d differ from those sent", n, got)
		}
		got += int64(n)
		if err == io.EOF && isClosed(stop) {
			break
		}
		if err != nil {
			closeOnce(stop)
			return result{}, fmt.Errorf("stream: read after %d bytes: %w", got, err)
		}
	}
	elapsed := time.Since(start)
	if err := <-werr; err != nil {
		return result{}, err
	}
	if got != sent { // sent is safe to read: the writer has finished
		return result{}, fmt.Errorf("stream: %d bytes echoed, %d sent", got, sent)
	}
	return result{value: float64(got) / elapsed.Seconds() / 1e6, msgs: got / chunk, bytes: got, elapsed: elapsed}, nil
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
