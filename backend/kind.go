package backend

import (
	"fmt"
	"strings"
)

// Kind names a kernel interface for event loops. The zero value is Auto.
// A Kind is a plain value: safe to copy and to use from any goroutine.
type Kind uint8

// The backends.
const (
	// Auto picks a backend from what the loops' owner does (see the
	// package documentation's table).
	Auto Kind = iota
	// Epoll uses epoll(7) (Linux), with completions emulated by
	// non-blocking system calls.
	Epoll
	// IOURing uses io_uring(7) (Linux 6.3 or later): reads and writes are
	// the kernel's asynchronous operations, receives land in a ring of
	// provided buffers, and submissions are batched. Opening fails where
	// io_uring is unavailable.
	IOURing
	// Kqueue uses kqueue(2) (the BSDs and macOS).
	Kqueue
	// Net is the portable fallback: package net's blocking calls, one
	// goroutine per operation in flight, behind the same completions. It
	// works on any OS with package net and is slower than the native
	// ones.
	Net
	// IOCP uses an I/O completion port (Windows): receives and sends are
	// Winsock's overlapped operations, accepts AcceptEx. A socket the
	// port cannot take (one package net made, whose completions go to
	// the Go runtime's own port) is served the Net way inside the same
	// loop. Opening fails elsewhere.
	IOCP
)

var names = [...]string{Auto: "auto", Epoll: "epoll", IOURing: "io_uring", Kqueue: "kqueue", Net: "net", IOCP: "iocp"}

// String returns k's name as Parse reads it: "auto", "epoll",
// "io_uring", "kqueue", "net" or "iocp".
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Parse returns the Kind named s, in any case and with surrounding space
// ignored: "auto" (or ""), "epoll", "io_uring" (also "iouring",
// "io-uring" and "uring"), "kqueue", "net" or "iocp".
func Parse(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return Auto, nil
	case "epoll":
		return Epoll, nil
	case "io_uring", "iouring", "io-uring", "uring":
		return IOURing, nil
	case "kqueue":
		return Kqueue, nil
	case "net":
		return Net, nil
	case "iocp":
		return IOCP, nil
	}
	return Auto, fmt.Errorf("backend: unknown backend %q (want auto, epoll, io_uring, kqueue, net or iocp)", s)
}

// MarshalText returns k's name, for flag.TextVar, encoding/json and the
// like; a Kind with no name fails.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(names) {
		return nil, fmt.Errorf("backend: no name for Kind(%d)", uint8(k))
	}
	return []byte(names[k]), nil
}

// UnmarshalText sets *k to the Kind text names (see Parse).
func (k *Kind) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
