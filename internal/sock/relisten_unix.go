//go:build unix && !linux

package sock

import "golang.org/x/sys/unix"

// Relisten sets the backlog of fd, a listening socket (listen(2) again).
func Relisten(fd, backlog int) error { return unix.Listen(fd, backlog) }
