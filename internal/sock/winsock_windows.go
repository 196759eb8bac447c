package sock

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Winsock calls x/sys/windows does not wrap. They are the ground of a
// descriptor table of real sockets on Windows (issue 34): a duplicate
// made with WSADuplicateSocket serves on after the caller closes its
// package net conn, as a dup(2) does on Unix.
var (
	ws2           = windows.NewLazySystemDLL("ws2_32.dll")
	procIoctl     = ws2.NewProc("ioctlsocket")
	procWSAPoll   = ws2.NewProc("WSAPoll")
	procRecv      = ws2.NewProc("recv")
	procSend      = ws2.NewProc("send")
	procAccept    = ws2.NewProc("accept")
	socketError   = ^uintptr(0)  // SOCKET_ERROR as the procs return it
	wsaFlagNoInh  = uint32(0x80) // WSA_FLAG_NO_HANDLE_INHERIT: close-on-exec
	fionbio       = uint32(0x8004667e)
	fionread      = uint32(0x4004667f)
	msgPeek       = uintptr(0x2) // MSG_PEEK
	pollRdNorm    = int16(0x0100)
	pollWrNorm    = int16(0x0010)
	pollHupErrNva = int16(0x0002 | 0x0001 | 0x0004)
)

// failed reports whether a Winsock call that returns an int returned
// SOCKET_ERROR (-1).
func failed(r uintptr) bool { return int32(r) == -1 }

// wsaPollFD is a WSAPOLLFD.
type wsaPollFD struct {
	fd      windows.Handle
	events  int16
	revents int16
}

// dupSocket returns a duplicate of the socket behind c, non-blocking and
// not inherited by child processes; c stays the caller's.
func dupSocket(c syscall.Conn) (windows.Handle, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return windows.InvalidHandle, err
	}
	ns, derr := windows.InvalidHandle, error(nil)
	if err := rc.Control(func(fd uintptr) { ns, derr = dupHandle(windows.Handle(fd)) }); err != nil {
		return windows.InvalidHandle, err
	}
	return ns, derr
}

// dupHandle duplicates socket s (WSADuplicateSocket to this process),
// non-blocking and not inherited.
func dupHandle(s windows.Handle) (windows.Handle, error) {
	var info windows.WSAProtocolInfo
	if err := windows.WSADuplicateSocket(s, uint32(os.Getpid()), &info); err != nil {
		return windows.InvalidHandle, os.NewSyscallError("WSADuplicateSocket", err)
	}
	ns, err := windows.WSASocket(-1, -1, -1, &info, 0, wsaFlagNoInh)
	if err != nil {
		return windows.InvalidHandle, os.NewSyscallError("WSASocket", err)
	}
	if err := ioctl(ns, fionbio, 1); err != nil {
		windows.Closesocket(ns)
		return windows.InvalidHandle, err
	}
	return ns, nil
}

// ioctl is ioctlsocket(s, cmd, &arg); it returns arg's value after.
func ioctl(s windows.Handle, cmd uint32, arg uint32) error {
	_, err := ioctlValue(s, cmd, arg)
	return err
}

func ioctlValue(s windows.Handle, cmd uint32, arg uint32) (uint32, error) {
	r, _, e := procIoctl.Call(uintptr(s), uintptr(cmd), uintptr(unsafe.Pointer(&arg)))
	if failed(r) {
		return 0, os.NewSyscallError("ioctlsocket", e)
	}
	return arg, nil
}

// winErrno maps what a call failed with to the errno the layers test
// (PortableErrno: WSAEWOULDBLOCK is EAGAIN, WSAECONNRESET ECONNRESET).
func winErrno(e error) syscall.Errno {
	en, ok := e.(syscall.Errno)
	if !ok {
		return syscall.EIO
	}
	return PortableErrno(en)
}

