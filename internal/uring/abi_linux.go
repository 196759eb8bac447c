package uring

// Constants and structures of the io_uring ABI, from
// include/uapi/linux/io_uring.h (Linux 6.18).

// Setup flags (io_uring_params.flags).
const (
	SetupCQSize       = 1 << 3
	SetupClamp        = 1 << 4
	SetupRDisabled    = 1 << 6
	SetupSubmitAll    = 1 << 7
	SetupCoopTaskrun  = 1 << 8
	SetupTaskrunFlag  = 1 << 9
	SetupSingleIssuer = 1 << 12
	SetupDeferTaskrun = 1 << 13
)

// Feature bits (io_uring_params.features).
const (
	FeatSingleMmap     = 1 << 0
	FeatNoDrop         = 1 << 1
	FeatFastPoll       = 1 << 5
	FeatExtArg         = 1 << 8
	FeatRegRegRing     = 1 << 13
	FeatRecvSendBundle = 1 << 14
)

// Opcodes.
const (
	OpNop         = 0
	OpPollAdd     = 6
	OpSendmsg     = 9
	OpRecvmsg     = 10
	OpAccept      = 13
	OpAsyncCancel = 14
	OpRead        = 22
	OpSend        = 26
	OpRecv        = 27
	OpSendZC      = 47
	OpSendmsgZC   = 48
	opLast        = 62 // the last opcode of 6.18, for the probe's buffer
)

// SQE flags.
const (
	SQEFixedFile    = 1 << 0
	SQEBufferSelect = 1 << 5
)

// ioprio bits of accept and send/receive.
const (
	AcceptMultishot = 1 << 0
	RecvMultishot   = 1 << 1
)

// ioprio bits of a zero-copy send.
const (
	SendZCReportUsage = 1 << 3 // the notification tells whether the kernel copied
)

// NotifZCCopied is set in the Res of a zero-copy send's notification
// (CQEFNotif) when the kernel copied the data after all.
const NotifZCCopied = 1 << 31

// Cancel flags (sqe.op_flags of IORING_OP_ASYNC_CANCEL).
const (
	CancelAll = 1 << 0
)

// CQE flags.
const (
	CQEFBuffer       = 1 << 0
	CQEFMore         = 1 << 1
	CQEFSockNonempty = 1 << 2
	CQEFNotif        = 1 << 3
	CQEFBufMore      = 1 << 4
	cqeBufferShift   = 16
)

// io_uring_enter flags.
const (
	enterGetEvents      = 1 << 0
	enterExtArg         = 1 << 3
	enterRegisteredRing = 1 << 4
)

// SQ ring flags.
const (
	sqCQOverflow = 1 << 1
	sqTaskrun    = 1 << 2
)

// io_uring_register opcodes.
const (
	regFilesUpdate = 6
	regProbe       = 8
	regEnableRings = 12
	regFiles2      = 13
	regRingFDs     = 20
	unregRingFDs   = 21
	regPbufRing    = 22
	unregPbufRing  = 23
)

// Provided-buffer ring flags (io_uring_buf_reg.flags).
const (
	PbufRingInc = 2
)

// mmap offsets.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

// SQE is struct io_uring_sqe (64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IOPrio      uint16
	FD          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufIndex    uint16 // buf_index or buf_group
	Personality uint16
	FileIndex   uint32 // file_index, or optlen: a multishot receive's byte limit (RecvLimit)
	Addr3       uint64
	pad         uint64
}

// CQE is struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// BufID returns the provided buffer a completion used; valid when Flags
// has CQEFBuffer.
func (c *CQE) BufID() uint16 { return uint16(c.Flags >> cqeBufferShift) }

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWaitUS uint32
	ts        uint64
}

// rsrcUpdate is struct io_uring_rsrc_update.
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

// rsrcRegister is struct io_uring_rsrc_register.
type rsrcRegister struct {
	nr    uint32
	flags uint32
	resv2 uint64
	data  uint64
	tags  uint64
}

const rsrcRegisterSparse = 1 << 0

// filesUpdate is struct io_uring_files_update.
type filesUpdate struct {
	offset uint32
	resv   uint32
	fds    uint64
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// bufEntry is struct io_uring_buf.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16 // the ring's tail, in entry 0
}

// probe is struct io_uring_probe with room for every opcode.
type probe struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
	ops    [opLast + 1 + 64]probeOp
}

type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

const opSupported = 1 << 0
