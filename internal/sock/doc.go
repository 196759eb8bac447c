// Package sock holds gale's socket-level system calls: duplicating a
// connection's descriptor, non-blocking reads and writes that retry EINTR,
// socket options and thread affinity.
//
// Every function returns the raw errno (a [syscall.Errno]) so that callers on
// hot paths compare it with == and nothing allocates; wrapping into
// *net.OpError happens once, in the public packages.
package sock
