//go:build !race

package engine_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestEngineEchoAllocs checks that a steady-state echo round allocates
// nothing: the client (std net, buffers allocated up front, in the test's
// goroutine) writes 4 bytes and reads them back while the engine server
// (ebEcho) echoes them. testing.AllocsPerRun counts the whole process, so
// the engine's loops are included.
func TestEngineEchoAllocs(t *testing.T) { backendtest.Run(t, testEngineEchoAllocs) }

func testEngineEchoAllocs(t *testing.T) {
	backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
	addr, stop := ebStartEngine(t)
	t.Cleanup(stop)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("net.Dial(tcp, %s) = %v, want nil", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute)) // once: setting it in a round is the client's cost
	msg, buf := []byte("ping"), make([]byte, 4)
	round := func() {
		if _, err := nc.Write(msg); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if _, err := io.ReadFull(nc, buf); err != nil {
			t.Fatalf("ReadFull = %v, want nil", err)
		}
		if !bytes.Equal(buf, msg) {
			t.Fatalf("echo = %q, want %q", buf, msg)
		}
	}
	for range 100 { // warm-up: the loops' slices reach their steady size
		round()
	}
	if got := testing.AllocsPerRun(1000, round); got != 0 {
		t.Errorf("AllocsPerRun(echo round) = %v, want 0", got)
	}
}
