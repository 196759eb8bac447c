//go:build unix

package aio_test

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// stSocketPair returns the two ends of a connected Unix stream socket pair.
// A write on one end is in the other's receive queue when it returns,
// which makes "the data is already there" deterministic. a is meant for the
// watcher, peer for the test.
func stSocketPair(t testing.TB) (a, peer net.Conn) {
	t.Helper()
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("Socketpair = %v, want nil", err)
	}
	a = stFileConn(t, fds[0])
	peer = stFileConn(t, fds[1])
	return a, peer
}

func stFileConn(t testing.TB, fd int) net.Conn {
	t.Helper()
	f := os.NewFile(uintptr(fd), "st-socketpair")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatalf("FileConn = %v, want nil", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
