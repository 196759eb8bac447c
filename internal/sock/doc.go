// Package sock holds gale's socket-level system calls: duplicating a
// connection's descriptor, non-blocking reads and writes that retry EINTR,
// socket options and thread affinity.
//
// Every function returns the raw errno (a [syscall.Errno]) so that callers on
// hot paths compare it with == and nothing allocates; wrapping into
// *net.OpError happens once, in the public packages.
//
// # Platforms
//
// On Unix the calls are the system's (the files named _unix, _linux and
// _other). On Windows (the _windows files) a descriptor is a SOCKET of
// gale's own: DupConn duplicates the caller's with WSADuplicateSocket,
// as dup(2) does, and the calls are Winsock's on it, non-blocking, with
// the Winsock errors mapped to the errnos the layers test
// (PortableErrno). Wrap gives the net backend a net.Conn or net.Listener
// over a socket (winConn, winListener), whose blocking calls wait for
// one poll hub goroutine (WSAPoll over every waiting socket) in slices,
// so that deadlines and Close end them. On WebAssembly (js/wasm,
// wasip1: the _stub files and table.go) a descriptor is an entry in a
// table of package net's objects, which DupConn enters and Close
// closes; the calls act on the object, and those without one fail with
// an error matching [errors.ErrUnsupported] (syscall.ENOSYS where the
// result is a bare errno). [Sockaddr] is then a net.Addr, as
// poller.Sockaddr is.
package sock
