package poller

import (
	"syscall"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/windows"
)

// iocpIO is what the kernel reads and writes for one entry's operations:
// the OVERLAPPED of each side, the WSABUFs, and the words and address
// buffers the calls fill in. It lives in the slab, outside the Go heap,
// and holds no Go pointer (a WSABUF's address is a number, of a buffer
// the entry keeps referenced: iocpEnt).
type iocpIO struct {
	ov      [2]windows.Overlapped // receive side, send side
	rbuf    sock.WSABuf
	sbufs   [iocpMaxBufs]sock.WSABuf
	flags   uint32 // WSARecv's and WSARecvFrom's
	fromLen int32  // WSARecvFrom's: the size of from
	recvd   uint32 // AcceptEx's
	from    [128]byte
	addrs   [2 * sock.AcceptAddrLen]byte // AcceptEx's local and peer
}

// iocpMaxBufs is how many buffers one WSASend carries; a send of more is
// made in several, one after the other's completion.
const iocpMaxBufs = 16

// iocpMaxEnts bounds the entries of one backend: the slab reserves
// address space for them all at open (about 550 MiB on a 64-bit system,
// 9 MiB on a 32-bit one) and commits it as entries are first used, so
// that an entry's address never changes while the kernel holds it.
const iocpMaxEnts = 1 << (14 + 6*(^uint(0)>>63))

// iocpCommit is the step in which the slab commits memory.
const iocpCommit = 64 << 10

const ioSize = unsafe.Sizeof(iocpIO{})

// ovZero is an OVERLAPPED ready for a call.
var ovZero windows.Overlapped

// iocpSlab is the backend's off-heap memory: entry i's iocpIO at base +
// i*ioSize, so that the OVERLAPPED address of a completion names its
// entry and side by arithmetic. Loop goroutine only.
type iocpSlab struct {
	base      uintptr
	committed uintptr // bytes from base
	used      int32   // entries ever handed out
	free      []int32 // entries handed back
}

func (s *iocpSlab) open() error {
	p, err := windows.VirtualAlloc(0, iocpMaxEnts*ioSize, windows.MEM_RESERVE, windows.PAGE_READWRITE)
	if err != nil {
		return err
	}
	s.base = p
	return nil
}

// take returns a free entry, zeroed, or an error once iocpMaxEnts are in
// use.
func (s *iocpSlab) take() (int32, error) {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		*s.at(i) = iocpIO{}
		return i, nil
	}
	if s.used == iocpMaxEnts {
		return -1, syscall.ENOMEM
	}
	end := uintptr(s.used+1) * ioSize
	if end > s.committed {
		grow := (end - s.committed + iocpCommit - 1) / iocpCommit * iocpCommit
		grow = min(grow, iocpMaxEnts*ioSize-s.committed)
		if _, err := windows.VirtualAlloc(s.base+s.committed, grow, windows.MEM_COMMIT, windows.PAGE_READWRITE); err != nil {
			return -1, err
		}
		s.committed += grow
	}
	s.used++
	return s.used - 1, nil
}

// put hands entry i back; the kernel must be done with it.
func (s *iocpSlab) put(i int32) { s.free = append(s.free, i) }

// at returns entry i's iocpIO.
func (s *iocpSlab) at(i int32) *iocpIO {
	return (*iocpIO)(offHeap(s.base + uintptr(i)*ioSize))
}

// locate maps an OVERLAPPED's address back to its entry and side (0:
// receive, 1: send); ok is false for an address outside the entries.
func (s *iocpSlab) locate(ov uintptr) (i int32, side int, ok bool) {
	if ov < s.base || ov >= s.base+uintptr(s.used)*ioSize {
		return 0, 0, false
	}
	off := ov - s.base
	i, rest := int32(off/ioSize), off%ioSize
	switch rest {
	case unsafe.Offsetof(iocpIO{}.ov):
		return i, 0, true
	case unsafe.Offsetof(iocpIO{}.ov) + unsafe.Sizeof(windows.Overlapped{}):
		return i, 1, true
	}
	return 0, 0, false
}

// release gives the address space back; the kernel must be done with
// every entry.
func (s *iocpSlab) release() {
	if s.base != 0 {
		windows.VirtualFree(s.base, 0, windows.MEM_RELEASE)
		s.base = 0
	}
}

// offHeap turns the address of memory outside the Go heap into a
// pointer. Reading the word in place, rather than converting the
// uintptr, tells vet that the conversion is meant: the collector does
// not manage that memory, so no pointer rule applies.
func offHeap(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// addr returns the address of off-heap memory p points to, or of a Go
// buffer the caller keeps referenced, as the calls take it.
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }
