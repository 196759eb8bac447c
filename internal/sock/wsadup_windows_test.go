package sock

import (
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestWSADuplicateSocket checks what a Windows descriptor table of real
// sockets would stand on (issue 34): WSADuplicateSocket to this process
// and WSASocket(FROM_PROTOCOL_INFO) give a second SOCKET for a
// connection package net made, which outlives the caller's Close and
// reads and writes with blocking Winsock calls, as dup(2) does on Unix.
// Under Wine 8 it passes.
func TestWSADuplicateSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.Write([]byte("hello"))
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info windows.WSAProtocolInfo
	var derr error
	rc.Control(func(fd uintptr) {
		derr = windows.WSADuplicateSocket(windows.Handle(fd), uint32(os.Getpid()), &info)
	})
	if derr != nil {
		t.Fatalf("WSADuplicateSocket = %v", derr)
	}
	s, err := windows.WSASocket(-1, -1, -1, &info, 0, 0)
	if err != nil {
		t.Fatalf("WSASocket(FROM_PROTOCOL_INFO) = %v", err)
	}
	defer windows.Closesocket(s)
	c.Close() // the caller's view is gone; the duplicate serves on

	buf := make([]byte, 16)
	var n, flags uint32
	wb := windows.WSABuf{Len: uint32(len(buf)), Buf: &buf[0]}
	if err := windows.WSARecv(s, &wb, 1, &n, &flags, nil, nil); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("WSARecv on the duplicate = %q, %v; want hello", buf[:n], err)
	}
	msg := []byte("reply")
	wb = windows.WSABuf{Len: uint32(len(msg)), Buf: &msg[0]}
	if err := windows.WSASend(s, &wb, 1, &n, 0, nil, nil); err != nil {
		t.Fatalf("WSASend on the duplicate = %v", err)
	}
	windows.Shutdown(s, windows.SHUT_WR)
	select {
	case r := <-got:
		if r != "reply" {
			t.Fatalf("the peer read %q, want reply", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the peer read no end of stream in 10 s")
	}
}
