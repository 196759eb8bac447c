package poller

import (
	"os"

	"github.com/galeio/gale/backend"
)

// Kind names a backend: the public backend.Kind, which the packages
// with loops take in their options.
type Kind = backend.Kind

// The backends (package backend documents each). Auto is decided by
// autoKinds from what the owner's Provider says of its work.
const (
	Auto    = backend.Auto
	Epoll   = backend.Epoll
	IOURing = backend.IOURing
	Kqueue  = backend.Kqueue
	Net     = backend.Net
	IOCP    = backend.IOCP
)

// ParseKind returns the Kind named s (backend.Parse).
func ParseKind(s string) (Kind, error) { return backend.Parse(s) }

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
