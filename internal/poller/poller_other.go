//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package poller

import (
	"errors"
	"fmt"
)

// native is the readiness backend of this platform: it has no native one.
const native = Net

// openKind opens the net backend for Net: this platform has no native
// one.
func openKind(k Kind, p Provider) (Backend, error) {
	if k != Net {
		return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
	}
	return openNet(p)
}
