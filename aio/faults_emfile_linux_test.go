package aio_test

// The watcher at the process's real open-file limit. aio has no accept of
// its own: the caller accepts (with package net), so EMFILE on accept is
// the caller's, and the engine's listener is tested for it
// (engine/faults_emfile_linux_test.go). What a watcher needs at the limit
// is one descriptor per delegation, its duplicate of the caller's.

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestEMFILEReal checks a watcher when the process has no descriptor
// left: a conn's first request cannot delegate it (the duplicate fails
// with EMFILE) and completes with a *net.OpError ("dup") of EMFILE,
// leaving the caller's conn open; the connections already delegated are
// still served; the process does not spin (its CPU time over a second,
// measured with getrusage(2), stays under 20 % of one core). Once
// descriptors are freed, the same conn is delegated and served. The
// clients' side is stresstest.Starve's.
func TestEMFILEReal(t *testing.T) { backendtest.Run(t, testEMFILEReal) }

func testEMFILEReal(t *testing.T) {
	s := newFSServer(t, aio.Config{}, false)
	waiting := fsPairs(t, s, 2, 10, false)
	stresstest.Starve(t, stresstest.Starvation{
		Served: fsEchoes(fsPairs(t, s, 2, 1, true)),
		Starve: func(t *testing.T) {
			for _, p := range waiting {
				if err := s.serve(p.c); err != nil {
					t.Fatalf("Read = %v, want nil: the failure is a completion", err)
				}
			}
			for _, p := range waiting {
				waitFor(t, "the failed delegation", func() bool { return s.errOf(p.echo.Conn()) != nil })
				err := s.errOf(p.echo.Conn())
				var oe *net.OpError
				if !errors.As(err, &oe) || oe.Op != "dup" || !errors.Is(err, syscall.EMFILE) {
					t.Fatalf("delegation with the table full: %v, want a *net.OpError of dup, EMFILE", err)
				}
			}
		},
		Freed: func(t *testing.T) []*faulttest.Echo {
			for _, p := range waiting {
				s.forget(p.echo.Conn())
				if err := s.serve(p.c); err != nil {
					t.Fatalf("Read = %v, want nil", err)
				}
			}
			return fsEchoes(waiting)
		},
	})
	for _, p := range waiting {
		if err := s.errOf(p.echo.Conn()); err != nil {
			t.Errorf("conn delegated after the release: %v", err)
		}
	}
}

// fsPair is a connection for the watcher and its peer's echo client.
type fsPair struct {
	c    net.Conn
	echo *faulttest.Echo
}

// fsPairs makes n TCP connections, their peers checking the echo; with
// serve, they are delegated to s at once.
func fsPairs(t *testing.T, s *fsServer, n int, seed uint64, serve bool) []fsPair {
	t.Helper()
	ps := make([]fsPair, n)
	for i := range ps {
		c, peer := tcpPair(t)
		ps[i] = fsPair{c: c, echo: faulttest.NewEcho(t, peer, seed+uint64(i))}
		if serve {
			if err := s.serve(c); err != nil {
				t.Fatalf("Read = %v", err)
			}
		}
	}
	return ps
}

func fsEchoes(ps []fsPair) []*faulttest.Echo {
	es := make([]*faulttest.Echo, len(ps))
	for i, p := range ps {
		es[i] = p.echo
	}
	return es
}
