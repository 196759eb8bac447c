//go:build linux

package aio_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/galeio/gale/aio"
	"golang.org/x/sys/unix"
)

// TestDupCloexec: the watcher's duplicate of a delegated socket, and the
// descriptor of a detached conn, are close-on-exec; a child process
// inherits neither, nor the watcher's poller descriptors.
func TestDupCloexec(t *testing.T) { backendtest.Run(t, testDupCloexec) }

func testDupCloexec(t *testing.T) {
	if _, ok := openFDs(); !ok {
		t.Skip("no /proc/self/fd")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		inherited := inheritableFDs(t)
		c, peer := pair(t)
		ino := sockInode(t, c)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		if err := w.Read("r", c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		w.Poke() // the read is pending: the loop watches the socket
		checkCloexec(t, "the watcher's duplicate", ino)
		checkChild(t, ino, inherited)

		nc := detach(t, w, c)
		if r := waitResult(t, col); r.Error != aio.ErrConnClosed {
			t.Errorf("read pending at Detach = %v, want ErrConnClosed", r)
		}
		checkCloexec(t, "the detached conn", ino)
		checkChild(t, ino, inherited)
		roundTrip(t, nc, peer)
	})
}

// checkCloexec checks that exactly one descriptor refers to socket ino,
// and that it is close-on-exec.
func checkCloexec(t *testing.T, what string, ino uint64) {
	t.Helper()
	fds, _ := openFDs()
	dups := socketFDs(fds, ino)
	if len(dups) < 1 || len(dups) > backendtest.SocketRefs() {
		t.Fatalf("%s: fds %v refer to the socket, want exactly one (and package net's on the net backend)", what, dups)
	}
	for _, fd := range dups {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatalf("fcntl(%d, F_GETFD) = %v", fd, err)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s: fcntl(%d, F_GETFD) = %#x, want FD_CLOEXEC set", what, fd, flags)
		}
	}
}

// inheritableFDs returns the targets of the descriptors a child may
// rightly inherit: those the process holds without FD_CLOEXEC before the
// test starts (handed down by whoever started the test binary).
func inheritableFDs(t *testing.T) map[string]bool {
	t.Helper()
	fds, _ := openFDs()
	out := make(map[string]bool)
	for fd, target := range fds {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			out[target] = true
		}
	}
	return out
}

// checkChild runs a shell that lists its descriptors and checks that,
// beyond its stdio, it holds no socket, epoll or eventfd descriptor but
// the inherited ones, and in particular nothing of socket ino.
func checkChild(t *testing.T, ino uint64, inherited map[string]bool) {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", "ls -l /proc/self/fd").Output()
	if err != nil {
		t.Fatalf("child ls -l /proc/self/fd: %v", err)
	}
	sock := "socket:[" + strconv.FormatUint(ino, 10) + "]"
	for _, line := range strings.Split(string(out), "\n") {
		i := strings.Index(line, " -> ")
		if i < 0 {
			continue
		}
		f := strings.Fields(line[:i])
		fd, err := strconv.Atoi(f[len(f)-1])
		if err != nil || fd <= 2 {
			continue
		}
		target := line[i+len(" -> "):]
		if target == sock {
			t.Errorf("child inherited fd %d of the delegated socket (%s)", fd, target)
			continue
		}
		if (strings.HasPrefix(target, "socket:") || strings.HasPrefix(target, "anon_inode:")) && !inherited[target] {
			t.Errorf("child inherited fd %d -> %s", fd, target)
		}
	}
}
