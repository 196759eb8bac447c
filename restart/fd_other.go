//go:build !unix

package restart

import (
	"errors"
	"fmt"
	"net"
)

// inheritFDs fails: descriptors are not inherited by number here.
func inheritFDs(first int, names []string) ([]net.Listener, error) {
	return nil, fmt.Errorf("restart: inherited descriptors (socket activation): %w", errors.ErrUnsupported)
}
