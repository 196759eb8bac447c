package poller

import (
	"errors"
	"fmt"
)

// native is the readiness backend of Linux.
const native = Epoll

// openKind opens the backend k names; Auto is OpenKind's.
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
	}
	return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
}
