//go:build linux

package poller_test

import (
	"errors"
	"syscall"
	"testing"
	"unsafe"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// TestAutoFallsBack injects each reason io_uring can be unusable: Auto
// (preferring io_uring) opens epoll instead, and IOURing fails with an
// error that says why and wraps uring.ErrUnavailable.
func TestAutoFallsBack(t *testing.T) {
	t.Setenv(poller.EnvBackend, "")
	defer poller.SetAutoURing(true)()
	for _, tc := range []struct {
		name     string
		errno    syscall.Errno
		disabled int
	}{
		{"no io_uring (ENOSYS)", unix.ENOSYS, 0},
		{"seccomp (EPERM)", unix.EPERM, 0},
		{"RLIMIT_MEMLOCK (ENOMEM)", unix.ENOMEM, 0},
		{"open-file limit (EMFILE)", unix.EMFILE, 0},
		{"old kernel (EINVAL)", unix.EINVAL, 0},
		{"io_uring_disabled=2", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkFDs(t)
			restore := uring.Inject(uring.Hooks{
				Setup:    func(uint32, unsafe.Pointer) (int, syscall.Errno) { return -1, tc.errno },
				Disabled: func() int { return tc.disabled },
			})
			defer restore()
			be, err := poller.OpenKind(poller.Auto, nil)
			if err != nil {
				t.Fatalf("OpenKind(Auto) = %v, want epoll", err)
			}
			if k := be.Kind(); k != poller.Epoll {
				t.Errorf("OpenKind(Auto).Kind() = %v, want epoll", k)
			}
			be.Close()
			if be, err := poller.OpenKind(poller.IOURing, nil); err == nil {
				be.Close()
				t.Fatal("OpenKind(IOURing) succeeded, want an error")
			} else if !errors.Is(err, uring.ErrUnavailable) {
				t.Errorf("OpenKind(IOURing) = %v, want it to wrap ErrUnavailable", err)
			}
		})
	}
}

// TestAutoPrefersURing: with io_uring usable, Auto (preferring it) opens
// it; GALE_BACKEND overrides the request.
func TestAutoPrefersURing(t *testing.T) {
	if err := poller.Available(poller.IOURing); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	t.Setenv(poller.EnvBackend, "")
	defer poller.SetAutoURing(true)()
	be, err := poller.OpenKind(poller.Auto, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := be.Kind(); k != poller.IOURing {
		t.Errorf("OpenKind(Auto).Kind() = %v, want io_uring", k)
	}
	be.Close()
	t.Setenv(poller.EnvBackend, "epoll")
	be, err = poller.OpenKind(poller.IOURing, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := be.Kind(); k != poller.Epoll {
		t.Errorf("OpenKind(IOURing) with GALE_BACKEND=epoll: Kind() = %v, want epoll", k)
	}
	be.Close()
	t.Setenv(poller.EnvBackend, "bogus")
	if _, err := poller.OpenKind(poller.Auto, nil); err == nil {
		t.Error("OpenKind with GALE_BACKEND=bogus succeeded, want an error")
	}
}

// TestAutoByOwner: by default Auto opens io_uring for a Transient
// provider's owner (engine) and epoll for one that copies its bytes out
// (aio).
func TestAutoByOwner(t *testing.T) {
	if err := poller.Available(poller.IOURing); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	t.Setenv(poller.EnvBackend, "")
	for _, tc := range []struct {
		name string
		p    poller.Provider
		want poller.Kind
	}{
		{"transient", transientProvider{}, poller.IOURing},
		{"copying", nil, poller.Epoll},
	} {
		be, err := poller.OpenKind(poller.Auto, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if k := be.Kind(); k != tc.want {
			t.Errorf("%s: OpenKind(Auto).Kind() = %v, want %v", tc.name, k, tc.want)
		}
		be.Close()
	}
}

// transientProvider lends one small buffer to transient receives.
type transientProvider struct{}

func (transientProvider) Provide() ([]byte, int) { return make([]byte, 4096), 0 }
func (transientProvider) Commit(int, int)        {}
func (transientProvider) Transient() bool        { return true }
