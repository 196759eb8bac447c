//go:build linux

package poller

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// relayLimit bounds every wait of the relay tests; reaching it fails.
const relayLimit = 10 * time.Second

func newTestRelay(t *testing.T) *relay {
	t.Helper()
	r, err := newRelay()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return r
}

// relaySocket adds one end of a socket pair to r under tag and returns
// the other end; both are closed by t's cleanup.
func relaySocket(t *testing.T, r *relay, tag Tag) (peer int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := r.add(fds[0], tag); err != nil {
		t.Fatal(err)
	}
	return fds[1]
}

// waitReadable calls wait(msec) until it reports tag readable.
func waitReadable(t *testing.T, r *relay, msec int, tag Tag) {
	t.Helper()
	deadline := time.Now().Add(relayLimit)
	for time.Now().Before(deadline) {
		evs, err := r.wait(msec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.tag == tag && ev.readable {
				return
			}
		}
		if msec == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	t.Fatalf("tag %v not reported readable within %v", tag, relayLimit)
}

// notifierOf opens an epoll backend for p, closed by t's cleanup, and
// returns its readiness notifier.
func notifierOf(t *testing.T, p Provider) readiness {
	t.Helper()
	be, err := openEpoll(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be.(*emul).rd
}

// TestEpollHandOffRelays: a HandOff provider's epoll backend waits through
// a relay (aio's loops), any other provider's parks on the runtime poller;
// with one processor, a HandOff provider's parks too.
func TestEpollHandOffRelays(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	t.Run("GOMAXPROCS=1", func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		if rd := notifierOf(t, &handOffProvider{buf: make([]byte, 64)}); !isEpoll(rd) {
			t.Fatalf("with one processor the notifier is %T, want *epoll", rd)
		}
	})
	if rd := notifierOf(t, &handOffProvider{buf: make([]byte, 64)}); !isRelay(rd) {
		t.Fatalf("a HandOff provider's epoll notifier is %T, want *relay", rd)
	}
	if rd := notifierOf(t, tinyProvider{}); !isEpoll(rd) {
		t.Fatalf("another provider's epoll notifier is %T, want *epoll", rd)
	}
}

func isEpoll(rd readiness) bool { _, ok := rd.(*epoll); return ok }
func isRelay(rd readiness) bool { _, ok := rd.(*relay); return ok }

// TestRelayDeliversReadiness: what the waiter collects reaches a parked
// loop, and a busy one (a zero timeout, which never parks) at a later call.
func TestRelayDeliversReadiness(t *testing.T) {
	for _, msec := range []int{-1, 0} {
		r := newTestRelay(t)
		peer := relaySocket(t, r, 7)
		if _, err := unix.Write(peer, []byte("x")); err != nil {
			t.Fatal(err)
		}
		waitReadable(t, r, msec, 7)
		// The waiter waits again once the loop took the batch: a second
		// edge is reported too.
		if _, err := unix.Write(peer, []byte("y")); err != nil {
			t.Fatal(err)
		}
		waitReadable(t, r, msec, 7)
	}
}

// TestRelayWake: wake ends a wait that has nothing to take, from another
// goroutine; a wake before the wait is not lost.
func TestRelayWake(t *testing.T) {
	r := newTestRelay(t)
	done := make(chan error, 1)
	go func() {
		_, err := r.wait(-1, nil)
		done <- err
	}()
	time.Sleep(5 * time.Millisecond) // most likely parked by now; either way it must end
	r.wake()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(relayLimit):
		t.Fatal("wake did not end the wait")
	}
	r.wake()
	go func() {
		_, err := r.wait(-1, nil)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(relayLimit):
		t.Fatal("a wake before the wait was lost")
	}
}

// TestRelayTimeout: a wait with nothing to take and no wake-up ends at its
// timeout, and not before.
func TestRelayTimeout(t *testing.T) {
	r := newTestRelay(t)
	for range 2 { // the second reuses the timer
		start := time.Now()
		evs, err := r.wait(20, nil)
		if err != nil || len(evs) != 0 {
			t.Fatalf("wait(20) = %v, %v; want nothing", evs, err)
		}
		if d := time.Since(start); d < 20*time.Millisecond {
			t.Fatalf("wait(20) returned after %v", d)
		}
	}
}

// TestRelayClose: close ends the waiter whether it is in the kernel or
// holding a batch the loop never took.
func TestRelayClose(t *testing.T) {
	t.Run("waiting", func(t *testing.T) {
		r, err := newRelay()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		if err := r.close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("holding", func(t *testing.T) {
		r, err := newRelay()
		if err != nil {
			t.Fatal(err)
		}
		peer := relaySocket(t, r, 3)
		unix.Write(peer, []byte("x"))
		deadline := time.Now().Add(relayLimit)
		for !r.holding() {
			if time.Now().After(deadline) {
				t.Fatal("the waiter never collected the event")
			}
			time.Sleep(time.Millisecond)
		}
		if err := r.close(); err != nil {
			t.Fatal(err)
		}
	})
}

func (r *relay) holding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// TestRelayError: when epoll_wait fails, the error reaches the loop's
// wait, every time, and the waiter ends. The epoll descriptor's number is
// made to refer to a pipe: the waiter's next epoll_wait fails with EINVAL.
func TestRelayError(t *testing.T) {
	r := newTestRelay(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if err := unix.Dup3(p[0], r.ep.epfd, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	// The waiter sleeps in the old epoll instance, which still has the
	// eventfd: a wake-up makes it call epoll_wait again, on the pipe.
	r.ep.wake()
	deadline := time.Now().Add(relayLimit)
	var err error
	for err == nil && time.Now().Before(deadline) {
		_, err = r.wait(100, nil)
	}
	if err == nil || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("wait = %v, want epoll_wait's EINVAL", err)
	}
	if _, err2 := r.wait(-1, nil); err2 != err {
		t.Fatalf("wait after the error = %v, want %v again", err2, err)
	}
	select {
	case <-r.done:
	case <-time.After(relayLimit):
		t.Fatal("the waiter did not end after the error")
	}
}

// TestEpollTransientHandOffRelays: netconn's provider (Transient and
// HandOff) waits through the relay on epoll too.
func TestEpollTransientHandOffRelays(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	if rd := notifierOf(t, &transientHandOff{handOffProvider{buf: make([]byte, 64)}}); !isRelay(rd) {
		t.Fatalf("notifier is %T, want *relay", rd)
	}
}
