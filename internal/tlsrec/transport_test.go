package tlsrec_test

import (
	"bytes"
	"errors"
	"net"
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
