package engine_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
	"golang.org/x/sys/unix"
)

// TestTCPKeepAlive checks that Options.TCPKeepAlive is applied to accepted
// connections: a period turns keep-alive on with that idle time, a
// negative value turns it off. Read on the descriptor Detach hands back,
// which keeps the socket's options.
func TestTCPKeepAlive(t *testing.T) { backendtest.Run(t, testTCPKeepAlive) }

func testTCPKeepAlive(t *testing.T) {
	cases := []struct {
		period time.Duration
		on     int
		idle   int // seconds; 0: not checked
	}{
		{37 * time.Second, 1, 37},
		{-1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.period.String(), func(t *testing.T) {
			h := etNewHandler()
			_, c, _ := etServe(t, h, engine.Options{TCPKeepAlive: tc.period}, "tcp")
			nc, err := c.Detach()
			if err != nil {
				t.Fatalf("Detach() = %v", err)
			}
			defer nc.Close()
			rc, err := nc.(syscall.Conn).SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var on, idle int
			rc.Control(func(fd uintptr) {
				on, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
				idle, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
			})
			if on != tc.on {
				t.Errorf("SO_KEEPALIVE = %d with TCPKeepAlive %v, want %d", on, tc.period, tc.on)
			}
			if tc.idle > 0 && idle != tc.idle {
				t.Errorf("TCP_KEEPIDLE = %d with TCPKeepAlive %v, want %d", idle, tc.period, tc.idle)
			}
		})
	}
}
