package poller

import (
	"os"

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
type epoll struct {
	epfd   int
	wakefd int // eventfd(2) written by wake
	events []unix.EpollEvent
}

var wakeValue = [8]byte{1}

// Open returns the Linux backend: epoll(7) with completions emulated by
// non-blocking system calls.
func Open(p Provider) (Backend, error) {
	rd, err := newEpoll()
	if err != nil {
		return nil, err
	}
	return newEmul(rd, p), nil
}

func newEpoll() (*epoll, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ep := &epoll{epfd: epfd, wakefd: wakefd, events: make([]unix.EpollEvent, 128)}
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

func (ep *epoll) wait(msec int, evs []event) ([]event, error) {
	n, err := unix.EpollWait(ep.epfd, ep.events, msec)
	if err == unix.EINTR {
		return evs, nil
	}
	if err != nil {
		return evs, os.NewSyscallError("epoll_wait", err)
	}
	for i := range n {
		e := &ep.events[i]
		tag := Tag(uint32(e.Fd)) | Tag(uint32(e.Pad))<<32
		if tag == wakeTag {
			continue
		}
		evs = append(evs, event{
			tag:      tag,
			readable: e.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0,
			writable: e.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0,
		})
	}
	if n == len(ep.events) && n < 4096 {
		// A full batch: more may be waiting. Grow for the next call.
		ep.events = make([]unix.EpollEvent, 2*n)
	}
	return evs, nil
}

func (ep *epoll) wake() error {
	_, err := unix.Write(ep.wakefd, wakeValue[:])
	if err == unix.EAGAIN {
		return nil // the counter is saturated: a wake-up is pending anyway
	}
	return err
}

func (ep *epoll) close() error {
	err := unix.Close(ep.wakefd)
	if e := unix.Close(ep.epfd); err == nil {
		err = e
	}
	return err
}
