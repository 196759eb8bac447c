//go:build unix

package sock_test

import (
	"bytes"
	"syscall"
	"testing"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// pair returns a connected pair of non-blocking, close-on-exec stream
// sockets, closed by t's cleanup.
func pair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return fds[0], fds[1]
}

// waitReadable blocks, bounded, until fd has data or an error pending.
func waitReadable(t *testing.T, fd int) {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 10_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("poll(%d) = %d, %v: not readable", fd, n, err)
		}
		return
	}
}

func iovec(bufs ...[]byte) []unix.Iovec {
	iov := make([]unix.Iovec, 0, len(bufs))
	for _, b := range bufs {
		v := unix.Iovec{Base: unsafe.SliceData(b)}
		v.SetLen(len(b))
		iov = append(iov, v)
	}
	return iov
}

func TestReadEmptyEAGAIN(t *testing.T) {
	a, _ := pair(t)
	n, errno := sock.Read(a, make([]byte, 16))
	if n != 0 || errno != unix.EAGAIN {
		t.Fatalf("Read(empty) = %d, %v; want 0, EAGAIN", n, errno)
	}
	// The raw errno compares with == and is a syscall.Errno.
	var err error = errno
	if _, ok := err.(syscall.Errno); !ok {
		t.Fatalf("Read error has type %T, want syscall.Errno", err)
	}
}

func TestReadWrite(t *testing.T) {
	a, b := pair(t)
	if n, errno := sock.Write(a, []byte("abc")); n != 3 || errno != 0 {
		t.Fatalf("Write = %d, %v; want 3, 0", n, errno)
	}
	buf := make([]byte, 16)
	if n, errno := sock.Read(b, buf); errno != 0 || string(buf[:n]) != "abc" {
		t.Fatalf("Read = %q, %v; want %q, 0", buf[:n], errno, "abc")
	}
	if n, errno := sock.Write(a, nil); n != 0 || errno != 0 {
		t.Fatalf("Write(nil) = %d, %v; want 0, 0", n, errno)
	}
	if n, errno := sock.Read(b, buf); n != 0 || errno != unix.EAGAIN {
		t.Fatalf("Read after an empty write = %d, %v; want 0, EAGAIN", n, errno)
	}
}

func TestWritev(t *testing.T) {
	a, b := pair(t)
	parts := [][]byte{[]byte("one "), {}, []byte("two "), []byte("three")}
	want := bytes.Join(parts, nil)
	if n, errno := sock.Writev(a, iovec(parts...)); n != len(want) || errno != 0 {
		t.Fatalf("Writev = %d, %v; want %d, 0", n, errno, len(want))
	}
	buf := make([]byte, 64)
	if n, errno := sock.Read(b, buf); errno != 0 || !bytes.Equal(buf[:n], want) {
		t.Fatalf("Read = %q, %v; want %q", buf[:n], errno, want)
	}
	if n, errno := sock.Writev(a, nil); n != 0 || errno != 0 {
		t.Fatalf("Writev(nil) = %d, %v; want 0, 0", n, errno)
	}
}

// TestWriteFull: writes into a full socket fail with EAGAIN and n == 0,
// and every byte accepted before arrives.
func TestWriteFull(t *testing.T) {
	a, b := pair(t)
	chunk := bytes.Repeat([]byte{'x'}, 4096)
	total := 0
	for i := 0; ; i++ {
		if i > 100_000 {
			t.Fatal("socket never filled")
		}
		n, errno := sock.Write(a, chunk)
		if errno == unix.EAGAIN {
			if n != 0 {
				t.Fatalf("Write = %d, EAGAIN; want n 0 with EAGAIN", n)
			}
			break
		}
		if errno != 0 {
			t.Fatalf("Write: %v", errno)
		}
		total += n
	}
	if n, errno := sock.Writev(a, iovec(chunk, chunk)); n != 0 || errno != unix.EAGAIN {
		t.Fatalf("Writev into a full socket = %d, %v; want 0, EAGAIN", n, errno)
	}
	got := 0
	buf := make([]byte, 64<<10)
	for {
		n, errno := sock.Read(b, buf)
		if errno == unix.EAGAIN {
			break
		}
		if errno != 0 {
			t.Fatalf("Read: %v", errno)
		}
		got += n
	}
	if got != total {
		t.Fatalf("peer read %d bytes, want %d", got, total)
	}
}

func TestClosedPeer(t *testing.T) {
	a, b := pair(t)
	unix.Close(b)
	if n, errno := sock.Read(a, make([]byte, 8)); n != 0 || errno != 0 {
		t.Fatalf("Read after the peer closed = %d, %v; want 0, 0 (end of file)", n, errno)
	}
	if n, errno := sock.Write(a, []byte("x")); n != 0 || errno != unix.EPIPE {
		t.Fatalf("Write after the peer closed = %d, %v; want 0, EPIPE", n, errno)
	}
	if n, errno := sock.Writev(a, iovec([]byte("x"))); n != 0 || errno != unix.EPIPE {
		t.Fatalf("Writev after the peer closed = %d, %v; want 0, EPIPE", n, errno)
	}
}

func TestBadFD(t *testing.T) {
	buf := []byte("x")
	if n, errno := sock.Read(-1, buf); n != 0 || errno != unix.EBADF {
		t.Errorf("Read(-1) = %d, %v; want 0, EBADF", n, errno)
	}
	if n, errno := sock.Write(-1, buf); n != 0 || errno != unix.EBADF {
		t.Errorf("Write(-1) = %d, %v; want 0, EBADF", n, errno)
	}
	if n, errno := sock.Writev(-1, iovec(buf)); n != 0 || errno != unix.EBADF {
		t.Errorf("Writev(-1) = %d, %v; want 0, EBADF", n, errno)
	}
}
