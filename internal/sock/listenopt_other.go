//go:build !linux

package sock

import (
	"errors"
	"fmt"
)

// applySystem refuses the Linux options here.
func (o ListenOpts) applySystem(fd int, tcp bool) error {
	switch {
	case o.BindToDevice != "":
		return unsupportedOpt("SO_BINDTODEVICE")
	case o.DeferAccept > 0 && tcp:
		return unsupportedOpt("TCP_DEFER_ACCEPT")
	case o.FastOpen > 0 && tcp:
		return unsupportedOpt("TCP_FASTOPEN")
	}
	return nil
}

// errNoRelisten is Relisten's error where the backlog cannot be set.
var errNoRelisten = errors.New("sock: listen backlog")

// unsupportedOpt is Apply's error for an option the system lacks.
func unsupportedOpt(name string) error {
	return fmt.Errorf("%s: not on this system: %w", name, errors.ErrUnsupported)
}
