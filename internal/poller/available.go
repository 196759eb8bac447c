package poller

import (
	"errors"
	"fmt"
	"sync"
)

var (
	availOnce [IOCP + 1]sync.Once
	availErr  [IOCP + 1]error
)

// Available reports whether backend k can be opened here (nil), or why
// not. It opens and closes one backend, once per k; safe from any
// goroutine. Auto is available where the platform's native backend is,
// which Auto falls back to for every owner.
func Available(k Kind) error {
	if k > IOCP {
		return fmt.Errorf("poller: %v: %w", k, errors.ErrUnsupported)
	}
	if k == Auto {
		k = native
	}
	availOnce[k].Do(func() {
		be, err := openKind(k, nil)
		if err == nil {
			err = be.Close()
		}
		availErr[k] = err
	})
	return availErr[k]
}
