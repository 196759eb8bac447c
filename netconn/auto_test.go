package netconn_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// TestAutoBackend checks package backend's table for netconn: receives go
// to parked Reads, so Auto opens epoll on Linux, for dialed and accepted
// connections alike.
func TestAutoBackend(t *testing.T) {
	want := backendtest.Auto(t, false)
	d, a := connPair(t, "tcp")
	for name, c := range map[string]*netconn.Conn{"dialed": d, "accepted": a} {
		if got := netconn.LoopBackend(c); got != want {
			t.Errorf("Auto opened %v for a %s netconn; package backend's table says %v", got, name, want)
		}
	}
}
