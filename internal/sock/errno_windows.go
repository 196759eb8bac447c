package sock

import "syscall"

// winsock maps the Winsock and Win32 errors of socket calls on Windows
// (gale's own and package net's), and those of an overlapped operation's
// NTSTATUS (iocp), to the errnos the layers above test for: syscall's
// Windows constants for them (ECONNRESET, EPIPE, ...) are numbers of
// Go's own, not Winsock's.
var winsock = map[syscall.Errno]syscall.Errno{
	64:    syscall.ECONNRESET,   // ERROR_NETNAME_DELETED: the peer reset
	995:   syscall.ECANCELED,    // ERROR_OPERATION_ABORTED
	1225:  syscall.ECONNREFUSED, // ERROR_CONNECTION_REFUSED
	1226:  syscall.EPIPE,        // ERROR_GRACEFUL_DISCONNECT
	1229:  syscall.ENOTCONN,     // ERROR_CONNECTION_INVALID
	1234:  syscall.ECONNREFUSED, // ERROR_PORT_UNREACHABLE: a datagram's ICMP
	1236:  syscall.ECONNABORTED, // ERROR_CONNECTION_ABORTED
	10024: syscall.EMFILE,       // WSAEMFILE
	10035: syscall.EAGAIN,       // WSAEWOULDBLOCK
	10053: syscall.ECONNABORTED, // WSAECONNABORTED
	10054: syscall.ECONNRESET,   // WSAECONNRESET
	10055: syscall.ENOBUFS,      // WSAENOBUFS
	10057: syscall.ENOTCONN,     // WSAENOTCONN
	10058: syscall.EPIPE,        // WSAESHUTDOWN: a send after CloseWrite
	10060: syscall.ETIMEDOUT,    // WSAETIMEDOUT
	10061: syscall.ECONNREFUSED, // WSAECONNREFUSED
	10065: syscall.EHOSTUNREACH, // WSAEHOSTUNREACH
}

// PortableErrno returns the errno the layers above know for en: on
// Windows the Unix-named errno of a Winsock error, elsewhere en.
func PortableErrno(en syscall.Errno) syscall.Errno {
	if p, ok := winsock[en]; ok {
		return p
	}
	return en
}
