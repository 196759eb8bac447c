//go:build !unix

package poller

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// canWrap reports that package net cannot wrap a descriptor here: the
// layers above hand the backend descriptors, so on this platform the net
// backend opens but cannot take one (see ARCHITECTURE.md, "Platforms").
func canWrap() error {
	return fmt.Errorf("poller: net backend: wrapping a descriptor: %w", errors.ErrUnsupported)
}

func wrapFD(int, bool) (netWrap, syscall.Errno) { return netWrap{}, syscall.EOPNOTSUPP }

// optSnapshot has nothing to keep here.
type optSnapshot struct{}

func connFD(c net.Conn, _ optSnapshot) (int, error) {
	c.Close()
	return -1, syscall.EOPNOTSUPP
}

func closeFD(int) {}

func toSockaddr(a net.Addr) Sockaddr { return a }

func (b *netBackend) lastAttempt(e *netEntry, r *netResult) {}

func (b *netBackend) lastSend(e *netEntry, r *netResult) {}

// readableNow has no way to look here: the wait itself finds out (on
// Windows, package net's zero-byte receive completes at once when data
// is there).
func readableNow(uintptr) bool { return false }