// sockRead is a non-blocking recv(2) of s into p.
func sockRead(s windows.Handle, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := syscall.SyscallN(procRecv.Addr(), uintptr(s), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0)
	if failed(r) {
		if e == windows.WSAESHUTDOWN {
			return 0, 0 // shut for receiving: the end of the stream, as on Unix
		}
		return 0, PortableErrno(e)
	}
	return int(r), 0
}

// sockWrite is a non-blocking send(2) of p on s.
func sockWrite(s windows.Handle, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := syscall.SyscallN(procSend.Addr(), uintptr(s), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0)
	if failed(r) {
		return 0, PortableErrno(e)
	}
	return int(r), 0
}

// sockPeek reports whether a recv on s would not wait: it has bytes, an
// end of stream, an error, or its receiving side shut.
func sockPeek(s windows.Handle) bool {
	var b [1]byte
	r, _, e := procRecv.Call(uintptr(s), uintptr(unsafe.Pointer(&b[0])), 1, msgPeek)
	return !failed(r) || winErrno(e) != syscall.EAGAIN
}

// tcpInfoV0 is TCP_INFO_v0, what WSAIoctl(SIO_TCP_INFO) fills.
type tcpInfoV0 struct {
	state             int32
	mss               uint32
	connectionTimeMs  uint64
	timestampsEnabled uint8
	rttUs             uint32
	minRttUs          uint32
	bytesInFlight     uint32
	cwnd              uint32
	sndWnd            uint32
	rcvWnd            uint32
	rcvBuf            uint32
	bytesOut          uint64
	bytesIn           uint64
	bytesReordered    uint32
	bytesRetrans      uint32
	fastRetrans       uint32
	dupAcksIn         uint32
	timeoutEpisodes   uint32
	synRetrans        uint8
}

// sioTCPInfo is SIO_TCP_INFO (Windows 10 1703 and later).
const sioTCPInfo = 0xd8000027

// sockUnacked returns how many bytes s sent that its peer has not
// acknowledged (TCP_INFO_v0's BytesInFlight), where the system says.
func sockUnacked(s windows.Handle) (int, bool) {
	var (
		version uint32
		info    tcpInfoV0
		got     uint32
	)
	err := windows.WSAIoctl(s, sioTCPInfo, (*byte)(unsafe.Pointer(&version)), uint32(unsafe.Sizeof(version)),
		(*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), &got, nil, 0)
	if err != nil || got < uint32(unsafe.Offsetof(info.cwnd)) {
		return 0, false
	}
	return int(info.bytesInFlight), true
}

// sockUnread returns how many bytes s holds unread (FIONREAD).
func sockUnread(s windows.Handle) (int, bool) {
	n, err := ioctlValue(s, fionread, 0)
	return int(n), err == nil
}

// sockPoll waits up to msec (-1: for ever) until s is readable (in) or
// writable; it reports whether it is, a hang-up or error counting as
// ready (the call that follows tells which).
func sockPoll(s windows.Handle, in bool, msec int) (bool, error) {
	fd := wsaPollFD{fd: s, events: pollWrNorm}
	if in {
		fd.events = pollRdNorm
	}
	r, _, e := procWSAPoll.Call(uintptr(unsafe.Pointer(&fd)), 1, uintptr(int32(msec)))
	if failed(r) {
		return false, os.NewSyscallError("WSAPoll", e)
	}
	return r > 0 && fd.revents&(fd.events|pollHupErrNva) != 0, nil
}

// sockAccept is a non-blocking accept(2) on the listening socket s; the
// new socket is made non-blocking.
func sockAccept(s windows.Handle) (windows.Handle, syscall.Errno) {
	r, _, e := procAccept.Call(uintptr(s), 0, 0)
	ns := windows.Handle(r)
	if ns == windows.InvalidHandle {
		return windows.InvalidHandle, winErrno(e)
	}
	if err := ioctl(ns, fionbio, 1); err != nil {
		windows.Closesocket(ns)
		return windows.InvalidHandle, syscall.EIO
	}
	windows.SetHandleInformation(ns, windows.HANDLE_FLAG_INHERIT, 0) // close-on-exec
	return ns, 0
}
