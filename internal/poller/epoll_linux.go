package poller

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// wakeTag marks the wake-up eventfd's events. No slot has it: slots are
// allocated from 0 and the loop's table never reaches 2³²-1.
const wakeTag = ^Tag(0)

// epollEvents registers a socket once, edge-triggered, for both directions.
// TCP signals writability only after a write found the buffer full
// (SOCK_NOSPACE, tcp_check_space in net/ipv4/tcp_input.c), so keeping
// EPOLLOUT armed costs no spurious wake-ups in the common case.
const epollEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// epoll is the Linux readiness notifier.
//
// The loop does not block in epoll_wait(2). The epoll descriptor is itself
// pollable, so it is registered with the Go runtime's network poller, and
// a loop with nothing to do parks there like any goroutine blocked in
// package net, then collects its events with a zero timeout. A loop
// blocked in the system call would instead hold an OS thread and leave its
// P to be retaken, and each wake-up would cost a thread hand-off, which
// made the blocking loop the slower of the two in request-response
// exchanges (the figures are in CHANGELOG.md).
type epoll struct {
	epfd int
	// wakefd is the eventfd(2) wake writes. wake runs on any goroutine, so
	// its number is used under the FD's reference count and closed only
	// once no wake is writing to it: never into a file that took the
	// number after close.
	wakefd   sock.FD
	events   []unix.EpollEvent
	file     *os.File        // epfd, registered with the runtime poller
	rc       syscall.RawConn // file's raw access: Read parks on the poller
	deadline time.Time       // file's read deadline, as last set
	n        int             // events of the last epoll_wait
	err      error           // its error
	waitFn   func(fd uintptr) bool
}

var wakeValue = [8]byte{1}

// openEpoll returns the epoll(7) backend: completions emulated by
// non-blocking system calls. A HandOff provider's loop waits through a
// relay (relay_linux.go) where there is more than one processor, any
// other's parks on the runtime poller.
func openEpoll(p Provider) (Backend, error) {
	if handsOff(p) && relays() {
		rd, err := newRelay()
		if err != nil {
			return nil, err
		}
		return newEmul(rd, p, Epoll), nil
	}
	rd, err := newEpoll(true)
	if err != nil {
		return nil, err
	}
	return newEmul(rd, p, Epoll), nil
}

// newEpoll opens an epoll descriptor and its wake-up eventfd; parked, the
// descriptor is registered with the runtime poller for block.
func newEpoll(parked bool) (*epoll, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ep := &epoll{epfd: epfd, events: make([]unix.EpollEvent, 128)}
	ep.wakefd.Init(wakefd)
	if parked {
		if err := ep.park(); err != nil {
			unix.Close(wakefd)
			unix.Close(epfd)
			return nil, err
		}
	}
	// The eventfd is never read: with EPOLLET every write(2) queues a fresh
	// edge (eventfd_write wakes the wait queue), and its 64-bit counter
	// cannot overflow in practice, so a wake-up costs one system call.
	if err := ep.ctl(unix.EPOLL_CTL_ADD, wakefd, unix.EPOLLIN|unix.EPOLLET, wakeTag); err != nil {
		ep.close()
		return nil, err
	}
	return ep, nil
}

func (ep *epoll) ctl(op, fd int, events uint32, tag Tag) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(uint32(tag)), Pad: int32(uint32(tag >> 32))}
	if err := unix.EpollCtl(ep.epfd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

func (ep *epoll) add(fd int, tag Tag) error {
	return ep.ctl(unix.EPOLL_CTL_ADD, fd, epollEvents, tag)
}

// del removes fd explicitly: epoll tracks the open file description, so a
// registration would outlive close(fd) while another descriptor (a Detach
// copy) still refers to it.
func (ep *epoll) del(fd int) error {
	return ep.ctl(unix.EPOLL_CTL_DEL, fd, 0, 0)
}

// park registers epfd with the runtime poller.
func (ep *epoll) park() error {
	if err := unix.SetNonblock(ep.epfd, true); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	ep.file = os.NewFile(uintptr(ep.epfd), "epoll")
	rc, err := ep.file.SyscallConn()
	if err != nil {
		ep.file.Close()
		return err
	}
	ep.rc = rc
	ep.waitFn = ep.poll
	return nil
}

// poll collects ready events without blocking; it reports whether the
// wait is over (events, or an error).
func (ep *epoll) poll(uintptr) bool {
	ep.n, ep.err = unix.EpollWait(ep.epfd, ep.events, 0)
	return ep.n > 0 || (ep.err != nil && ep.err != unix.EINTR)
}

// block waits up to msec milliseconds (for ever if negative) for events,
// parked on the runtime poller.
func (ep *epoll) block(msec int) {
	var dl time.Time
	if msec >= 0 {
		dl = time.Now().Add(time.Duration(msec) * time.Millisecond)
	}
	if !dl.Equal(ep.deadline) {
		ep.file.SetReadDeadline(dl)
		ep.deadline = dl
	}
	if err := ep.rc.Read(ep.waitFn); err != nil {
		ep.n, ep.err = 0, nil // the deadline passed
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			ep.err = err
		}
	}
}

func (ep *epoll) wait(msec int, evs []event) ([]event, error) {
	if ep.poll(0); ep.n == 0 && ep.err == nil && msec != 0 {
		ep.block(msec)
	}
	n, err := ep.n, ep.err
	if err == unix.EINTR {
		return evs, nil
	}
	if err != nil {
		return evs, os.NewSyscallError("epoll_wait", err)
	}
	evs = appendEvents(evs, ep.events[:n])
	if n == len(ep.events) && n < 4096 {
		// A full batch: more may be waiting. Grow for the next call.
		ep.events = make([]unix.EpollEvent, 2*n)
	}
	return evs, nil
}

// appendEvents appends raw's events to evs, leaving out the wake-ups.
func appendEvents(evs []event, raw []unix.EpollEvent) []event {
	for i := range raw {
		e := &raw[i]
		tag := Tag(uint32(e.Fd)) | Tag(uint32(e.Pad))<<32
		if tag == wakeTag {
			continue
		}
		evs = append(evs, event{
			tag:      tag,
			readable: e.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0,
			writable: e.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0,
			hangup:   e.Events&(unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0,
		})
	}
	return evs
}

func (ep *epoll) wake() error {
	fd, ok := ep.wakefd.Acquire()
	if !ok {
		return nil // closed: the loop is gone
	}
	_, err := unix.Write(fd, wakeValue[:])
	ep.wakefd.Release()
	if err == unix.EAGAIN {
		return nil // the counter is saturated: a wake-up is pending anyway
	}
	return err
}

func (ep *epoll) close() error {
	ep.wakefd.Close()
	if ep.file == nil {
		return unix.Close(ep.epfd)
	}
	return ep.file.Close()
}
