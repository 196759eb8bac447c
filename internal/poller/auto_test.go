package poller

import (
	"slices"
	"testing"
)

// owner is a Provider that says what its owner does with completions.
type owner struct{ transient, handsOff, offloads bool }

func (owner) Provide() ([]byte, int) { return nil, 0 }
func (owner) Commit(int, int)        {}
func (o owner) Transient() bool      { return o.transient }
func (o owner) HandsOff() bool       { return o.handsOff }
func (o owner) Offloads() bool       { return o.offloads }

// TestAutoKinds checks the one place Auto is decided against package
// backend's table: io_uring first only for an owner that reads buffers in
// place and finishes its work on the loop.
func TestAutoKinds(t *testing.T) {
	cases := []struct {
		name string
		o    owner
		ring bool
	}{
		{"engine", owner{transient: true}, true},
		{"httpd", owner{transient: true, offloads: true}, false},
		{"netconn", owner{transient: true, handsOff: true}, false},
		{"aio", owner{handsOff: true}, false},
		{"copying", owner{}, false},
	}
	for _, c := range cases {
		want := []Kind{native}
		switch {
		case native == Epoll && c.ring:
			want = []Kind{IOURing, Epoll}
		case native == IOCP && c.ring:
			want = []Kind{IOCP, Net}
		case native == IOCP:
			want = []Kind{Net}
		}
		if got := autoKinds(c.o); !slices.Equal(got, want) {
			t.Errorf("%s: Auto tries %v, want %v", c.name, got, want)
		}
	}
}

// TestAutoAvailable checks that Auto counts as available wherever the
// native backend opens (galebench's soak asks about its Auto servers).
func TestAutoAvailable(t *testing.T) {
	if err := Available(native); err != nil {
		t.Skipf("the native backend, %v, does not open here: %v", native, err)
	}
	if err := Available(Auto); err != nil {
		t.Fatalf("Available(Auto) = %v, want nil: %v opens", err, native)
	}
}
