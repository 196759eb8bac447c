//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package poller

import (
	"errors"
	"fmt"
)

// openKind opens the net backend for Auto and Net: this platform has no
// native one.
func openKind(k Kind, p Provider) (Backend, error) {
	if k != Auto && k != Net {
		return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
	}
	return openNet(p)
}
