package poller

import (
	"os"
	"syscall"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/windows"
)

// The completion port's calls that x/sys/windows lacks or types with Go
// pointers.

var procGetQueuedEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetQueuedCompletionStatusEx")

// overlappedEntry is an OVERLAPPED_ENTRY, its OVERLAPPED's address a
// number (the slab's).
type overlappedEntry struct {
	key      uintptr
	ov       uintptr
	internal uintptr
	bytes    uint32
}

// Completion keys: every socket is associated under sockKey; Wake posts
// under wakeKey, with no OVERLAPPED.
const (
	sockKey = 1
	wakeKey = 2
)

// getQueuedEx is GetQueuedCompletionStatusEx: it fills evs with up to
// len(evs) packets, waiting up to msec (windows.INFINITE: for ever). A
// timeout returns 0 and no error.
func getQueuedEx(port windows.Handle, evs []overlappedEntry, msec uint32) (int, error) {
	var n uint32
	r, _, e := syscall.SyscallN(procGetQueuedEx.Addr(), uintptr(port), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)),
		uintptr(unsafe.Pointer(&n)), uintptr(msec), 0)
	if r != 0 {
		return int(n), nil
	}
	if e == syscall.Errno(windows.WAIT_TIMEOUT) {
		return 0, nil
	}
	return 0, os.NewSyscallError("GetQueuedCompletionStatusEx", e)
}

// associate gives socket fd to port. It fails (ERROR_INVALID_PARAMETER)
// for a socket another port has: every socket package net made is the
// Go runtime's port's, and a duplicate shares its original's port.
func associate(port windows.Handle, fd int) error {
	_, err := windows.CreateIoCompletionPort(windows.Handle(fd), port, sockKey, 0)
	if err != nil {
		return err
	}
	// The handle's event is never waited on: setting it is wasted work.
	windows.SetFileCompletionNotificationModes(windows.Handle(fd), windows.FILE_SKIP_SET_EVENT_ON_HANDLE)
	return nil
}

// status returns the errno an operation ended with: its OVERLAPPED's
// NTSTATUS as the Win32 error, then as the errno the layers above know
// (portableErrno).
func status(ov *windows.Overlapped) syscall.Errno {
	st := windows.NTStatus(ov.Internal)
	if st == windows.STATUS_SUCCESS {
		return 0
	}
	return sock.PortableErrno(st.Errno())
}
