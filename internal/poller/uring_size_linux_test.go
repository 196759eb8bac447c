//go:build linux

package poller

import (
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestURStateSize holds the io_uring backend's record of a descriptor to
// 24 bytes: the Go memory of operations in flight and spilled input are
// in a urIO, taken only while there is some and named by index, and the
// rarer flags are bits.
func TestURStateSize(t *testing.T) {
	if n := unsafe.Sizeof(urState{}); n > 24 {
		t.Errorf("a urState is %d bytes, want at most 24", n)
	}
}

// TestURingIdleHoldsNoIO: once a connection's receive into its own
// buffer, its send and its multishot's input are served, and only the
// multishot receive from the buffer ring is left in flight, as for an
// idle connection, its state holds no urIO.
func TestURingIdleHoldsNoIO(t *testing.T) {
	b, tag, fds := urPair(t, &spillProvider{buf: make([]byte, 4096)}, 8)
	var got []Completion
	wait := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for len(got) < want && time.Now().Before(deadline) {
			if err := b.Wait(10*time.Millisecond, func(c *Completion) { got = append(got, *c) }); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) < want {
			t.Fatalf("%d completions, want %d", len(got), want)
		}
	}
	b.Recv(tag, make([]byte, 16))
	b.Send(tag, [][]byte{[]byte("ab"), []byte("cd")}) // a sendmsg: the record's msghdr
	unix.Write(fds[1], []byte("x"))
	wait(2)
	b.Recv(tag, nil) // the multishot
	unix.Write(fds[1], []byte("y"))
	wait(3)
	b.Recv(tag, nil) // asked again: the multishot goes on, idle
	if err := b.Wait(10*time.Millisecond, func(c *Completion) { got = append(got, *c) }); err != nil {
		t.Fatal(err)
	}
	st := b.state(tag)
	if st.rk != kRecvMulti {
		t.Fatalf("receive kernel operation %d, want the multishot (%d)", st.rk, kRecvMulti)
	}
	if st.io != 0 {
		t.Errorf("an idle connection holds a urIO: %+v", *b.rec(st))
	}
	if len(b.ioFree) == 0 {
		t.Error("no record went back to the free list")
	}
}
