package websocket_test

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// A connection the server fails while its peer still sends (a message
// past ReadLimit, here) delivers what it wrote before, and its close
// frame with 1009, then the end of the stream: the server closes with the
// peer's bytes unread, and a plain close(2) would reset the connection,
// discarding the output still in flight (the engine's graceful close
// shuts the sending side down and lingers instead).
func TestFailDelivers(t *testing.T) { backendtest.Run(t, testFailDelivers) }

func testFailDelivers(t *testing.T) {
	const big = 1 << 20
	h, url := limitServer(t, websocket.Options{}, nil)
	h.flood.Store(big)
	for round := range 3 {
		rc, sc := hostile(t, h, url)
		rc.frame(0x81, true, []byte("flood")) // the server answers with a MiB
		writing := make(chan struct{})
		go func() { // then a message past ReadLimit, sent on and on
			defer close(writing)
			hdr := []byte{0x82, 0x80 | 127, 0, 0, 0, 0, 0x10, 0, 0, 0, 1, 2, 3, 4} // binary, 256 MiB, masked
			if _, err := rc.nc.Write(hdr); err != nil {
				return
			}
			chunk := make([]byte, 32<<10)
			for {
				if _, err := rc.nc.Write(chunk); err != nil {
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		rc.r = bufio.NewReaderSize(slowReader{rc.r}, 16)
		f, err := rc.read()
		if err != nil || f.op() != 2 || len(f.payload) != big {
			t.Fatalf("round %d: read op %d, %d bytes, %v; want the %d-byte binary message", round, f.op(), len(f.payload), err, big)
		}
		rc.expectClose(1009)
		rc.nc.Close() // ends the server's linger, and the writer
		select {
		case <-writing:
		case <-time.After(testTimeout):
			t.Fatal("the writer goes on after the connection closed")
		}
		closeOf(t, sc, servedWithin)
	}
}

// slowReader reads in small pieces with a pause between them, as a peer
// on a slower network reads: the server's output backs up in the
// kernels' buffers.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(20 * time.Microsecond)
	return s.r.Read(p[:min(len(p), 8<<10)])
}
