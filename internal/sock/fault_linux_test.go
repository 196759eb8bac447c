package sock_test

import (
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// TestFault checks the test hook: an injected errno takes the place of
// the call (nothing is read), EINTR is retried by the wrapper, and the
// restore function removes the hook.
func TestFault(t *testing.T) {
	a, b := pair(t)
	if _, err := unix.Write(b, []byte("data")); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, a)
	var calls []syscall.Errno
	script := []syscall.Errno{unix.ENOMEM, unix.EINTR, unix.EINTR, 0}
	restore := sock.SetFault(func(op sock.FaultOp, fd int) syscall.Errno {
		if op != sock.FaultRead || fd != a || len(script) == 0 {
			return 0
		}
		e := script[0]
		script = script[1:]
		calls = append(calls, e)
		return e
	})
	if !sock.Faulty() {
		t.Fatalf("Faulty() = false with a hook installed")
	}
	buf := make([]byte, 16)
	if n, errno := sock.Read(a, buf); n != 0 || errno != unix.ENOMEM {
		t.Fatalf("Read with ENOMEM injected = %d, %v, want 0, ENOMEM", n, errno)
	}
	if n, errno := sock.Read(a, buf); errno != 0 || string(buf[:n]) != "data" {
		t.Fatalf("Read with EINTR injected twice = %q, %v, want %q", buf[:n], errno, "data")
	}
	if len(calls) != 4 {
		t.Errorf("hook called %d times (%v), want 4: ENOMEM, then EINTR twice retried, then the call", len(calls), calls)
	}
	restore()
	if sock.Faulty() {
		t.Errorf("Faulty() = true after restore")
	}
	if _, errno := sock.Read(a, buf); errno != unix.EAGAIN {
		t.Errorf("Read after restore = %v, want EAGAIN (the real call)", errno)
	}
}
