package poller

import (
	"errors"
	"fmt"
)

// autoURing tells whether Auto tries io_uring first (falling back to
// epoll where it is unavailable) for p's owner. It does for a Transient
// provider (engine): the loop reads the ring's buffers in place and
// batches its sends into the system call that waits, so it makes far
// fewer system calls per message than on epoll for no more CPU
// (docs/bench/io_uring). An owner that needs its bytes copied out (aio's
// swap buffer) gets an unbound ring (HandOff), which streams and
// ping-pongs level with epoll, but it pays a copy per receive, and with
// thousands of busy connections it is about 10 % slower than on epoll:
// Auto stays epoll for it until that cost is gone.
func autoURing(p Provider) bool {
	if autoURingAll {
		return true
	}
	return transient(p)
}

// autoURingAll makes Auto try io_uring for every owner; tests only.
var autoURingAll = false

func openKind(k Kind, p Provider) (Backend, error) {
	switch k {
	case Epoll:
		return openEpoll(p)
	case Net:
		return openNet(p)
	case IOURing:
		b, err := openURing(p)
		if err != nil {
			return nil, fmt.Errorf("poller: io_uring backend: %w", err)
		}
		return b, nil
	case Auto:
		if autoURing(p) {
			if b, err := openURing(p); err == nil {
				return b, nil
			}
		}
		return openEpoll(p)
	}
	return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
}
