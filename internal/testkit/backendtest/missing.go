package backendtest

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
)

// The Winsock errors of what Wine 8 lacks and Windows 10 has.
const (
	wsaEAFNOSUPPORT = 10047 // socket(AF_UNIX): no Unix sockets
	wsaEOPNOTSUPP   = 10045 // WSAIoctl(SIO_UDP_CONNRESET), which package net's ListenUDP makes
)

// SkipMissing skips t when err says the system lacks what the test needs
// and Windows has: under Wine, AF_UNIX sockets and the ioctl package net
// makes on every UDP socket. It names the missing call; any other err
// is left to the caller.
func SkipMissing(t testing.TB, err error) {
	t.Helper()
	var errno syscall.Errno
	if runtime.GOOS != "windows" || !errors.As(err, &errno) {
		return
	}
	switch errno {
	case wsaEAFNOSUPPORT:
		t.Skipf("no AF_UNIX sockets here (Wine 8 lacks them): %v", err)
	case wsaEOPNOTSUPP:
		t.Skipf("no WSAIoctl(SIO_UDP_CONNRESET) here (Wine 8 lacks it), which package net's UDP sockets need: %v", err)
	}
}

// LingerFIN is why a test of a peer's reset skips under Wine: Wine 8
// closes a socket with SO_LINGER 0 by FIN, not RST (checked: the peer
// reads EOF where Linux and Windows read ECONNRESET).
const LingerFIN = "a close with SO_LINGER 0 ends the stream with FIN, not RST"

// SkipUnderWine skips t under Wine, which lacks what the test checks
// (why names it), so that a Windows machine still runs it.
func SkipUnderWine(t testing.TB, why string) {
	t.Helper()
	if UnderWine() {
		t.Skip("Wine 8: " + why)
	}
}
