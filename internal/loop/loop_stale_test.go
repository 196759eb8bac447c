//go:build unix

package loop_test

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// staleAccept delivers, once, an accept completion under a tag that no
// slot owns, carrying the descriptor in fd.
type staleAccept struct {
	poller.Backend
	fd   int
	sent atomic.Bool
}

func (b *staleAccept) Wait(timeout time.Duration, fn func(*poller.Completion)) error {
	if b.sent.CompareAndSwap(false, true) {
		fn(&poller.Completion{Tag: poller.MakeTag(7, 3), Op: poller.OpAccept, N: b.fd, BufID: -1})
		return nil
	}
	return b.Backend.Wait(timeout, fn)
}

// TestStaleAcceptClosesDescriptor: an accept that completed after its
// listener's tag was released has no owner to take the connection; the
// loop must close it rather than leak it.
func TestStaleAcceptClosesDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	be := &staleAccept{fd: fd}
	l := start(t, loop.Config{Open: func(p poller.Provider) (poller.Backend, error) {
		inner, err := poller.Open(p)
		be.Backend = inner
		return be, err
	}})
	do(t, l, func(*loop.Loop) {}) // an iteration has run: the completion was seen
	do(t, l, func(*loop.Loop) {})
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		unix.Close(fd)
		t.Errorf("descriptor of a stale accept: fcntl error %v, want EBADF (closed)", err)
	}
}
