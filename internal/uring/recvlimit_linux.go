package uring

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// recvLimit caches RecvLimit's answer once the kernel gave a clear one.
var recvLimit struct {
	sync.Mutex
	known, ok bool
}

// RecvLimit reports whether a multishot IORING_OP_RECV takes a total
// byte limit in sqe->optlen (SQE.FileIndex; Linux 6.17, commit
// 0ebc9a7ecf6a "io_uring/net: Support multishot receive len cap"): the
// multishot then ends, its last completion without CQEFMore, once it has
// received that many bytes. The last receive is not cut short, so an
// arming brings at most the limit plus one provided buffer, less a byte.
// Before 6.17 the kernel refuses a receive with optlen set (EINVAL, from
// its check that file_index is zero).
//
// The kernel is asked once per process, on a ring of its own (a ring's
// owner may hold submissions it has not published yet): two bytes in a
// socket pair, received by a multishot limited to one byte, must come in
// one completion without CQEFMore. An answer the kernel did not give (a
// ring that cannot be set up, a wait that failed) is not kept. Safe for
// concurrent use.
func RecvLimit() bool {
	recvLimit.Lock()
	defer recvLimit.Unlock()
	if !recvLimit.known {
		recvLimit.ok, recvLimit.known = probeRecvLimit()
	}
	return recvLimit.ok
}

// probeRecvLimit tries a limited multishot receive; known is false when
// the kernel could not be asked.
func probeRecvLimit() (ok, known bool) {
	// With COOP_TASKRUN a completion's work runs on the submitting
	// thread: stay on it until the answer is in.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := Setup(Config{Entries: 2, Unbound: true})
	if err != nil {
		return false, false
	}
	defer r.Close()
	// One buffer, never given back: a kernel that ignored the limit would
	// find the ring empty at its next receive (ENOBUFS), so no buffer is
	// written once the answer is in, and unmapping it is safe.
	br, err := r.RegisterBufRing(0, 1, 64, false)
	if err != nil {
		return false, false
	}
	defer br.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if n, err := unix.Write(fds[1], []byte("ab")); n != 2 || err != nil {
		return false, false
	}
	e := r.SQE()
	e.Opcode, e.FD, e.Flags, e.IOPrio = OpRecv, int32(fds[0]), SQEBufferSelect, RecvMultishot
	e.BufIndex = br.Group()
	e.FileIndex = 1 // optlen
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		if err := r.Wait(10 * time.Millisecond); err != nil {
			return false, false
		}
		a, b := r.Peek()
		if len(a) == 0 {
			a = b
		}
		if len(a) > 0 {
			c := a[0]
			r.Advance(1)
			if c.Res == -int32(unix.EINVAL) {
				return false, true
			}
			return c.Res == 2 && c.Flags&(CQEFBuffer|CQEFMore) == CQEFBuffer, true
		}
	}
	return false, false
}
