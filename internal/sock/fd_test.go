//go:build unix

package sock_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// open reports whether fd is an open descriptor.
func open(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

func pipeFD(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return p[0], p[1]
}

func TestFDCloseWaitsForUsers(t *testing.T) {
	r, w := pipeFD(t)
	defer unix.Close(r)
	var f sock.FD
	f.Init(w)
	fd, ok := f.Acquire()
	if !ok || fd != w {
		t.Fatalf("Acquire() = %d, %v; want %d, true", fd, ok, w)
	}
	if !f.Close() {
		t.Fatal("first Close() = false, want true")
	}
	if f.Close() {
		t.Fatal("second Close() = true, want false")
	}
	if !open(w) {
		t.Fatal("descriptor closed while a user still held it")
	}
	if _, ok := f.Acquire(); ok {
		t.Fatal("Acquire after Close succeeded")
	}
	f.Release()
	if open(w) {
		t.Fatal("descriptor still open after the last Release")
	}
}

func TestFDCloseAtOnce(t *testing.T) {
	r, w := pipeFD(t)
	defer unix.Close(r)
	var f sock.FD
	f.Init(w)
	if !f.Close() || open(w) {
		t.Fatal("Close with no user did not close the descriptor at once")
	}
	if !f.Closed() {
		t.Fatal("Closed() = false after Close")
	}
}

func TestFDHandOff(t *testing.T) {
	r, w := pipeFD(t)
	defer unix.Close(r)
	var f sock.FD
	f.Init(w)
	if _, ok := f.Acquire(); !ok {
		t.Fatal("Acquire failed")
	}
	to := make(chan int, 1)
	if !f.HandOff(to) {
		t.Fatal("HandOff() = false, want true")
	}
	if f.Close() {
		t.Fatal("Close after HandOff = true, want false")
	}
	select {
	case fd := <-to:
		t.Fatalf("descriptor %d handed over while a user held it", fd)
	default:
	}
	f.Release()
	if fd := <-to; fd != w || !open(w) {
		t.Fatalf("handed over %d (open %v), want %d, open", fd, open(fd), w)
	}
	unix.Close(w)
}

// TestFDRace has writers use the descriptor while closers race to close
// it: it must be closed exactly once, and no write may reach it after.
func TestFDRace(t *testing.T) {
	for range 200 {
		r, w := pipeFD(t)
		unix.SetNonblock(r, true)
		var f sock.FD
		f.Init(w)
		var wins atomic.Int32
		var wrote atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for range 50 {
					fd, ok := f.Acquire()
					if !ok {
						return
					}
					if n, err := unix.Write(fd, []byte{1}); err == nil {
						wrote.Add(int64(n))
					}
					f.Release()
				}
			}()
			go func() {
				defer wg.Done()
				if f.Close() {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d Close calls won, want 1", wins.Load())
		}
		if open(w) {
			t.Fatal("descriptor open after every user and closer finished")
		}
		got := 0
		buf := make([]byte, 512)
		for {
			n, err := unix.Read(r, buf)
			if n <= 0 || err != nil {
				break
			}
			got += n
		}
		if int64(got) != wrote.Load() {
			t.Fatalf("pipe got %d bytes, writers wrote %d", got, wrote.Load())
		}
		unix.Close(r)
	}
}

// TestFDSize holds an FD at 8 bytes: every connection holds one, and the
// rare hand-over's channel is kept aside (handTos).
func TestFDSize(t *testing.T) {
	if n := unsafe.Sizeof(sock.FD{}); n != 8 {
		t.Errorf("an FD is %d bytes, want 8", n)
	}
}
