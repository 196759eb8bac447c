package aio_test

import (
	"crypto/tls"
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"

	"github.com/galeio/gale/aio"
)

// TestUnsupportedConn: a conn without a descriptor, or of a non-pointer
// type, is accepted, completes with ErrUnsupported, and is left open.
func TestUnsupportedConn(t *testing.T) { backendtest.Run(t, testUnsupportedConn) }

func testUnsupportedConn(t *testing.T) {
	type check func(t *testing.T) // the conn is still open and working
	tests := []struct {
		name string
		conn func(t *testing.T) (net.Conn, check)
	}{
		{"net.Pipe", func(t *testing.T) (net.Conn, check) {
			a, b := net.Pipe()
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, func(t *testing.T) {
				errc := make(chan error, 1)
				go func() {
					_, err := a.Write([]byte("ping"))
					errc <- err
				}()
				if got := readPeer(t, b, 4); string(got) != "ping" {
					t.Errorf("pipe read %q, want ping", got)
				}
				if err := <-errc; err != nil {
					t.Errorf("pipe Write = %v, want nil", err)
				}
				if err := a.Close(); err != nil {
					t.Errorf("pipe Close() = %v, want nil (still open)", err)
				}
			}
		}},
		{"tls.Client", func(t *testing.T) (net.Conn, check) {
			a, b := net.Pipe()
			tc := tls.Client(a, &tls.Config{InsecureSkipVerify: true}) // no handshake
			t.Cleanup(func() { tc.Close(); b.Close() })
			return tc, func(t *testing.T) {
				if err := tc.Close(); err != nil {
					t.Errorf("tls.Conn Close() = %v, want nil (still open)", err)
				}
			}
		}},
		{"valConn", func(t *testing.T) (net.Conn, check) {
			c, peer := tcpPair(t)
			return valConn{c}, func(t *testing.T) {
				roundTrip(t, c, peer)
				if err := c.Close(); err != nil {
					t.Errorf("Close() = %v, want nil (still open)", err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWatcher(t, aio.Config{})
			col := collect(t, w)
			c, stillOpen := tt.conn(t)
			for _, s := range submitters {
				if err := s.call(w, c); err != nil {
					t.Fatalf("%s = %v, want nil (failure reported by completion)", s.name, err)
				}
				r := waitResult(t, col)
				wantOp := aio.OpRead
				if s.name == "Write" || s.name == "WriteTimeout" {
					wantOp = aio.OpWrite
				}
				if r.Error != aio.ErrUnsupported || r.Operation != wantOp || r.Context != "ctx" || r.Conn != c || r.Size != 0 {
					t.Errorf("%s completed with %v, want %v, ctx, the conn, size 0, ErrUnsupported", s.name, r, wantOp)
				}
				if !errors.Is(r.Error, errors.ErrUnsupported) {
					t.Errorf("%s: errors.Is(%v, errors.ErrUnsupported) = false, want true", s.name, r.Error)
				}
			}
			w.Poke()
			if n := w.Stats().Total().Conns; n != 0 {
				t.Errorf("Conns = %d, want 0", n)
			}
			stillOpen(t)
		})
	}
}

// valConn is a net.Conn of a non-pointer type.
type valConn struct{ net.Conn }
