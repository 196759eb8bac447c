//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package poller

import (
	"errors"
	"fmt"
	"os"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// kqueue is the BSD and macOS readiness notifier. It builds and vets in CI
// but cannot run there (the machines are Linux): treat it as unverified.
//
// Kevent's udata field is pointer-typed, and a Tag stored in it would look
// like a bad pointer to the garbage collector, so events carry the
// descriptor (ident) and tags is a table from descriptor to Tag. A stale
// event for a descriptor number that was closed and reused within one batch
// can at worst cause one read or write that returns EAGAIN.
type kqueue struct {
	kq int // the owner's copy of kqfd's number
	// kqfd guards the descriptor for wake, which runs on any goroutine and
	// triggers the wake-up event on it: it is closed only once no wake
	// is using it (see sock.FD).
	kqfd   sock.FD
	waker  kqWaker // the wake-up event (kqueue_wake_*.go)
	tags   []Tag   // by descriptor; 0 when unregistered
	events []unix.Kevent_t
}

// native is the readiness backend of the BSDs and macOS.
const native = Kqueue

// openKind opens the kqueue backend for Kqueue and the net backend for
// Net; the Linux backends are unsupported here.
func openKind(k Kind, p Provider) (Backend, error) {
	if k == Net {
		return openNet(p)
	}
	if k != Kqueue {
		return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
	}
	return openKqueue(p)
}

func openKqueue(p Provider) (Backend, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, os.NewSyscallError("kqueue", err)
	}
	unix.CloseOnExec(kq)
	k := &kqueue{kq: kq, events: make([]unix.Kevent_t, 128)}
	k.kqfd.Init(kq)
	if err := k.waker.init(kq); err != nil {
		unix.Close(kq)
		return nil, err
	}
	return newEmul(k, p, Kqueue), nil
}

func (k *kqueue) add(fd int, tag Tag) error {
	for fd >= len(k.tags) {
		k.tags = append(k.tags, 0)
	}
	k.tags[fd] = tag
	ch := make([]unix.Kevent_t, 2)
	unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
	unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(k.kq, ch, nil, nil); err != nil {
		k.tags[fd] = 0
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

func (k *kqueue) del(fd int) error {
	if fd < len(k.tags) {
		k.tags[fd] = 0
	}
	ch := make([]unix.Kevent_t, 2)
	unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_DELETE)
	unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_DELETE)
	if _, err := unix.Kevent(k.kq, ch, nil, nil); err != nil && err != unix.ENOENT {
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

func (k *kqueue) wait(msec int, evs []event) ([]event, error) {
	var ts *unix.Timespec
	if msec >= 0 {
		t := unix.NsecToTimespec(int64(msec) * 1e6)
		ts = &t
	}
	n, err := unix.Kevent(k.kq, nil, k.events, ts)
	if err == unix.EINTR {
		return evs, nil
	}
	if err != nil {
		return evs, os.NewSyscallError("kevent", err)
	}
	for i := range n {
		e := &k.events[i]
		if k.waker.is(e) {
			continue
		}
		fd := int(e.Ident)
		if fd >= len(k.tags) || k.tags[fd] == 0 {
			continue
		}
		failed := e.Flags&(unix.EV_EOF|unix.EV_ERROR) != 0
		evs = append(evs, event{
			tag:      k.tags[fd],
			readable: e.Filter == unix.EVFILT_READ || failed,
			writable: e.Filter == unix.EVFILT_WRITE || failed,
			hangup:   failed,
		})
	}
	if n == len(k.events) && n < 4096 {
		k.events = make([]unix.Kevent_t, 2*n)
	}
	return evs, nil
}

func (k *kqueue) wake() error {
	kq, ok := k.kqfd.Acquire()
	if !ok {
		return nil // closed: the loop is gone
	}
	defer k.kqfd.Release()
	return k.waker.trigger(kq)
}

func (k *kqueue) close() error {
	k.kqfd.Close()
	k.waker.close()
	return nil
}
