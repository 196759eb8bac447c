//go:build unix

package aio_test

import (
	"fmt"
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sockoptInt reads an integer socket option of c.
func sockoptInt(t testing.TB, c net.Conn, level, opt int) int {
	t.Helper()
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatalf("%T is not a syscall.Conn", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn() = %v", err)
	}
	var v int
	var optErr error
	if err := rc.Control(func(fd uintptr) { v, optErr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatalf("Control() = %v", err)
	}
	if optErr != nil {
		t.Fatalf("getsockopt(%d, %d) = %v", level, opt, optErr)
	}
	return v
}

// socketFDs returns the descriptors whose /proc/self/fd target is
// "socket:[ino]".
func socketFDs(fds map[int]string, ino uint64) []int {
	want := fmt.Sprintf("socket:[%d]", ino)
	var out []int
	for fd, target := range fds {
		if target == want {
			out = append(out, fd)
		}
	}
	return out
}

// sockInode returns the inode number of c's socket.
func sockInode(t testing.TB, c net.Conn) uint64 {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn() = %v", err)
	}
	var st syscall.Stat_t
	var statErr error
	if err := rc.Control(func(fd uintptr) { statErr = syscall.Fstat(int(fd), &st) }); err != nil {
		t.Fatalf("Control() = %v", err)
	}
	if statErr != nil {
		t.Fatalf("fstat = %v", statErr)
	}
	return uint64(st.Ino)
}
