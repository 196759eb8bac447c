//go:build unix

package aio_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// regBound bounds how long a request on another connection, or a Free,
// may take while a registration is held in its system calls. Such a
// request needs no system call of the registration, so it is prompt; a
// registry that holds its lock across them makes it wait for ever.
const regBound = 3 * time.Second

// regStall holds every registration in its system calls, right after the
// dup of the caller's descriptor, until it is opened (at the latest at
// cleanup).
type regStall struct {
	entered chan struct{} // one per registration that reached the dup
	release chan struct{}
	once    sync.Once
	wg      sync.WaitGroup // the test's goroutines that may wait on the stall
}

// stallRegistrations installs a regStall for the rest of the test. At
// cleanup it opens the stall and joins the goroutines started with goDo;
// call it after collect, so that this runs before the watcher closes.
func stallRegistrations(t testing.TB) *regStall {
	s := &regStall{entered: make(chan struct{}, 64), release: make(chan struct{})}
	restore := aio.SetAfterDup(func() {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-s.release
	})
	t.Cleanup(func() {
		s.open()
		restore()
		s.wg.Wait()
	})
	return s
}

func (s *regStall) open() { s.once.Do(func() { close(s.release) }) }

// goDo runs f on a goroutine joined at cleanup.
func (s *regStall) goDo(f func()) { s.wg.Go(f) }

// waitEntered waits until one more registration is held, for at most d.
func (s *regStall) waitEntered(t testing.TB, d time.Duration, what string) {
	t.Helper()
	select {
	case <-s.entered:
	case <-time.After(d):
		t.Fatalf("%s: no registration reached its dup within %v", what, d)
	}
}

// recvErr returns what ch delivers, failing the test after d.
func recvErr(t testing.TB, ch <-chan error, d time.Duration, what string) error {
	t.Helper()
	return recvWithin(t, ch, d, what+": did not return")
}

// recvWithin returns what ch delivers, failing the test with what after d.
func recvWithin[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s within %v", what, d)
	}
	panic("unreachable")
}

// TestSubmitDuringRegistration: a registration held in its system calls
// (the dup of a new conn's descriptor) does not hold up requests on a
// connection already delegated: a Write and a Read submitted on it
// meanwhile both complete.
func TestSubmitDuringRegistration(t *testing.T) { backendtest.Run(t, testSubmitDuringRegistration) }

func testSubmitDuringRegistration(t *testing.T) {
	old, oldPeer := tcpPair(t)
	fresh, _ := tcpPair(t)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	delegate(t, w, col, old, oldPeer)

	s := stallRegistrations(t)
	registered := make(chan error, 1)
	s.goDo(func() { registered <- w.Read("fresh", fresh, make([]byte, 8)) })
	s.waitEntered(t, waitTimeout, "Read on a new conn")

	submitted := make(chan error, 2)
	s.goDo(func() {
		submitted <- w.Write("write", old, []byte("hello"))
		submitted <- w.Read("read", old, make([]byte, 8))
	})
	writePeer(t, oldPeer, "abc")
	got := map[any]result{}
	timer := time.NewTimer(regBound)
	defer timer.Stop()
	for len(got) < 2 {
		select {
		case r := <-col.ch:
			got[r.Context] = r
		case <-timer.C:
			t.Fatalf("with a registration held in its dup, %d of 2 requests on a delegated conn completed within %v: %v",
				len(got), regBound, got)
		}
	}
	for range 2 {
		if err := recvErr(t, submitted, regBound, "submission"); err != nil {
			t.Errorf("submission on the delegated conn = %v, want nil", err)
		}
	}
	if r := got["write"]; r.Error != nil || r.Size != 5 {
		t.Errorf("Write on the delegated conn = %v, want 5 bytes, nil", r)
	}
	if r := got["read"]; r.Error != nil || string(r.Data) != "abc" {
		t.Errorf("Read on the delegated conn = %v, want \"abc\", nil", r)
	}
	if b := readPeer(t, oldPeer, 5); string(b) != "hello" {
		t.Errorf("peer read %q, want %q", b, "hello")
	}

	s.open()
	if err := recvErr(t, registered, waitTimeout, "Read on the new conn"); err != nil {
		t.Errorf("Read on the new conn = %v, want nil", err)
	}
}

// TestRegisterSameConnConcurrently: two requests that delegate the same
// conn at once each duplicate its descriptor; one duplicate wins and the
// other is closed, and both requests run on the winner.
func TestRegisterSameConnConcurrently(t *testing.T) {
	backendtest.Run(t, testRegisterSameConnConcurrently)
}

