//go:build unix

package restart_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/restart"
)

const testTimeout = 10 * time.Second

// offer offers a new loopback listener named "http" at a fresh path.
func offer(t *testing.T) (string, net.Listener, *restart.Handover) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	path := filepath.Join(t.TempDir(), "ctl")
	h, err := restart.Offer(path, map[string]net.Listener{"http": ln})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return path, ln, h
}

func take(t *testing.T, path string) *restart.Takeover {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	tk, err := restart.Take(ctx, path)
	if err != nil {
		t.Fatalf("Take(%s) = %v", path, err)
	}
	t.Cleanup(func() {
		tk.Close()
		for _, ln := range tk.Listeners {
			ln.Close()
		}
	})
	return tk
}

// TestHandover takes a listener over in-process: the taken copy accepts
// what is dialed to the offered one's address, Ready is confirmed, Taken
// is closed, and the control socket is gone, so the path is free again.
func TestHandover(t *testing.T) {
	path, old, h := offer(t)
	tk := take(t, path)
	ln := tk.Listeners["http"]
	if ln == nil || ln.Addr().String() != old.Addr().String() {
		t.Fatalf("Take's listeners = %v, want http at %v", tk.Listeners, old.Addr())
	}
	select {
	case <-h.Taken():
		t.Fatal("Taken before Ready")
	default:
	}
	if err := tk.Ready(); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	select {
	case <-h.Taken():
	case <-time.After(testTimeout):
		t.Fatal("Taken not closed after Ready")
	}
	old.Close() // the old process stops accepting; the socket stays open
	c, err := net.DialTimeout("tcp", ln.Addr().String(), testTimeout)
	if err != nil {
		t.Fatalf("dial after the old listener closed: %v", err)
	}
	defer c.Close()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(testTimeout))
	a, err := ln.Accept()
	if err != nil {
		t.Fatalf("the taken listener's Accept = %v", err)
	}
	a.Close()
	h2, err := restart.Offer(path, tk.Listeners)
	if err != nil {
		t.Fatalf("Offer at the path after the hand-over = %v, want it free", err)
	}
	h2.Close()
}

// TestHandoverBusy: a second taker, while the first has not said ready,
// is refused with ErrBusy.
func TestHandoverBusy(t *testing.T) {
	path, _, _ := offer(t)
	take(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := restart.Take(ctx, path); !errors.Is(err, restart.ErrBusy) {
		t.Fatalf("second Take = %v, want ErrBusy", err)
	}
}

// TestHandoverTakerGoes: a taker that gives up (or dies) before Ready
// leaves the offer open, and the next one takes the listeners.
func TestHandoverTakerGoes(t *testing.T) {
	path, _, h := offer(t)
	first := take(t, path)
	first.Close()
	deadline := time.Now().Add(testTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		tk, err := restart.Take(ctx, path)
		cancel()
		if errors.Is(err, restart.ErrBusy) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // the old process has not seen the first go yet
			continue
		}
		if err != nil {
			t.Fatalf("Take after the first taker went = %v", err)
		}
		if err := tk.Ready(); err != nil {
			t.Fatalf("Ready = %v", err)
		}
		for _, ln := range tk.Listeners {
			ln.Close()
		}
		break
	}
	<-h.Taken()
	if err := first.Ready(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Ready after Close = %v, want net.ErrClosed", err)
	}
}

// TestOfferStale: a socket file left by a process that ended is removed;
// one a live offer listens on makes Offer fail with ErrBusy. Take where
// nobody offers fails with fs.ErrNotExist, or ECONNREFUSED on a stale file.
func TestOfferStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctl")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := restart.Take(ctx, path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Take with no socket = %v, want fs.ErrNotExist", err)
	}
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	if _, err := restart.Take(ctx, path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Take at a stale socket = %v, want ECONNREFUSED", err)
	}
	h, err := restart.Offer(path, nil)
	if err != nil {
		t.Fatalf("Offer over a stale socket file = %v, want it removed", err)
	}
	defer h.Close()
	if _, err := restart.Offer(path, nil); !errors.Is(err, restart.ErrBusy) {
		t.Errorf("Offer where a live offer listens = %v, want ErrBusy", err)
	}
	if _, err := restart.Offer(path+"x", map[string]net.Listener{"a\nb": nil}); err == nil {
		t.Error("Offer of a name with a newline = nil, want an error")
	}
}

// TestTakeTimeout: Take gives up when ctx ends before the offer comes
// (a control socket nobody answers on).
func TestTakeTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctl")
	mute, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = restart.Take(ctx, path)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Take from a mute socket = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Take took %v, want about 100ms", d)
	}
}
