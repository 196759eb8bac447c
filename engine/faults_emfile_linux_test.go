package engine_test

// The listener at the process's real open-file limit: accept(2) fails
// with EMFILE for real, not by injection (TestAcceptEMFILE and
// TestStormAccept inject it; ENFILE, the system-wide limit, can only be
// injected).

import (
	"net"
	"os"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/stresstest"
	"golang.org/x/sys/unix"
)

// etStarvedCPU is the most CPU the process may use, in a fraction of one
// core, while its listener cannot accept and nothing else runs: a
// listener that retried at once would use a whole core.
const etStarvedCPU = 0.20

// TestEMFILEReal checks the listener when the process has no descriptor
// left: clients connect (the handshakes complete in the kernel's
// backlog), accept fails with EMFILE, and meanwhile the connections
// already open are still served, and the process does not spin (its CPU
// time over a second of starvation, measured with getrusage(2), stays
// under 20 % of one core). Once descriptors are freed, the waiting
// connections are accepted and served.
func TestEMFILEReal(t *testing.T) { backendtest.Run(t, testEMFILEReal) }

func testEMFILEReal(t *testing.T) {
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{})
	a := etListen(t, e, "tcp")
	old := stresstest.EchoClients(t, a, 2, 1)
	for range old {
		etOpened(t, h)
	}
	stresstest.EchoRound(t, old, "before the table is full")

	// The waiting clients' sockets exist before the table fills: connect
	// needs no descriptor.
	const waiting = 4
	socks := etRawSockets(t, waiting)
	faulttest.Settle(t) // nothing of an earlier test's still closing
	full := faulttest.Exhaust(t, 0)
	for _, fd := range socks {
		etConnectRaw(t, fd, a)
	}
	stresstest.EchoRound(t, old, "while accept fails with EMFILE")
	etWaitFor(t, "a failed accept", func() bool { return e.Stats().Total().AcceptErrors > 0 })
	if n := full.Refill(); n > 0 {
		t.Logf("%d descriptors freed since the table was filled, taken again", n)
	}

	cpu0, t0, errs0 := faulttest.CPUTime(), time.Now(), e.Stats().Total().AcceptErrors
	time.Sleep(time.Second)
	cpu, wall, errs := faulttest.CPUTime()-cpu0, time.Since(t0), e.Stats().Total().AcceptErrors-errs0
	share := cpu.Seconds() / wall.Seconds()
	t.Logf("starved for %v with %d descriptors filling the table: %v of CPU (%.1f %% of a core), %d failed accepts", wall.Round(time.Millisecond), full.Len(), cpu.Round(time.Millisecond), 100*share, errs)
	if share > etStarvedCPU {
		t.Errorf("the process used %.1f %% of a core while its listener was starved, want under %.0f %%: it spins", 100*share, 100*etStarvedCPU)
	}
	etNoEvent(t, h.opened, "OnOpen while the table is full")
	stresstest.EchoRound(t, old, "after a second of EMFILE")

	full.Release()
	var cs []*faulttest.Echo
	for i, fd := range socks {
		cs = append(cs, faulttest.NewEcho(t, etFileConn(t, fd), uint64(10+i)))
		socks[i] = -1 // etFileConn took it
	}
	for range cs {
		etOpened(t, h)
	}
	stresstest.EchoRound(t, cs, "accepted once descriptors were freed")
	stresstest.EchoRound(t, old, "at the end")
}

// etRawSockets makes n blocking TCP sockets, closed at cleanup unless
// the caller set their entry to -1 (handed to etFileConn).
func etRawSockets(t *testing.T, n int) []int {
	t.Helper()
	fds := make([]int, n)
	for i := range fds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("socket = %v", err)
		}
		fds[i] = fd
		t.Cleanup(func() {
			if fds[i] >= 0 {
				unix.Close(fds[i])
			}
		})
	}
	return fds
}

// etConnectRaw connects fd to a, a 127.0.0.1 address: it returns once the
// handshake is done, whether or not the server has accepted.
func etConnectRaw(t *testing.T, fd int, a net.Addr) {
	t.Helper()
	ta := a.(*net.TCPAddr)
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := unix.Connect(fd, sa); err != nil {
		t.Fatalf("connect = %v", err)
	}
}

// etFileConn makes a net.Conn of the connected socket fd, which it takes
// over (its duplicate is closed at cleanup).
func etFileConn(t *testing.T, fd int) net.Conn {
	t.Helper()
	f := os.NewFile(uintptr(fd), "client")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatalf("FileConn = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
