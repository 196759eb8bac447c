package uring

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING, Linux
// 5.19): count buffers of size bytes that receives submitted with
// SQEBufferSelect and its group ID take from, in ring order. Both the ring
// and the buffers are anonymous mappings outside the Go heap.
//
// With incremental consumption (PbufRingInc, Linux 6.12) a receive takes
// only the bytes it fills and leaves the rest of the buffer at the head
// of the ring: a completion with CQEFBufMore says the kernel will go on
// filling that buffer, at the offset where this one ended.
//
// Owner goroutine only.
type BufRing struct {
	r       *Ring
	ring    []byte // count bufEntry records; entry 0's last field is the tail
	bufs    []byte
	size    int
	mask    uint16
	tail    uint16 // entries before it were added
	group   uint16
	inc     bool
	entries []bufEntry
}

// RegisterBufRing registers a ring of count buffers (a power of 2 up to
// 32768) of size bytes under group, asking for incremental consumption if
// inc. Inc reports whether the kernel granted it.
func (r *Ring) RegisterBufRing(group uint16, count, size int, inc bool) (*BufRing, error) {
	b := &BufRing{r: r, size: size, mask: uint16(count - 1), group: group}
	var err error
	if b.ring, err = anon(count * int(unsafe.Sizeof(bufEntry{}))); err != nil {
		return nil, err
	}
	if b.bufs, err = anon(count * size); err != nil {
		unix.Munmap(b.ring)
		return nil, err
	}
	b.entries = unsafe.Slice((*bufEntry)(unsafe.Pointer(&b.ring[0])), count)
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&b.ring[0]))), ringEntries: uint32(count), bgid: group}
	if inc {
		reg.flags = PbufRingInc
		if _, err = register(r.fd, regPbufRing, unsafe.Pointer(&reg), 1); err == nil {
			b.inc = true
		}
	}
	if !b.inc {
		reg.flags = 0
		_, err = register(r.fd, regPbufRing, unsafe.Pointer(&reg), 1)
	}
	if err != nil {
		b.unmap()
		return nil, err
	}
	for i := range count {
		b.Add(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Inc reports whether buffers are consumed incrementally.
func (b *BufRing) Inc() bool { return b.inc }

// Size returns the size of each buffer.
func (b *BufRing) Size() int { return b.size }

// Group returns the buffer group ID.
func (b *BufRing) Group() uint16 { return b.group }

// Buf returns buffer id: memory the kernel writes while the buffer is in
// the ring. Read it only between a completion that names it and the Add
// that returns it.
func (b *BufRing) Buf(id uint16) []byte {
	off := int(id) * b.size
	return b.bufs[off : off+b.size : off+b.size]
}

// Add puts buffer id, whole, back at the tail of the ring. Publish makes
// the additions visible.
func (b *BufRing) Add(id uint16) {
	e := &b.entries[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
}

// Publish stores the tail after the entries (release). The tail is a
// 16-bit field sharing a 32-bit word with entry 0's buffer ID, which only
// this goroutine writes; the word is stored whole because Go has no
// 16-bit atomics. Little-endian layout (amd64, arm64, riscv64, ...).
func (b *BufRing) Publish() {
	word := (*uint32)(unsafe.Pointer(&b.ring[12]))
	atomic.StoreUint32(word, uint32(b.entries[0].bid)|uint32(b.tail)<<16)
}

// Trim gives the buffers' pages back to the system (MADV_DONTNEED): they
// read as zeros and are allocated afresh when the kernel next fills them,
// so an idle ring costs no memory. Their contents are lost: the caller
// must hold no unread byte of them, and the kernel must write none while
// Trim runs, which the ring's issuer knows between its own calls when
// Ring.Settled reports true.
func (b *BufRing) Trim() error {
	return os.NewSyscallError("madvise", unix.Madvise(b.bufs, unix.MADV_DONTNEED))
}

// Resident returns how many of the buffers' pages are in memory
// (mincore(2)), or -1 if the kernel does not say.
func (b *BufRing) Resident() int {
	vec := make([]byte, (len(b.bufs)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b.bufs[0])), uintptr(len(b.bufs)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return -1
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// Close unregisters the ring and unmaps it. No receive may be in flight.
func (b *BufRing) Close() error {
	reg := bufReg{bgid: b.group}
	_, err := register(b.r.fd, unregPbufRing, unsafe.Pointer(&reg), 1)
	b.unmap()
	return err
}

func (b *BufRing) unmap() {
	if b.ring != nil {
		unix.Munmap(b.ring)
	}
	if b.bufs != nil {
		unix.Munmap(b.bufs)
	}
	b.ring, b.bufs, b.entries = nil, nil, nil
}
