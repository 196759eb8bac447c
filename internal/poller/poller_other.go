//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package poller

import (
	"errors"
	"fmt"
)

// Open returns the net backend: this platform has no native one.
func Open(p Provider) (Backend, error) { return OpenKind(Auto, p) }

// OpenKind returns the net backend for Auto and Net (after the
// GALE_BACKEND override, Choose); the native backends are unsupported
// here.
func OpenKind(k Kind, p Provider) (Backend, error) {
	k, err := Choose(k)
	if err != nil {
		return nil, err
	}
	return openKind(k, p)
}

func openKind(k Kind, p Provider) (Backend, error) {
	if k != Auto && k != Net {
		return nil, fmt.Errorf("poller: %v backend: %w", k, errors.ErrUnsupported)
	}
	return openNet(p)
}
