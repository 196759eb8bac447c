//go:build unix

package sock

import (
	"net"
	"os"
	"syscall"
)

// FileConn takes over fd and returns it as a net.Conn, with the TCP
// options it had. net.FileConn applies the standard library's defaults for
// new TCP connections (TCP_NODELAY, keep-alive), which would silently undo
// options set before the descriptor was delegated; they are put back.
// fd is closed in every case: net.FileConn works on a duplicate.
func FileConn(fd int) (net.Conn, error) {
	opts := SaveTCPOptions(fd)
	f := os.NewFile(uintptr(fd), "gale-detached")
	nc, err := net.FileConn(f) // duplicates fd, close-on-exec
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := restoreOptions(nc, opts); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

func restoreOptions(nc net.Conn, opts TCPOptions) error {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	if err := rc.Control(func(fd uintptr) { rerr = opts.Restore(int(fd)) }); err != nil {
		return err
	}
	return rerr
}
