package engine_test

// The listener at the process's real open-file limit: accept(2) fails
// with EMFILE for real, not by injection (TestAcceptEMFILE and
// TestStormAccept inject it; ENFILE, the system-wide limit, can only be
// injected).

import (
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestEMFILEReal checks the listener when the process has no descriptor
// left: clients connect (the handshakes complete in the kernel's
// backlog), accept fails with EMFILE, and meanwhile the connections
// already open are still served, and the process does not spin (its CPU
// time over a second of starvation, measured with getrusage(2), stays
// under 20 % of one core). Once descriptors are freed, the waiting
// connections are accepted and served. The clients' side is
// stresstest.Starve's.
func TestEMFILEReal(t *testing.T) { backendtest.Run(t, testEMFILEReal) }

func testEMFILEReal(t *testing.T) {
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{})
	a := etListen(t, e, "tcp")
	old := stresstest.EchoClients(t, a, 2, 1)
	for range old {
		etOpened(t, h)
	}
	// The waiting clients' sockets exist before the table fills: connect
	// needs no descriptor.
	waiting := stresstest.NewBacklog(t, 4)
	stresstest.Starve(t, stresstest.Starvation{
		Served: old,
		Starve: func(t *testing.T) {
			waiting.ConnectAll(t, a)
			etWaitFor(t, "a failed accept", func() bool { return e.Stats().Total().AcceptErrors > 0 })
		},
		Starved: func(t *testing.T) {
			etNoEvent(t, h.opened, "OnOpen while the table is full")
			t.Logf("%d failed accepts", e.Stats().Total().AcceptErrors)
		},
		Freed: func(t *testing.T) []*faulttest.Echo {
			cs := make([]*faulttest.Echo, waiting.Len())
			for i := range cs {
				cs[i] = faulttest.NewEcho(t, waiting.Conn(t, i), uint64(10+i))
			}
			for range cs {
				etOpened(t, h)
			}
			return cs
		},
	})
}
