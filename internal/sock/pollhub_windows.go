package sock

import (
	"net"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// One goroutine waits in WSAPoll for every socket a blocked call of
// winConn or winListener waits on, and wakes each caller when its socket
// is ready. A WSAPoll per waiting call would hold an OS thread in the
// system call per waiting socket: thousands of threads for thousands of
// idle connections.
//
// The hub is started on first use and runs for the rest of the process
// (one goroutine, one thread while it waits, a loopback pair to
// interrupt it). A caller that registers interrupts its WSAPoll so that
// the next one includes the new socket; interruptions coalesce.

// pollWaiter is one blocked call's registration: its socket and the
// event it waits for. The hub sends on ready when the socket is ready,
// and drops the registration; the caller drops it itself when it stops
// waiting first.
type pollWaiter struct {
	s      windows.Handle
	events int16
	ready  chan struct{} // capacity 1
}

// pollHub is the process's WSAPoll goroutine and its registrations.
type pollHub struct {
	mu      sync.Mutex
	waiters map[*pollWaiter]struct{}
	woken   bool           // a wake byte is on its way
	wakeR   windows.Handle // the hub polls it with the waiters
	wakeW   windows.Handle // a byte written here interrupts the poll
	err     error          // why the hub could not start
}

var (
	hub     pollHub
	hubOnce sync.Once
)

// hubWait waits until s is ready (in: readable, else writable), or for d
// at most, and reports whether it saw s ready (or dropped by dropSocket).
func hubWait(s windows.Handle, in bool, d time.Duration) (bool, error) {
	hubOnce.Do(hub.start)
	if hub.err != nil {
		return false, hub.err
	}
	w := &pollWaiter{s: s, events: pollWrNorm, ready: make(chan struct{}, 1)}
	if in {
		w.events = pollRdNorm
	}
	hub.add(w)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ready:
		return true, nil
	case <-t.C:
		hub.drop(w)
		return false, nil
	}
}

// start makes the wake pair and runs the hub's goroutine.
func (h *pollHub) start() {
	r, w, err := wakePair()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeR, h.wakeW, h.err = r, w, err
	if err == nil {
		h.waiters = make(map[*pollWaiter]struct{})
		go h.run()
	}
}

// wakePair connects two sockets of gale's own over loopback.
func wakePair() (r, w windows.Handle, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	if r, err = dupSocket(a.(*net.TCPConn)); err != nil {
		return 0, 0, err
	}
	if w, err = dupSocket(c.(*net.TCPConn)); err != nil {
		windows.Closesocket(r)
		return 0, 0, err
	}
	return r, w, nil
}

// add registers w and interrupts the hub's poll, unless an interruption
// is already on its way.
func (h *pollHub) add(w *pollWaiter) {
	h.mu.Lock()
	h.waiters[w] = struct{}{}
	wake := h.wake()
	h.mu.Unlock()
	if wake {
		sockWrite(h.wakeW, []byte{0})
	}
}

// wake reports whether the caller must interrupt the hub's poll, and
// records that an interruption is on its way. h.mu is held.
func (h *pollHub) wake() bool {
	w := !h.woken
	h.woken = true
	return w
}

// dropSocket wakes every call waiting on s (the caller checks why) and
// takes s out of the hub's poll, before s is closed: a poll over a
// closed socket fails for every socket in it.
func (h *pollHub) dropSocket(s windows.Handle) {
	h.mu.Lock()
	found := false
	for w := range h.waiters {
		if w.s == s {
			delete(h.waiters, w)
			w.ready <- struct{}{}
			found = true
		}
	}
	wake := found && h.wake()
	h.mu.Unlock()
	if wake {
		sockWrite(h.wakeW, []byte{0})
	}
}

// drop unregisters w. A socket polled meanwhile only costs a spurious
// ready, which nobody receives.
func (h *pollHub) drop(w *pollWaiter) {
	h.mu.Lock()
	delete(h.waiters, w)
	h.mu.Unlock()
}

// run polls for ever: the wake socket and every registered socket.
func (h *pollHub) run() {
	var (
		fds []wsaPollFD
		ws  []*pollWaiter
		buf [64]byte
	)
	for {
		fds, ws = h.snapshot(fds[:0], ws[:0])
		r, _, _ := procWSAPoll.Call(uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), ^uintptr(0))
		if failed(r) {
			time.Sleep(time.Millisecond) // a socket closed under the poll: take a new snapshot
			continue
		}
		if fds[0].revents != 0 {
			for {
				if n, e := sockRead(h.wakeR, buf[:]); n <= 0 || e != 0 {
					break
				}
			}
		}
		h.signal(fds[1:], ws)
	}
}

// snapshot fills fds and ws with the wake socket and the registrations,
// and clears woken: a registration after it interrupts the next poll.
func (h *pollHub) snapshot(fds []wsaPollFD, ws []*pollWaiter) ([]wsaPollFD, []*pollWaiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.woken = false
	fds = append(fds, wsaPollFD{fd: h.wakeR, events: pollRdNorm})
	for w := range h.waiters {
		fds = append(fds, wsaPollFD{fd: w.s, events: w.events})
		ws = append(ws, w)
	}
	return fds, ws
}

// signal wakes the waiters whose sockets are ready (a hang-up or an
// error counts) and unregisters them.
func (h *pollHub) signal(fds []wsaPollFD, ws []*pollWaiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, fd := range fds {
		if fd.revents&(fd.events|pollHupErrNva) == 0 {
			continue
		}
		w := ws[i]
		if _, ok := h.waiters[w]; ok {
			delete(h.waiters, w)
			w.ready <- struct{}{}
		}
	}
}
