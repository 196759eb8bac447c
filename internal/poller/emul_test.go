//go:build linux

package poller

import (
	"testing"

	"golang.org/x/sys/unix"
)

// scripted is a readiness notifier whose events the test injects.
type scripted struct {
	pending []event
	added   map[int]Tag
	deleted []int
}

func (s *scripted) add(fd int, tag Tag) error { s.added[fd] = tag; return nil }
func (s *scripted) del(fd int) error          { s.deleted = append(s.deleted, fd); return nil }
func (s *scripted) wake() error               { return nil }
func (s *scripted) close() error              { return nil }

func (s *scripted) wait(msec int, evs []event) ([]event, error) {
	evs = append(evs, s.pending...)
	s.pending = s.pending[:0]
	return evs, nil
}

// scriptedPair returns a connected pair of Unix stream sockets, closed at
// the test's end, and an emul over a scripted notifier.
func scriptedPair(t *testing.T) ([2]int, *scripted, *emul) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	rd := &scripted{added: map[int]Tag{}}
	return fds, rd, newEmul(rd, nil, Epoll)
}

func collect(e *emul) []Completion {
	var cs []Completion
	e.Wait(0, func(c *Completion) {
		cc := *c
		cc.Buf = append([]byte(nil), c.Buf...)
		cs = append(cs, cc)
	})
	return cs
}

