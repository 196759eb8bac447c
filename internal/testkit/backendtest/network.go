package backendtest

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/sock"
)

// NeedNetwork skips t where the system cannot make package net's sockets
// of network, which Windows 10 can: under Wine 8 there are no AF_UNIX
// sockets ("unix", "unixgram", "unixpacket"), and package net's UDP
// sockets fail at the WSAIoctl(SIO_UDP_CONNRESET) it makes on each
// ("udp", "udp4", "udp6"). Elsewhere, and for other networks, it does
// nothing. The probe runs once per family; safe from any goroutine.
func NeedNetwork(t testing.TB, network string) {
	t.Helper()
	if runtime.GOOS != "windows" {
		return
	}
	var err error
	switch {
	case strings.HasPrefix(network, "unix"):
		err = unixProbe()
	case strings.HasPrefix(network, "udp"):
		err = udpProbe()
	}
	if err != nil {
		SkipMissing(t, err)
	}
}

// unixProbe listens on a Unix socket once and reports the error.
var unixProbe = sync.OnceValue(func() error {
	dir, err := os.MkdirTemp("", "galeprobe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err == nil {
		ln.Close()
	}
	return err
})

// udpProbe opens a UDP socket once and reports the error.
var udpProbe = sync.OnceValue(func() error {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err == nil {
		pc.Close()
	}
	return err
})

// IsErrno reports whether err wraps errno, or on Windows the Winsock
// error that stands for it (sock.PortableErrno: WSAESHUTDOWN for EPIPE,
// WSAECONNRESET for ECONNRESET), which package net's conns report there.
func IsErrno(err error, errno syscall.Errno) bool {
	var en syscall.Errno
	return errors.Is(err, errno) || errors.As(err, &en) && sock.PortableErrno(en) == errno
}
