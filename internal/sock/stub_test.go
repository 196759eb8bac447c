//go:build !unix

package sock_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/sock"
)

// TestStubsUnsupported: without Unix socket calls, every call on a
// descriptor fails with an error matching errors.ErrUnsupported, and the
// address conversions pass package net's addresses through.
func TestStubsUnsupported(t *testing.T) {
	_, dupErr := sock.DupConn(nil)
	_, dup2Err := sock.Dup(3)
	_, fileErr := sock.FileConn(3)
	_, _, _, acceptErr := sock.AcceptPeer(3, new(sock.RawSockaddrAny))
	_, nameErr := sock.Getsockname(3)
	_, _, recvErr := sock.Recvfrom(3, make([]byte, 1))
	errs := map[string]error{
		"DupConn":       dupErr,
		"Dup":           dup2Err,
		"Close":         sock.Close(3),
		"FileConn":      fileErr,
		"AcceptPeer":    acceptErr,
		"Getsockname":   nameErr,
		"Recvfrom":      recvErr,
		"Sendto":        sock.Sendto(3, []byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}),
		"Shutdown":      sock.Shutdown(3, sock.ShutWrite),
		"Poll":          sock.Poll(3, sock.PollIn, 0),
		"SetsockoptInt": sock.SetsockoptInt(3, sock.NoDelay, 1),
		"SetLinger":     sock.SetLinger(3, 0),
		"SetKeepAlive":  sock.SetKeepAlive(3, 0),
	}
	for name, err := range errs {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: error %v, want one matching errors.ErrUnsupported", name, err)
		}
	}
	_, readErr := sock.Read(3, make([]byte, 1))
	_, writeErr := sock.Write(3, []byte("x"))
	_, writevErr := sock.Writev(3, make([]sock.Iovec, 1))
	for name, e := range map[string]syscall.Errno{"Read": readErr, "Write": writeErr, "Writev": writevErr} {
		if !errors.Is(e, errors.ErrUnsupported) {
			t.Errorf("%s: errno %v, want one matching errors.ErrUnsupported", name, e)
		}
	}
}

// TestStubAddr: a Sockaddr is a net.Addr here; Addr returns it and
// AddrPort decodes TCP and UDP addresses, v4-mapped ones as IPv4.
func TestStubAddr(t *testing.T) {
	tcp := &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80}
	if got := sock.Addr("tcp", tcp); got != net.Addr(tcp) {
		t.Errorf("Addr(tcp, %v) = %v, want the same address", tcp, got)
	}
	if ap, ok := sock.AddrPort(tcp); !ok || ap.String() != "127.0.0.1:80" {
		t.Errorf("AddrPort(%v) = %v, %v; want 127.0.0.1:80, true", tcp, ap, ok)
	}
	udp := &net.UDPAddr{IP: net.ParseIP("::1"), Port: 53}
	if ap, ok := sock.AddrPort(udp); !ok || ap.String() != "[::1]:53" {
		t.Errorf("AddrPort(%v) = %v, %v; want [::1]:53, true", udp, ap, ok)
	}
	if _, ok := sock.AddrPort(&net.UnixAddr{Name: "/x", Net: "unix"}); ok {
		t.Error("AddrPort(unix address) = ok, want not ok")
	}
	if !sock.IsStream(3) {
		t.Error("IsStream = false, want true")
	}
}
