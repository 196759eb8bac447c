//go:build unix

package restart

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// inheritFDs makes listeners of the descriptors first, first+1, ... (one
// per name), which this process inherited: each is set close-on-exec
// first, and is closed once net has its own copy (or on failure). On an
// error, the listeners made already are closed too, and the descriptors
// not reached yet.
func inheritFDs(first int, names []string) ([]net.Listener, error) {
	fds := make([]int, len(names))
	for i := range fds {
		fds[i] = first + i
	}
	return listenersOf(fds, names)
}

// listenersOf makes listeners of fds, which it takes over (each is closed
// once net has its copy).
func listenersOf(fds []int, names []string) ([]net.Listener, error) {
	lns := make([]net.Listener, 0, len(fds))
	for i, fd := range fds {
		syscall.CloseOnExec(fd)
		ln, err := listenerOf(fd, names[i])
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			for _, rest := range fds[i+1:] {
				syscall.Close(rest)
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// listenerOf makes a listener of fd, and closes fd.
func listenerOf(fd int, name string) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("restart: descriptor %d (%q) is no stream listener: %w", fd, name, err)
	}
	return ln, nil
}