// TestStaleEventDropped injects an event carrying the previous generation
// of a reused slot: it must not touch the new owner's parked receive, which
// waits for an edge of its own.
func TestStaleEventDropped(t *testing.T) {
	fds, rd, e := scriptedPair(t)
	a, b := MakeTag(0, 1), MakeTag(0, 2)

	if err := e.Add(fds[0], a, true); err != nil {
		t.Fatal(err)
	}
	e.Recv(a, make([]byte, 8)) // EAGAIN: parked
	if err := e.Remove(a); err != nil {
		t.Fatal(err)
	}
	if len(rd.deleted) != 1 || rd.deleted[0] != fds[0] {
		t.Fatalf("Remove deleted %v from the notifier, want [%d]", rd.deleted, fds[0])
	}
	if err := e.Add(fds[0], b, true); err != nil {
		t.Fatal(err)
	}
	if rd.added[fds[0]] != b {
		t.Fatalf("notifier tag for fd = %#x, want %#x", uint64(rd.added[fds[0]]), uint64(b))
	}
	e.Recv(b, make([]byte, 8)) // EAGAIN: parked, waits for b's edge
	if cs := collect(e); len(cs) != 0 {
		t.Fatalf("completions %v, want none", cs)
	}
	if _, err := unix.Write(fds[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	rd.pending = append(rd.pending,
		event{tag: a, readable: true, writable: true},             // stale generation
		event{tag: MakeTag(7, 1), readable: true, writable: true}, // unknown slot
	)
	if cs := collect(e); len(cs) != 0 {
		t.Fatalf("stale events produced completions %+v, want none", cs)
	}
	rd.pending = append(rd.pending, event{tag: b, readable: true})
	cs := collect(e)
	if len(cs) != 1 || cs[0].Tag != b || cs[0].Op != OpRecv || string(cs[0].Buf) != "x" {
		t.Fatalf("completions %+v, want b's receive of \"x\"", cs)
	}
}

// TestWakeTagUnreachable: the wake-up tag is not one a loop can hand out.
func TestWakeTagUnreachable(t *testing.T) {
	if wakeTag.Slot() != ^uint32(0) || wakeTag.Gen() != ^uint32(0) {
		t.Fatalf("wakeTag = %#x, want all ones", uint64(wakeTag))
	}
}

// TestIORecordReleased checks that a descriptor holds an fdIO only while
// an operation in flight holds a buffer: after a send that completes at
// once, after a parked send once its edge comes, after a receive into a
// given buffer and after a cancelled one, the descriptor has none, and
// the records are reused rather than made anew.
func TestIORecordReleased(t *testing.T) {
	fds, rd, e := scriptedPair(t)
	tag := MakeTag(0, 1)
	if err := e.Add(fds[0], tag, true); err != nil {
		t.Fatal(err)
	}
	st := e.state(tag)
	held := func(what string) {
		t.Helper()
		if st.io != 0 {
			t.Errorf("%s: the descriptor holds an fdIO, want none", what)
		}
	}

	e.Send(tag, [][]byte{[]byte("hello")}) // written at once
	if cs := collect(e); len(cs) != 1 || cs[0].N != 5 {
		t.Fatalf("send: completions %v, want one of 5 bytes", cs)
	}
	held("after a send written at once")

	big := make([]byte, 4<<20) // more than the socket takes: parked
	e.Send(tag, [][]byte{big})
	if cs := collect(e); len(cs) != 0 {
		t.Fatalf("big send: completions %v before the peer read, want none", cs)
	}
	if st.io == 0 {
		t.Fatal("a parked send holds no fdIO")
	}
	drained := make(chan struct{})
	defer func() { <-drained }() // before the descriptors close
	go func() {
		defer close(drained)
		buf := make([]byte, 64<<10)
		for n := 0; n < len(big)+5; {
			k, err := unix.Read(fds[1], buf)
			if k <= 0 || err != nil {
				if err == unix.EAGAIN {
					continue
				}
				return
			}
			n += k
		}
	}()
	var sent int
	for sent < len(big) {
		rd.pending = append(rd.pending, event{tag: tag, writable: true})
		for _, c := range collect(e) {
			sent = c.N
		}
	}
	held("after a parked send completed")

	e.Recv(tag, make([]byte, 8)) // nothing to read: parked with its buffer
	if st.io == 0 {
		t.Fatal("a parked receive into a given buffer holds no fdIO")
	}
	e.Cancel(tag, OpRecv)
	if cs := collect(e); len(cs) != 1 || cs[0].Err != unix.ECANCELED {
		t.Fatalf("cancel: completions %v, want one ECANCELED", cs)
	}
	held("after a cancelled receive")

	spares, made := len(e.ios.free), e.ios.n
	e.Recv(tag, make([]byte, 8))
	if len(e.ios.free) != spares-1 || e.ios.n != made {
		t.Errorf("a receive took a new fdIO with %d spare, want a spare", spares)
	}
	if err := e.Remove(tag); err != nil {
		t.Fatal(err)
	}
	if len(e.ios.free) != spares {
		t.Errorf("Remove left %d spare fdIOs, want %d: the removed descriptor's back", len(e.ios.free), spares)
	}
}

// tinyProvider lends 16-byte buffers, so a socket with data waiting
// serves many receives in a row.
type tinyProvider struct{}

func (tinyProvider) Provide() ([]byte, int) { return make([]byte, 16), 0 }
func (tinyProvider) Commit(int, int)        {}

// TestLaterHoldsTagOnce: a nil-buffer receive waits in later to be served
// at delivery; when a drain stops at maxRounds with it still there and
// the next poll reports the socket readable, the event serves it, and the
// owner's resubmission must not queue the tag a second time. It did:
// every duplicate then served one more receive per round, so one Wait
// served ever more receives of one socket (TestWaitYieldsToStream saw 70
// where the bound is 64, in CI).
func TestLaterHoldsTagOnce(t *testing.T) {
	fds, rd, _ := scriptedPair(t)
	e := newEmul(rd, tinyProvider{}, Epoll)
	tag := MakeTag(0, 1)
	if err := e.Add(fds[0], tag, true); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(fds[1], make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	served := 0
	resubmit := func(c *Completion) {
		if c.Tag == tag && c.Op == OpRecv && c.N > 0 {
			served++
			e.Recv(tag, nil)
		}
	}
	e.Recv(tag, nil)
	for range maxSkips + 1 {
		// One readable edge, for whichever Wait polls (the first ones
		// only drain what is queued).
		rd.pending = append(rd.pending[:0], event{tag: tag, readable: true})
		served = 0
		if err := e.Wait(0, resubmit); err != nil {
			t.Fatal(err)
		}
		if n := count(e.later, tag); n > 1 {
			t.Fatalf("after a Wait that served %d receives, later holds the tag %d times, want at most once", served, n)
		}
	}
	if limit := 2*maxRounds + 1; served > limit {
		t.Errorf("the Wait that polled served %d receives of one socket, want at most %d", served, limit)
	}
}

func count(tags []Tag, tag Tag) int {
	n := 0
	for _, x := range tags {
		if x == tag {
			n++
		}
	}
	return n
}
