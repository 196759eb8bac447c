package loop_test

import (
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// TestWakeAfterExit pauses a poster between its decision to wake the loop
// and the wake-up, lets the loop exit meanwhile (a timer wakes it for
// Stop's final task), fills the freed descriptor numbers with eventfds,
// then lets the poster go on: its wake-up must not reach any of them.
// Before the backends guarded their wake-up descriptor, it wrote eight
// bytes into whichever eventfd took the number.
func TestWakeAfterExit(t *testing.T) {
	for _, stop := range []bool{false, true} {
		name := "Post"
		if stop {
			name = "Stop"
		}
		t.Run(name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T) { wakeAfterExit(t, stop) })
		})
	}
}

func wakeAfterExit(t *testing.T, viaStop bool) {
	l, err := loop.New(loop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	var tm loop.Timer
	tm.Fire = func(time.Time) {}
	do(t, l, func(l *loop.Loop) { l.Schedule(&tm, l.Now().Add(100*time.Millisecond)) })
	deadline := time.Now().Add(waitLimit)
	for !l.Sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("loop never went to sleep")
		}
		time.Sleep(time.Millisecond)
	}

	paused, release := make(chan struct{}), make(chan struct{})
	restore := loop.SetWakeHook(func() {
		close(paused)
		<-release
	})
	defer restore()
	waker := make(chan struct{})
	go func() {
		defer close(waker)
		if viaStop {
			l.Stop(nil)
		} else {
			l.Post(loop.Func(func(*loop.Loop) {}))
		}
	}()
	wait(t, paused, "the waker reaching its wake-up")
	if !viaStop {
		go l.Stop(nil) // its own wake-up is skipped: one is pending
	}
	wait(t, l.Done(), "loop exit on its timer")

	var fds []int
	for range 64 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	close(release)
	wait(t, waker, "the waker to finish")
	var buf [8]byte
	for _, fd := range fds {
		if n, _ := unix.Read(fd, buf[:]); n == 8 {
			t.Fatalf("the wake-up of a stopped loop wrote to descriptor %d, which a new eventfd had taken", fd)
		}
	}
}
