package engine_test

// The sub-tests of TestLimits that need Linux: the socket options they
// read, the open-file limit they lower, the raw sockets they connect.

import (
	"bytes"
	"errors"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/stresstest"
	"github.com/galeio/gale/internal/uring"
)

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

// testLimitsDescriptors: each connection holds a descriptor (two on the
// net backend, with package net's duplicate), and the engine takes as
// many as the process may open: no cap of its own by default, as
// net/http (nginx: worker_connections, 512). A client that connects until
// none is left makes accept fail with EMFILE: the listener waits 5 ms,
// doubling to 1 s, before it tries again, instead of spinning (Stats
// counts the failures; net/http's Serve backs off the same way); the
// connections already open are served; and once descriptors are free
// again a new client is served. On the net backend, a connection
// accepted while no descriptor is left for package net's duplicate fails
// at once instead (OnClose: EMFILE).
//
// The process's open-file limit is lowered first, and the table then
// filled to it but room descriptors: a small table fills fast, and the
// engine starts after the lowering, because io_uring's multishot accept
// keeps the limit of the moment it was armed.
func testLimitsDescriptors(t *testing.T) {
	const room, more = 8, 8
	limLowerNOFILE(t, 256)
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	limServed(t, good, 1<<10, "before")
	socks := stresstest.NewBacklog(t, room+more) // made first: connect needs no descriptor
	faulttest.Settle(t)
	full := faulttest.Exhaust(t, room)
	socks.ConnectAll(t, a)
	if backendtest.OnNet() {
		etWaitFor(t, "a connection failed for want of descriptors", func() bool {
			for {
				select {
				case ev := <-h.closed:
					if errors.Is(ev.err, syscall.EMFILE) {
						return true
					}
					continue
				default:
				}
				return false
			}
		})
	} else {
		etWaitFor(t, "the descriptors left taken and accept failing", func() bool {
			s := e.Stats().Total()
			return s.Conns == 1+room && s.AcceptErrors > 0
		})
	}
	limServed(t, good, 1<<10, "with no descriptor left")
	errs0 := e.Stats().Total().AcceptErrors
	time.Sleep(500 * time.Millisecond)
	errs := e.Stats().Total().AcceptErrors - errs0
	t.Logf("%d clients connected with %d descriptors left: %d connections open, %d failed accepts in the next 500 ms",
		room+more, room, e.Stats().Total().Conns-1, errs)
	if errs > 8 { // 5 ms doubling: 7 tries in 635 ms
		t.Errorf("%d failed accepts in 500 ms, want at most 8: the listener must back off", errs)
	}
	socks.Close() // the client lets its connections go
	full.Release()
	etWaitFor(t, "the client's connections closed", func() bool { return e.Stats().Total().Conns == 1 })
	limServed(t, etDial(t, a), 1<<10, "a new client once descriptors were freed")
	limServed(t, good, 1<<10, "at the end")
}

// testLimitsBacklog: while the listener cannot accept (no descriptor
// left here; a loop busy elsewhere), connecting clients wait in the
// kernel's accept queue, which holds at most net.core.somaxconn of them
// (package net listens with that backlog; SYN cookies answer handshakes
// beyond it). They cost the engine nothing until accepted: Conns does
// not move. Once descriptors are free every one is accepted and served.
func testLimitsBacklog(t *testing.T) {
	const waiting = 64
	limLowerNOFILE(t, 256) // see testLimitsDescriptors
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	limServed(t, good, 1<<10, "before")
	somaxconn := limSomaxconn()
	socks := stresstest.NewBacklog(t, waiting)
	faulttest.Settle(t)
	full := faulttest.Exhaust(t, 0)
	socks.ConnectAll(t, a)
	etWaitFor(t, "a failed accept", func() bool { return e.Stats().Total().AcceptErrors > 0 })
	full.Refill() // what closed meanwhile
	limServed(t, good, 1<<10, "with clients waiting in the backlog")
	if n := e.Stats().Total().Conns; n != 1 {
		t.Errorf("Conns = %d with %d clients in the backlog, want 1", n, waiting)
	}
	t.Logf("%d clients waited in the backlog (net.core.somaxconn: %s)", waiting, somaxconn)
	full.Release()
	cs := make([]net.Conn, waiting)
	for i := range cs {
		cs[i] = socks.Conn(t, i)
	}
	for range waiting {
		etOpened(t, h)
	}
	for _, c := range cs {
		limServed(t, c, 1<<10, "accepted from the backlog")
	}
	limServed(t, good, 1<<10, "at the end")
}

// limLowerNOFILE lowers the process's soft open-file limit so that it can
// open room more descriptors, and returns the function that puts it back,
// also called at cleanup. The limit bounds descriptor numbers, not their
// count: it is set where the numbers free below it are room. Nothing else
// may run meanwhile (TestLimits is not parallel).
func limLowerNOFILE(t *testing.T, room int) (restore func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatalf("getrlimit(RLIMIT_NOFILE) = %v", err)
	}
	open, ok := leaktest.OpenFDs()
	if !ok {
		t.Skip("no /proc/self/fd to count the open descriptors")
	}
	fds := make([]int, 0, len(open))
	for fd := range open {
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	// Numbers under limit are taken in order, below of them open; the
	// limit ends before the first free number past room free ones.
	limit, below := 0, 0
	for {
		if below < len(fds) && fds[below] == limit {
			below, limit = below+1, limit+1
			continue
		}
		if limit-below == room {
			break
		}
		limit++
	}
	lim := old
	lim.Cur = uint64(limit)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit(RLIMIT_NOFILE, %d) = %v", limit, err)
	}
	done := false
	restore = func() {
		if !done {
			done = true
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
				t.Errorf("restoring RLIMIT_NOFILE: %v", err)
			}
		}
	}
	t.Cleanup(restore)
	return restore
}

// limSomaxconn returns the kernel's cap on a listener's backlog.
func limSomaxconn() string {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return "unknown"
	}
	return string(bytes.TrimSpace(b))
}

// limSpillUnbounded reports whether e's connections receive through a
// multishot with no byte limit (io_uring before Linux 6.17): a paused
// connection may then hold a batch of the loop's buffer ring in spill.
func limSpillUnbounded(e *engine.Engine) bool {
	return etBackend(e) == backend.IOURing && !uring.RecvLimit()
}
