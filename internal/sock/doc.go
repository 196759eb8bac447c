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
// The calls are Unix's (the files named _unix, _linux and _other). On
// systems without them (Windows, js/wasm, wasip1: the _stub files) the
// package has the same functions and types, so that its callers build
// everywhere, but every call on a descriptor, Close included, fails with
// an error matching [errors.ErrUnsupported] (syscall.ENOSYS where the
// result is a bare errno). IsStream reports true, SetAffinity only locks
// the thread and SetLingerZero does nothing; FD, OpError and the address
// conversions work. [Sockaddr] is then a net.Addr, as poller.Sockaddr is.
package sock
