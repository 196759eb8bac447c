package poller_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestCloseReleasesUndeliveredAccept: an accept that completed but was
// never delivered (the loop stopped first) must not leak the connection's
// descriptor when the backend closes.
func TestCloseReleasesUndeliveredAccept(t *testing.T) {
	backendtest.Run(t, testCloseReleasesUndeliveredAccept)
}

func testCloseReleasesUndeliveredAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lfd, err := sock.DupConn(ln.(syscall.Conn))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close(lfd)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	before, _ := leaktest.OpenFDs()
	be, err := poller.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	tag := poller.MakeTag(0, 1)
	if err := be.Add(lfd, tag, true); err != nil {
		t.Fatal(err)
	}
	be.Accept(tag) // the connection is queued: accepted at once, not delivered
	be.Remove(tag)
	be.Close()
	after, _ := leaktest.OpenFDs()
	if added := leaktest.NewFDs(before, after); len(added) != 0 {
		t.Errorf("after Close, descriptors left by an undelivered accept:\n%s", leaktest.Describe(added))
	}
}
