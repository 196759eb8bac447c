package uring

import (
	"runtime"
	"unsafe"
)

// RegisterFilesSparse registers an empty table of n fixed files (Linux
// 5.19). The table is charged against RLIMIT_NOFILE: a table larger than
// the open-file limit fails with EMFILE, so size it from the limit (rio
// asks for 65,535 and cannot start under a 20,000 limit).
func (r *Ring) RegisterFilesSparse(n uint32) error {
	reg := rsrcRegister{nr: n, flags: rsrcRegisterSparse}
	_, err := register(r.fd, regFiles2, unsafe.Pointer(&reg), uint32(unsafe.Sizeof(reg)))
	return err
}

// UpdateFile puts fd at index i of the fixed-file table (-1 clears it).
// SQEs then name the file by i with SQEFixedFile, sparing the kernel a
// descriptor lookup and reference count per operation.
func (r *Ring) UpdateFile(i uint32, fd int32) error {
	fds := [1]int32{fd}
	up := filesUpdate{offset: i, fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	_, err := register(r.fd, regFilesUpdate, unsafe.Pointer(&up), 1)
	runtime.KeepAlive(&fds)
	return err
}
