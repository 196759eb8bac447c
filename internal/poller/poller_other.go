//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package poller

import "errors"

// Open reports that this platform has no backend.
func Open(p Provider) (Backend, error) { return nil, errors.ErrUnsupported }

// OpenKind reports that this platform has no backend.
func OpenKind(Kind, Provider) (Backend, error) { return nil, errors.ErrUnsupported }

func openKind(Kind, Provider) (Backend, error) { return nil, errors.ErrUnsupported }
