package poller

import (
	"fmt"
	"iter"
	"syscall"
	"unsafe"

	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// ud is an io_uring user_data word: slot (bits 0-31), the low 24 bits of
// the tag's generation (32-55) and the kind of operation (56-63). A
// completion names its tag without a Go pointer; the generation tells a
// reused slot's completions from its previous owner's.
type ud uint64

// Kinds of kernel operations.
const (
	kRecv      uint8 = 1 + iota // receive into the owner's buffer
	kRecvMulti                  // multishot receive from the buffer ring
	kAccept                     // multishot accept
	kPollIn                     // readiness wait of a datagram receive
	kSend                       // send or sendmsg
	kWake                       // the wake-up eventfd's read
	kCancel                     // an async cancel's own completion
	kRecvOne                    // one-shot receive from the buffer ring
)

const genMask = 1<<24 - 1

func makeUD(tag Tag, kind uint8) ud {
	return ud(uint64(kind)<<56 | uint64(tag.Gen()&genMask)<<32 | uint64(tag.Slot()))
}

func (d ud) kind() uint8  { return uint8(d >> 56) }
func (d ud) slot() uint32 { return uint32(d) }

// recvSide reports whether d's operation is on the receive side of its
// tag.
func (d ud) recvSide() bool {
	switch d.kind() {
	case kRecv, kRecvMulti, kRecvOne, kAccept, kPollIn:
		return true
	}
	return false
}

// matches reports whether d belongs to tag's current owner.
func (d ud) matches(tag Tag) bool {
	return uint32(d) == tag.Slot() && uint32(d>>32)&genMask == tag.Gen()&genMask
}

// urState is what the io_uring backend knows of one tag.
//
// Each side has the owner's operation (rop, sop: what Backend was asked
// for) and the kernel's (rk, sk: what is in flight, a ud kind). They
// differ where one multishot serves many receives, or a receive is served
// from spilled data. A side starts a new kernel operation only after the
// last completion of the previous one, so a completion's kind says which
// operation it ends.
type urState struct {
	tag     Tag    // 0 while the slot is not live: no tag is 0
	io      uint32 // 1 + the index in the backend's ios of the operations' Go memory (uring_io_linux.go); 0 while none
	fd      int32
	rstop   bool // an async cancel of the receive side's kernel operation is pending
	rcancel bool // the owner cancelled its receive: end it after a last attempt
	rk, sk  uint8
	rop     Op
	sop     Op
	bits    stBits
}

// stBits are a urState's rarer flags, a bit each, so that a urState is
// 24 bytes (TestURStateSize).
type stBits uint8

const (
	stStream    stBits = 1 << iota
	stSStop            // an async cancel of the send side's kernel operation is pending
	stSCancel          // the owner cancelled its send
	stZC               // the send in flight is zero-copy (uring_zc_linux.go)
	stZReset           // zcReset disconnected the socket
	stZCChecked        // whether the socket has zero-copy sends was looked up
	stZCNo             // the socket has no zero-copy sends
)

func (b stBits) has(f stBits) bool { return b&f != 0 }

func (b *stBits) set(f stBits, on bool) {
	if on {
		*b |= f
	} else {
		*b &^= f
	}
}

// endEOF marks an end of file in urIO.rend.
const endEOF = syscall.Errno(^uint32(0) >> 1)

// urMsg is the msghdr and vector of a sendmsg: Go memory the kernel reads
// while the send is in flight, kept with the state until it completes.
type urMsg struct {
	hdr unix.Msghdr
	iov []unix.Iovec
}

// orphan keeps the buffers of a removed tag's operation referenced until
// its last completion.
type orphan struct {
	buf  []byte
	bufs [][]byte
	msg  *urMsg
}

// urTable is the io_uring backend's table (see pagedTable).
type urTable = pagedTable[urState]

// liveTags returns the tags in use.
func (b *uringBackend) liveTags() iter.Seq[Tag] {
	return func(yield func(Tag) bool) {
		for _, p := range b.fds.pages {
			for i := range p {
				if p[i].tag != 0 && !yield(p[i].tag) {
					return
				}
			}
		}
	}
}

// submitRecv and submitSend record the owner's operation on its side.
func (b *uringBackend) submitRecv(tag Tag, op Op) *urState {
	st := b.state(tag)
	if st == nil {
		panic("poller: operation on an unknown tag")
	}
	if st.rop != 0 {
		panic("poller: a receive-side operation is already in flight")
	}
	st.rop = op
	return st
}

func (b *uringBackend) submitSend(tag Tag, op Op) *urState {
	st := b.state(tag)
	if st == nil {
		panic("poller: operation on an unknown tag")
	}
	if st.sop != 0 {
		panic("poller: a send-side operation is already in flight")
	}
	st.sop = op
	return st
}

// unavailable makes an error that wraps uring.ErrUnavailable.
func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{uring.ErrUnavailable}, args...)...)
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
