package netconn

import (
	"errors"
	"fmt"
)

// errNoDescriptor is the failure to move a connection that has no
// descriptor (it is no syscall.Conn) onto the loops.
var errNoDescriptor = fmt.Errorf("netconn: connection has no descriptor: %w", errors.ErrUnsupported)
