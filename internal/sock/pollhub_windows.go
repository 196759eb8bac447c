package sock

import (
	"net"
	"sync"
	"syscall"
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

// pollWaiter is one direction of a socket's blocking calls, registered
// with the hub while a call waits on it: its socket, the event it waits
// for, and where the hub signals. A registration stays while its calls
// time out and retry (the slices of winConn's waits), so an idle socket
// costs the hub nothing after its first wait; the hub drops it when it
// signals. Its fields after ready belong to the hub (h.mu).
type pollWaiter struct {
	s      windows.Handle
	events int16
	ready  chan struct{} // capacity 1: a signal not yet taken
	queued bool          // in the hub's set
}

// newPollWaiter returns the registration of s for readability (in) or
// writability.
func newPollWaiter(s windows.Handle, in bool) pollWaiter {
	w := pollWaiter{s: s, events: pollWrNorm, ready: make(chan struct{}, 1)}
	if in {
		w.events = pollRdNorm
	}
	return w
}

// pollHub is the process's WSAPoll goroutine and its registrations.
type pollHub struct {
	mu      sync.Mutex
	waiters map[*pollWaiter]struct{}
	woken   bool           // a wake byte is on its way
	pokeMu  sync.Mutex     // one wake byte written at a time (poke)
	wakeR   windows.Handle // the hub polls it with the waiters
	wakeW   windows.Handle // a byte written here interrupts the poll
	err     error          // why the hub could not start
}

var (
	hub     pollHub
	hubOnce sync.Once
)

// wait waits until w's socket is ready, w is kicked, or d passes, and
// reports whether it was signalled (the caller retries its call either
// way).
func (h *pollHub) wait(w *pollWaiter, d time.Duration) (bool, error) {
	hubOnce.Do(h.start)
	if h.err != nil {
		return false, h.err
	}
	h.mu.Lock()
	wake := false
	if !w.queued {
		h.waiters[w] = struct{}{}
		w.queued = true
		wake = h.wake()
	}
	h.mu.Unlock()
	if wake {
		h.poke()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ready:
		return true, nil
	case <-t.C:
		return false, nil
	}
}

// kick signals w's calls, so that they look again at their deadline or
// their conn's state, and takes w out of the hub's next poll, before its
// socket is closed: a poll over a closed socket fails for every socket
// in it.
func (h *pollHub) kick(w *pollWaiter) {
	h.mu.Lock()
	wake := false
	if w.queued {
		delete(h.waiters, w)
		w.queued = false
		wake = h.wake()
	}
	h.notify(w)
	h.mu.Unlock()
	if wake {
		h.poke()
	}
}

// notify leaves a signal for w's call, unless one is there. h.mu is
// held.
func (h *pollHub) notify(w *pollWaiter) {
	select {
	case w.ready <- struct{}{}:
	default:
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

// poke writes the byte that interrupts the hub's poll. Under Wine a
// send on a socket another thread is sending on can fail with
// WSAEWOULDBLOCK though the buffer is empty, and a lost byte would leave
// the hub in a poll without the new registrations (their calls would go
// on only at each slice's end): so the writes are serialized and retried,
// and if one still fails the next registration pokes again.
func (h *pollHub) poke() {
	h.pokeMu.Lock()
	defer h.pokeMu.Unlock()
	for try := 0; try < 100; try++ {
		n, e := sockWrite(h.wakeW, []byte{0})
		if n == 1 {
			return
		}
		if e != syscall.EAGAIN {
			break
		}
		time.Sleep(50 * time.Microsecond)
	}
	h.mu.Lock()
	h.woken = false
	h.mu.Unlock()
}

// wake reports whether the caller must interrupt the hub's poll, and
// records that an interruption is on its way. h.mu is held.
func (h *pollHub) wake() bool {
	w := !h.woken
	h.woken = true
	return w
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
		if w := ws[i]; w.queued {
			delete(h.waiters, w)
			w.queued = false
			h.notify(w)
		}
	}
}
