package poller

import (
	"fmt"
	"os"
	"strings"
)

// Kind names a backend.
type Kind uint8

// Backends. Auto is the best one that works on this machine: io_uring on
// Linux where the kernel and its configuration allow it, epoll otherwise;
// kqueue on the BSDs and macOS; Net, package net behind the completion
// contract (netbe.go), everywhere else. Net can be asked for on any OS.
const (
	Auto Kind = iota
	Epoll
	IOURing
	Kqueue
	Net
)

var kindNames = [...]string{Auto: "auto", Epoll: "epoll", IOURing: "io_uring", Kqueue: "kqueue", Net: "net"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind returns the Kind named s: "auto", "epoll", "io_uring" (also
// "iouring" and "uring"), "kqueue" or "net", in any case.
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return Auto, nil
	case "epoll":
		return Epoll, nil
	case "io_uring", "iouring", "uring", "io-uring":
		return IOURing, nil
	case "kqueue":
		return Kqueue, nil
	case "net":
		return Net, nil
	}
	return Auto, fmt.Errorf("poller: unknown backend %q (want auto, epoll, io_uring, kqueue or net)", s)
}

// EnvBackend is the environment variable that overrides the backend a
// program asks for: GALE_BACKEND=epoll runs every loop on epoll whatever
// the options say. An unknown name is an error at open.
const EnvBackend = "GALE_BACKEND"

// Choose applies the GALE_BACKEND override to k.
func Choose(k Kind) (Kind, error) {
	v, ok := os.LookupEnv(EnvBackend)
	if !ok || v == "" {
		return k, nil
	}
	return ParseKind(v)
}
