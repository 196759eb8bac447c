//go:build linux

package poller_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// owner runs backend calls on one goroutine, as a loop does: the io_uring
// backend binds its ring to the thread of the first goroutine that uses
// it, and only that goroutine may wait on it or close it.
type owner struct{ fns chan func() }

// ownedBackend opens a backend whose Waits and Close run on an owner
// goroutine; the owner closes it when t ends.
func ownedBackend(t *testing.T) (*owner, poller.Backend) {
	t.Helper()
	be, err := poller.Open(nil)
	if err != nil {
		t.Fatalf("poller.Open: %v", err)
	}
	o := &owner{fns: make(chan func())}
	go func() {
		for f := range o.fns {
			f()
		}
	}()
	t.Cleanup(func() {
		if err := <-o.async(be.Close); err != nil {
			t.Errorf("Close: %v", err)
		}
		close(o.fns)
	})
	return o, be
}

func (o *owner) async(f func() error) <-chan error {
	done := make(chan error, 1)
	o.fns <- func() { done <- f() }
	return done
}

// waitAsync runs be.Wait(timeout) on the owner goroutine; the returned
// channel delivers Wait's result.
func (o *owner) waitAsync(be poller.Backend, timeout time.Duration) <-chan error {
	return o.async(func() error { return be.Wait(timeout, func(*poller.Completion) {}) })
}

func wantReturn(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: Wait = %v", what, err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("%s: Wait did not return within %v", what, waitLimit)
	}
}

// TestWakeBlockedWait: Wake from another goroutine makes a Wait(-1)
// return, whether it comes before or during the Wait.
func TestWakeBlockedWait(t *testing.T) { backendtest.Run(t, testWakeBlockedWait) }

func testWakeBlockedWait(t *testing.T) {
	checkFDs(t)
	o, be := ownedBackend(t)

	done := o.waitAsync(be, -1)
	if err := be.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	wantReturn(t, done, "wake during Wait(-1)")

	// A wake-up sent before Wait is not lost.
	if err := be.Wake(); err != nil {
		t.Fatal(err)
	}
	wantReturn(t, o.waitAsync(be, -1), "wake before Wait(-1)")

	// Many wake-ups, from many goroutines; then one more round.
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 100 {
				if e := be.Wake(); e != nil {
					err = e
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("Wake: %v", err)
		}
	}
	wantReturn(t, o.waitAsync(be, -1), "after a burst of wake-ups")
	done = o.waitAsync(be, -1)
	be.Wake()
	wantReturn(t, done, "the next wake-up")
}

// TestWaitTimeout: a Wait with a timeout and nothing to do returns.
func TestWaitTimeout(t *testing.T) { backendtest.Run(t, testWaitTimeout) }

func testWaitTimeout(t *testing.T) {
	checkFDs(t)
	o, be := ownedBackend(t)
	start := time.Now()
	wantReturn(t, o.waitAsync(be, 20*time.Millisecond), "Wait(20ms)")
	t.Logf("Wait(20ms) took %v", time.Since(start))
	wantReturn(t, o.waitAsync(be, 0), "Wait(0)")
	wantReturn(t, o.waitAsync(be, time.Nanosecond), "Wait(1ns)")
}

// TestCloseReleasesDescriptors: a backend holds two descriptors (epoll and
// eventfd) and Close releases them; descriptors still added stay open.
func TestCloseReleasesDescriptors(t *testing.T) { backendtest.Run(t, testCloseReleasesDescriptors) }

func testCloseReleasesDescriptors(t *testing.T) {
	skipOnNet(t, "it opens no descriptor of its own")
	checkFDs(t)
	fd, _ := streamPair(t, "unix")
	before := countFDs()
	be, err := poller.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := countFDs() - before; got != 2 {
		t.Errorf("Open used %d descriptors, want 2", got)
	}
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Recv(tagA, make([]byte, 8))
	if err := be.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := countFDs(); got != before {
		t.Fatalf("%d descriptors after Close, want %d", got, before)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		t.Fatalf("added descriptor closed by Close: %v", err)
	}
}

// TestOpenManyClose opens and closes backends repeatedly without leaking.
func TestOpenManyClose(t *testing.T) { backendtest.Run(t, testOpenManyClose) }

func testOpenManyClose(t *testing.T) {
	checkFDs(t)
	for range 200 {
		be, err := poller.Open(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
