package soak

import (
	"net"
	"os"
	"sync"
	"testing"

	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/tools/benchrun"
)

// TestMain lets the test binary serve as the soak's server child (Run
// re-executes os.Executable with -serve, as galebench does), and checks
// that the tests leave no goroutine or descriptor behind.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-serve" {
		benchrun.Main(benchrun.Config{Command: "soak.test", Servers: testServers()})
	}
	leaktest.Main(m)
}

// testServers adds to gale's a faulty echo server: it flips the 1000th
// byte of every connection's echo, and when a read fails (the client's
// EOF or reset) it keeps the connection and its goroutine for good.
func testServers() []benchrun.Server {
	faulty := benchrun.Server{Name: "faulty", Serve: func(ln net.Listener, ready func(net.Addr)) error {
		ready(ln.Addr())
		for {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			go faultyEcho(c)
		}
	}}
	return append(benchrun.GaleServers(), faulty)
}

// leaked holds the faulty server's leaked connections.
var (
	leakedMu sync.Mutex
	leaked   []net.Conn
)

func faultyEcho(c net.Conn) {
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, err := c.Read(buf)
		if i := 999 - off; i >= 0 && i < int64(n) {
			buf[i] ^= 0x55
		}
		off += int64(n)
		if _, werr := c.Write(buf[:n]); err != nil || werr != nil {
			leakedMu.Lock()
			leaked = append(leaked, c) // out of the garbage collector's reach: its finalizer would close it
			leakedMu.Unlock()
			select {} // leak: the goroutine and the descriptor stay
		}
	}
}
