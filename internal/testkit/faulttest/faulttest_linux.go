package faulttest

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// Op is a kind of call a storm hits.
type Op = sock.FaultOp

// The calls a storm can hit; Write covers writev.
const (
	Read   = sock.FaultRead
	Write  = sock.FaultWrite
	Accept = sock.FaultAccept
)

// Storm describes the failures to inject.
type Storm struct {
	// Errno is what the hit calls fail with.
	Errno syscall.Errno
	// Ops are the calls hit; empty means all.
	Ops []Op
	// MinGap and MaxGap bound the number of matching calls from one
	// failure to the next: the gaps cycle through MinGap..MaxGap. MinGap
	// 0 means 2, so a retried call eventually goes through; MaxGap below
	// MinGap means MinGap. Every matching call fails with MinGap 1 and
	// MaxGap 1 (never use that with EINTR: the retries would never end).
	MinGap, MaxGap int
	// Peers, when set, restricts the storm to sockets connected to one of
	// these addresses (the test's ends of the connections to hit);
	// listening sockets are then spared too.
	Peers []net.Addr
}

// Injector is a running storm.
type Injector struct {
	s       Storm
	ops     [4]bool
	peers   map[netip.AddrPort]bool
	on      atomic.Bool
	calls   atomic.Int64 // matching calls while on
	hits    atomic.Int64 // failures injected
	mu      sync.Mutex
	next    int64 // matching call number of the next failure
	gap     int   // the current gap
	restore func()
}

// Start installs s and starts injecting. The storm ends, and the hook is
// removed, when Stop is called or t ends.
func Start(t testing.TB, s Storm) *Injector {
	t.Helper()
	if s.MinGap <= 0 {
		s.MinGap = 2
	}
	s.MaxGap = max(s.MaxGap, s.MinGap)
	in := &Injector{s: s, gap: s.MinGap, next: int64(s.MinGap)}
	for _, op := range s.Ops {
		in.ops[op] = true
	}
	if len(s.Ops) == 0 {
		in.ops = [4]bool{false, true, true, true}
	}
	if s.Peers != nil {
		in.peers = make(map[netip.AddrPort]bool)
		for _, a := range s.Peers {
			if ap, err := netip.ParseAddrPort(a.String()); err == nil {
				in.peers[ap] = true
			}
		}
	}
	in.on.Store(true)
	in.restore = sock.SetFault(in.fault)
	t.Cleanup(in.Stop)
	return in
}

// Stop ends the storm and removes the hook. Idempotent.
func (in *Injector) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.on.Store(false)
	if in.restore != nil {
		in.restore()
		in.restore = nil
	}
}

// Pause stops injecting, keeping the hook and the counts.
func (in *Injector) Pause() { in.on.Store(false) }

// Resume injects again after Pause.
func (in *Injector) Resume() { in.on.Store(true) }

// Calls returns how many calls the storm matched while it was on.
func (in *Injector) Calls() int64 { return in.calls.Load() }

// Hits returns how many failures were injected.
func (in *Injector) Hits() int64 { return in.hits.Load() }

// fault is the sock.FaultFunc of the storm.
func (in *Injector) fault(op sock.FaultOp, fd int) syscall.Errno {
	if int(op) >= len(in.ops) || !in.ops[op] || !in.on.Load() {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.on.Load() || (in.peers != nil && !in.peers[peerOf(fd)]) {
		return 0
	}
	n := in.calls.Add(1)
	if n < in.next {
		return 0
	}
	in.gap++
	if in.gap > in.s.MaxGap {
		in.gap = in.s.MinGap
	}
	in.next = n + int64(in.gap)
	in.hits.Add(1)
	return in.s.Errno
}

// peerOf returns the address of fd's peer (getpeername(2): the
// descriptor may be a new socket under a reused number), or the zero
// AddrPort: a listening or unconnected socket, or another family.
func peerOf(fd int) netip.AddrPort {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return netip.AddrPort{}
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
