package engine_test

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKTLSProbe reports whether this kernel attaches the TLS upper-layer
// protocol to a connected TCP socket (setsockopt TCP_ULP "tls", Linux
// 4.13+ with CONFIG_TLS, Documentation/networking/tls.rst), the first
// step of kernel TLS. The engine does not use kTLS (issue 38): this only
// records what the machine offers, and skips where it is refused.
func TestKTLSProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.SOL_TCP, unix.TCP_ULP, "tls")
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Skipf("kTLS unavailable: setsockopt(TCP_ULP, \"tls\"): %v", serr)
	}
	t.Log("kTLS available: the kernel attached the tls ULP to a TCP socket")
}
