package poller

import (
	"errors"
	"fmt"
)

// native is Windows' completion backend.
const native = IOCP

// openKind opens the backend k names; Auto is OpenKind's.
func openKind(k Kind, p Provider) (Backend, error) {
	switch k {
	case Net:
		return openNet(p)
	case IOCP:
		b, err := openIOCP(p)
		if err != nil {
			return nil, fmt.Errorf("poller: iocp backend: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
}
