package tlsrec_test

import (
	"bytes"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/galeio/gale/internal/tlsrec"
)

// waitHooks records a Transport's wait hooks as they are called.
type waitHooks struct{ calls chan string }

func newWaitHooks(tr *tlsrec.Transport) *waitHooks {
	h := &waitHooks{calls: make(chan string, 16)}
	tr.SetWaitHooks(func() { h.calls <- "release" }, func() { h.calls <- "acquire" })
	return h
}

func (h *waitHooks) next(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-h.calls:
		if got != want {
			t.Fatalf("hook %q called, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q within 10 s", want)
	}
}

func (h *waitHooks) none(t *testing.T) {
	t.Helper()
	select {
	case got := <-h.calls:
		t.Fatalf("hook %q called, want none", got)
	default:
	}
}

type readResult struct {
	b   []byte
	err error
}

func read(tr *tlsrec.Transport) chan readResult {
	res := make(chan readResult, 1)
	go func() {
		buf := make([]byte, 100)
		n, err := tr.Read(buf)
		res <- readResult{buf[:n], err}
	}()
	return res
}

// TestTransportWaitHooks: a blocking Read that finds bytes fed calls no
// hook; one that must wait calls release before it waits and acquire
// before it returns what was fed; one that Close ends calls only
// release.
func TestTransportWaitHooks(t *testing.T) {
	tr := tlsrec.New(func(b []byte) (int, error) { return len(b), nil }, nil, nil)
	h := newWaitHooks(tr)
	rec := []byte{22, 3, 1, 0, 4, 1, 0, 0, 0}

	tr.Feed(rec)
	if r := <-read(tr); r.err != nil || !bytes.Equal(r.b, rec) {
		t.Fatalf("Read of a record fed before = % x, %v; want % x", r.b, r.err, rec)
	}
	h.none(t)

	res := read(tr)
	h.next(t, "release")
	tr.Feed(rec[:3]) // not yet a header: Read waits on
	tr.Feed(rec[3:])
	h.next(t, "acquire")
	if r := <-res; r.err != nil || !bytes.Equal(r.b, rec) {
		t.Fatalf("Read of a record fed while it waited = % x, %v; want % x", r.b, r.err, rec)
	}
	h.none(t)

	res = read(tr)
	h.next(t, "release")
	tr.Close()
	if r := <-res; !errors.Is(r.err, net.ErrClosed) {
		t.Fatalf("Read ended by Close = % x, %v; want net.ErrClosed", r.b, r.err)
	}
	h.none(t)
}

// TestEndHandshakeDropsState: once EndHandshake returned the bytes the
// handshake left, the Transport keeps neither its input buffer nor its
// wait hooks (an engine's hooks refer to its pool's slot): what they
// refer to is collected while the Transport lives on.
func TestEndHandshakeDropsState(t *testing.T) {
	tr := tlsrec.New(func(b []byte) (int, error) { return len(b), nil }, nil, nil)
	collected := make(chan string, 2)
	func() {
		slot := new([64]byte) // what the hooks refer to
		runtime.AddCleanup(slot, func(s string) { collected <- s }, "the hooks' slot")
		tr.SetWaitHooks(func() { slot[0]++ }, func() { slot[1]++ })
	}()
	rec := []byte{22, 3, 1, 0, 4, 1, 0, 0, 0}
	tr.Feed(rec)
	if r := <-read(tr); r.err != nil {
		t.Fatal(r.err)
	}
	tr.Feed([]byte{23, 3, 3, 0, 1, 9}) // application data after the handshake
	rest := tr.EndHandshake()
	if !bytes.Equal(rest, []byte{23, 3, 3, 0, 1, 9}) {
		t.Fatalf("EndHandshake = % x, want the record fed after the handshake's", rest)
	}
	for i := 0; i < 10; i++ {
		runtime.GC()
		select {
		case <-collected:
			tr.CloseWith(nil) // no Read waits: nothing to do, no panic
			if n := tr.Buffered(); n != 0 {
				t.Fatalf("Buffered after EndHandshake = %d, want 0", n)
			}
			runtime.KeepAlive(tr)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the wait hooks' referents outlive EndHandshake")
}
