//go:build unix

package loop_test

import (
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// manualClock moves only when the test advances it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestManualClockTimers drives a loop whose clock moves only by hand:
// timers fire once the clock passes their deadline, whatever the real
// time, and receive the clock's time.
func TestManualClockTimers(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &manualClock{now: t0}
	l := start(t, loop.Config{Clock: clock})

	var a, b loop.Timer // loop goroutine only
	var firedA, firedB []time.Time
	a.Fire = func(now time.Time) { firedA = append(firedA, now) }
	b.Fire = func(now time.Time) { firedB = append(firedB, now) }
	do(t, l, func(l *loop.Loop) {
		if got := l.Now(); !got.Equal(t0) {
			t.Errorf("Now() = %v, want %v", got, t0)
		}
		l.Schedule(&a, t0.Add(10*time.Second))
		l.Schedule(&b, t0.Add(20*time.Second))
		if got := l.Timers(); got != 2 {
			t.Errorf("Timers() = %d, want 2", got)
		}
	})
	// check runs a task after a second one, so the iteration that read the
	// clock has fired its timers.
	check := func(what string, f func(l *loop.Loop)) {
		t.Helper()
		do(t, l, func(*loop.Loop) {})
		do(t, l, f)
		if t.Failed() {
			t.Fatalf("%s: failed", what)
		}
	}
	for range 3 {
		check("before advancing", func(l *loop.Loop) {
			if len(firedA)+len(firedB) != 0 || !a.Scheduled() || !b.Scheduled() {
				t.Errorf("timers fired before the clock moved: a %v, b %v", firedA, firedB)
			}
		})
	}
	clock.Advance(10*time.Second - time.Nanosecond)
	check("just before a", func(l *loop.Loop) {
		if len(firedA) != 0 {
			t.Errorf("a fired 1ns before its deadline")
		}
	})
	clock.Advance(time.Nanosecond)
	check("at a", func(l *loop.Loop) {
		if len(firedA) != 1 || !firedA[0].Equal(t0.Add(10*time.Second)) {
			t.Errorf("a fired at %v, want once at %v", firedA, t0.Add(10*time.Second))
		}
		if len(firedB) != 0 || !b.Scheduled() || a.Scheduled() {
			t.Errorf("at 10s: b fired %d times, a.Scheduled() = %v, b.Scheduled() = %v; want 0, false, true",
				len(firedB), a.Scheduled(), b.Scheduled())
		}
		if got := l.Timers(); got != 1 {
			t.Errorf("Timers() = %d, want 1", got)
		}
		if got, want := l.Now(), t0.Add(10*time.Second); !got.Equal(want) {
			t.Errorf("Now() = %v, want %v", got, want)
		}
	})
	clock.Advance(time.Hour)
	check("past b", func(l *loop.Loop) {
		if len(firedA) != 1 || len(firedB) != 1 {
			t.Errorf("fired a %d, b %d times, want 1, 1", len(firedA), len(firedB))
		}
		if got := l.Timers(); got != 0 {
			t.Errorf("Timers() = %d, want 0", got)
		}
		// Re-arm a in the past: it fires in this iteration, after this task.
		l.Schedule(&a, t0)
	})
	check("re-armed", func(l *loop.Loop) {
		if len(firedA) != 2 {
			t.Errorf("re-armed timer fired %d times in all, want 2", len(firedA))
		}
	})
}

// TestWallClockTimer checks that with the default clock a short timer
// fires without any task waking the loop.
func TestWallClockTimer(t *testing.T) {
	l := start(t, loop.Config{})
	fired := make(chan time.Time, 1)
	tm := &loop.Timer{Fire: func(now time.Time) { fired <- now }}
	var when time.Time
	do(t, l, func(l *loop.Loop) {
		when = l.Now().Add(5 * time.Millisecond)
		l.Schedule(tm, when)
	})
	select {
	case now := <-fired:
		if now.Before(when) {
			t.Fatalf("timer fired at %v, before its deadline %v", now, when)
		}
	case <-time.After(waitLimit):
		t.Fatalf("timer did not fire within %v", waitLimit)
	}
}

// recorded is a copy of a completion.
type recorded struct {
	op    loop.Op
	n     int
	errno error
	buf   []byte
}

// recorder is an Owner that copies the completions it gets.
type recorder struct {
	got chan recorded
}

func (r *recorder) Complete(l *loop.Loop, c loop.Completion) {
	var errno error
	if e := c.Errno(); e != 0 {
		errno = e
	}
	r.got <- recorded{op: c.Op(), n: c.N(), errno: errno, buf: append([]byte(nil), c.Bytes()...)}
}

func socketpair(t *testing.T) (a, b int) {
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

// TestAttachReleaseCounts checks Conns and that completions reach the
// Owner of the tag until it is released.
func TestAttachReleaseCounts(t *testing.T) {
	l := start(t, loop.Config{})
	a, peerA := socketpair(t)
	b, _ := socketpair(t)
	ra := &recorder{got: make(chan recorded, 4)}
	rb := &recorder{got: make(chan recorded, 4)}
	var ta, tb loop.Tag
	do(t, l, func(l *loop.Loop) {
		var err error
		if ta, err = l.Attach(a, true, ra); err != nil {
			t.Errorf("Attach(a): %v", err)
			return
		}
		if tb, err = l.Attach(b, true, rb); err != nil {
			t.Errorf("Attach(b): %v", err)
			return
		}
		if ta == tb || ta.Gen() == 0 || tb.Gen() == 0 {
			t.Errorf("tags %#x, %#x: want distinct tags with non-zero generations", uint64(ta), uint64(tb))
		}
		if got := l.Conns(); got != 2 {
			t.Errorf("Conns() = %d, want 2", got)
		}
		l.Recv(ta, make([]byte, 16))
	})
	if t.Failed() {
		t.FailNow()
	}
	if _, err := unix.Write(peerA, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ra.got:
		if c.op != loop.OpRecv || c.errno != nil || string(c.buf) != "ping" {
			t.Fatalf("completion = %+v, want OpRecv \"ping\"", c)
		}
	case <-time.After(waitLimit):
		t.Fatal("no completion for the attached descriptor")
	}
	do(t, l, func(l *loop.Loop) {
		if err := l.Release(ta); err != nil {
			t.Errorf("Release(a) = %v", err)
		}
		if err := l.Release(ta); err != nil { // stale: no-op
			t.Errorf("second Release(a) = %v, want nil", err)
		}
		if got := l.Conns(); got != 1 {
			t.Errorf("Conns() after Release = %d, want 1", got)
		}
		if err := l.Release(tb); err != nil {
			t.Errorf("Release(b) = %v", err)
		}
		if got := l.Conns(); got != 0 {
			t.Errorf("Conns() = %d, want 0", got)
		}
	})
	if len(rb.got) != 0 {
		t.Fatalf("owner b got %d completions, want 0", len(rb.got))
	}
}

// TestAttachError checks that a failing Add leaves no slot behind.
func TestAttachError(t *testing.T) {
	l := start(t, loop.Config{})
	do(t, l, func(l *loop.Loop) {
		if _, err := l.Attach(-1, true, &recorder{}); err == nil {
			t.Error("Attach(-1) succeeded, want an error")
		}
		if got := l.Conns(); got != 0 {
			t.Errorf("Conns() after a failed Attach = %d, want 0", got)
		}
	})
}

// nowRecorder is an Owner that records the loop's time when its
// completions are delivered.
type nowRecorder struct{ got chan time.Time }

func (r *nowRecorder) Complete(l *loop.Loop, c loop.Completion) { r.got <- l.Now() }

// TestNowFreshInCompletions checks that a completion delivered after the
// loop slept sees the time it woke at: owners stamp activity and schedule
// timers from there. The loop used to read its clock only after delivering
// them, so they saw the time it went to sleep (an idle timer armed for a
// connection accepted after a long sleep fired at once).
func TestNowFreshInCompletions(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := &manualClock{now: t0}
		l := start(t, loop.Config{Clock: clock})
		a, peer := socketpair(t)
		r := &nowRecorder{got: make(chan time.Time, 1)}
		var tag loop.Tag
		do(t, l, func(l *loop.Loop) {
			var err error
			if tag, err = l.Attach(a, true, r); err != nil {
				t.Fatal(err)
			}
			l.Recv(tag, make([]byte, 16))
		})
		clock.Advance(time.Hour) // the loop sleeps through it
		if _, err := unix.Write(peer, []byte("x")); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-r.got:
			if want := t0.Add(time.Hour); !got.Equal(want) {
				t.Errorf("Now() in Complete = %v, want %v (the time the loop woke at)", got, want)
			}
		case <-time.After(waitLimit):
			t.Fatal("no completion")
		}
		do(t, l, func(l *loop.Loop) { l.Release(tag) })
	})
}
