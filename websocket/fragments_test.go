package websocket_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// A message of many small fragments is gathered in a buffer that grows
// by doubling: it grew by one fragment at a time, copying the whole at
// each, so its allocations grew with the square of its length (a 256 KiB
// message in 64-byte fragments allocated about 500 MB; 4 MiB took 20 s,
// and Autobahn's cases 9.3.1 and 9.4.1 timed out).
func TestSmallFragments(t *testing.T) { backendtest.Run(t, testSmallFragments) }

func testSmallFragments(t *testing.T) {
	const size, frag = 256 << 10, 64
	h, url := limitServer(t, websocket.Options{}, nil)
	rc, _ := hostile(t, h, url)
	var frames []byte
	for off := 0; off < size; off += frag {
		op := byte(0) // continuation
		if off == 0 {
			op = 0x2
		}
		if off+frag == size {
			op |= 0x80
		}
		frames = append(frames, rawFrame(op, true, make([]byte, frag))...)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := rc.nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	f, err := rc.read()
	runtime.ReadMemStats(&after)
	if want := fmt.Sprintf("got %d", size); err != nil || string(f.payload) != want {
		t.Fatalf("reply %q, %v; want %q", f.payload, err, want)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*size {
		t.Errorf("receiving a %d-byte message in %d-byte fragments allocated %d bytes, want at most %d", size, frag, got, 32*size)
	}
}
