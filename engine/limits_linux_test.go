package engine_test

// The sub-tests of TestLimits that need Linux: the socket options they
// read, the open-file limit they lower, the raw sockets they connect.

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/engine"
)

// limKeepAliveSecs is package net's keep-alive period, which accepted
// connections get by default: probes after 15 s of silence, then every
// 15 s.
const limKeepAliveSecs = 15

// testLimitsKeepAlive: a peer that vanishes from an idle connection (its
// host gone, or a middlebox that forgot the flow: no FIN, no RST) is
// found by TCP keep-alive. Accepted connections have package net's
// period by default, so the kernel probes after 15 s of silence and every
// 15 s after, and ends the connection after tcp_keepalive_probes
// unanswered ones (9 by default: 150 s), as it does for net/http. Before,
// accepted connections had no keep-alive unless Options.TCPKeepAlive was
// set, and a vanished peer held its connection for ever. Loopback peers
// cannot vanish, so the test reads the options the kernel acts on, from
// the descriptor Detach hands back; and it checks that a negative
// TCPKeepAlive still turns keep-alive off.
func testLimitsKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		name      string
		period    int // Options.TCPKeepAlive, in seconds
		on, secs  int // SO_KEEPALIVE, TCP_KEEPIDLE and TCP_KEEPINTVL wanted
		checkSecs bool
	}{
		{"default", 0, 1, limKeepAliveSecs, true},
		{"off", -1, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := etEchoHandler()
			o := engine.Options{Loops: 1, TCPKeepAlive: limSeconds(tc.period)}
			e := etStart(t, h, o)
			a := etListen(t, e, "tcp")
			good := etDial(t, a)
			etOpened(t, h)
			etDial(t, a) // the peer that could vanish
			c := etOpened(t, h)
			nc, err := c.Detach()
			if err != nil {
				t.Fatalf("Detach() = %v", err)
			}
			defer nc.Close()
			rc, err := nc.(syscall.Conn).SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var on, idle, intvl int
			rc.Control(func(fd uintptr) {
				on, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
				idle, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
				intvl, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
			})
			if on != tc.on {
				t.Errorf("an accepted connection's SO_KEEPALIVE = %d with TCPKeepAlive %v, want %d", on, o.TCPKeepAlive, tc.on)
			}
			if tc.checkSecs && (idle != tc.secs || intvl != tc.secs) {
				t.Errorf("an accepted connection's TCP_KEEPIDLE, TCP_KEEPINTVL = %d, %d s, want %d, %d", idle, intvl, tc.secs, tc.secs)
			}
			limServed(t, good, 1<<10, "beside the connection that could vanish")
		})
	}
}