func testRegisterSameConnConcurrently(t *testing.T) {
	c, peer := tcpPair(t)
	ino := sockInode(t, c)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)

	s := stallRegistrations(t)
	errs := make(chan error, 2)
	s.goDo(func() { errs <- w.Read("read", c, make([]byte, 8)) })
	s.goDo(func() { errs <- w.Write("write", c, []byte("x")) })
	s.waitEntered(t, waitTimeout, "first request")
	s.waitEntered(t, regBound, "second request on the same conn, while the first is held in its dup")
	if fds, ok := openFDs(); ok {
		if n := len(socketFDs(fds, ino)); n != 3 {
			t.Errorf("with two registrations in their dup, %d fds refer to the socket, want 3 (the conn's, two duplicates)", n)
		}
	}
	s.open()
	for range 2 {
		if err := recvErr(t, errs, waitTimeout, "submission"); err != nil {
			t.Errorf("submission = %v, want nil", err)
		}
	}
	if r := waitResult(t, col); r.Context != "write" || r.Error != nil || r.Size != 1 {
		t.Fatalf("first completion = %v, want the 1-byte write", r)
	}
	if b := readPeer(t, peer, 1); string(b) != "x" {
		t.Errorf("peer read %q, want %q", b, "x")
	}
	writePeer(t, peer, "y")
	if r := waitResult(t, col); r.Context != "read" || r.Error != nil || string(r.Data) != "y" {
		t.Fatalf("second completion = %v, want the read of \"y\"", r)
	}
	if fds, ok := openFDs(); ok {
		if n := len(socketFDs(fds, ino)); n != backendtest.SocketRefs() {
			t.Errorf("after both registrations, %d fds refer to the socket, want %d (the winner's duplicate, and package net's on the net backend)", n, backendtest.SocketRefs())
		}
	}
	if err := w.Free(c); err != nil {
		t.Fatalf("Free = %v, want nil", err)
	}
	expectEOF(t, peer)
}

// TestFreeDuringRegistration: Free of a conn whose first request is in
// the middle of delegating it returns without waiting for that, and the
// request then fails with an error matching net.ErrClosed instead of
// delegating a conn Free let go: its duplicate is closed, the peer reads
// end of file, and no descriptor refers to the socket.
func TestFreeDuringRegistration(t *testing.T) { backendtest.Run(t, testFreeDuringRegistration) }

func testFreeDuringRegistration(t *testing.T) {
	c, peer := tcpPair(t)
	ino := sockInode(t, c)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)

	s := stallRegistrations(t)
	submitted := make(chan error, 1)
	s.goDo(func() { submitted <- w.Read("read", c, make([]byte, 8)) })
	s.waitEntered(t, waitTimeout, "Read")
	freed := make(chan error, 1)
	s.goDo(func() { freed <- w.Free(c) })
	if err := recvErr(t, freed, regBound, "Free while the conn's registration is in its dup"); err != nil {
		t.Fatalf("Free = %v, want nil", err)
	}
	s.open()
	err := recvErr(t, submitted, waitTimeout, "Read")
	if err == nil {
		r := waitResult(t, col)
		err = r.Error
		if r.Context != "read" {
			t.Errorf("completion = %v, want the read", r)
		}
	}
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read racing with Free = %v, want an error matching net.ErrClosed", err)
	}
	if got := expectEOF(t, peer); len(got) != 0 {
		t.Errorf("peer read %q, want EOF", got)
	}
	if fds, ok := openFDs(); ok {
		if n := socketFDs(fds, ino); len(n) != 0 {
			t.Errorf("fds %v still refer to the freed socket", n)
		}
	}
}

// TestRegisterSameConnRace: many requests delegate one conn at the same
// time, without a stall, round after round: every one of them runs on the
// connection (a registration that finds the caller's conn already closed
// by a faster one uses that one's delegation instead of failing).
func TestRegisterSameConnRace(t *testing.T) { backendtest.Run(t, testRegisterSameConnRace) }

func testRegisterSameConnRace(t *testing.T) {
	const rounds, goroutines = 100, 8
	w := stWatcher(t, aio.Config{})
	col := stCollect(t, w)
	stWarmNet(t)
	before := stFDs(t)
	failed := 0
	for round := range rounds {
		c, peer := stSocketPair(t)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				<-start
				if err := w.Write(g, c, []byte{byte(g)}); err != nil {
					t.Errorf("round %d: Write = %v, want nil", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		for range goroutines {
			if r := col.next(t); r.Error != nil || r.Size != 1 {
				failed++
				t.Logf("round %d: write %v = %d bytes, %v, want 1, nil", round, r.Context, r.Size, r.Error)
			}
		}
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v, want nil", err)
		}
		peer.SetReadDeadline(time.Now().Add(stTimeout))
		if b, err := io.ReadAll(peer); err != nil || len(b) != goroutines-failed {
			t.Errorf("round %d: peer read %d bytes, %v, want %d, EOF", round, len(b), err, goroutines)
		}
		peer.Close()
		if failed > 0 {
			t.Fatalf("round %d: %d of %d concurrent delegating writes failed", round, failed, goroutines)
		}
	}
	stCheckFDs(t, before)
}
