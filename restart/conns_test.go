//go:build unix

package restart_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestSendConn hands connections over after the listeners: each arrives
// in the new process with the input the old one had read from it, and
// the rest of its stream (what the client sent since) comes from the
// socket; writes reach the client. Close ends ReadyWith.
func TestSendConn(t *testing.T) {
	path, old, h := offer(t)
	tk := take(t, path)
	type handed struct {
		nc    net.Conn
		input string
	}
	got := make(chan handed, 4)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := tk.ReadyWith(ctx, func(nc net.Conn, input []byte) { got <- handed{nc, string(input)} }); err != nil {
		t.Fatalf("ReadyWith = %v", err)
	}
	select {
	case <-h.Taken():
	case <-time.After(testTimeout):
		t.Fatal("not taken")
	}
	var clients []net.Conn
	for i, input := range []string{"GET /a", ""} {
		client, err := net.Dial("tcp", old.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		clients = append(clients, client)
		srv, err := tk.Listeners["http"].Accept() // any process's copy: the socket is one
		if err != nil {
			t.Fatal(err)
		}
		if err := h.SendConn(srv, []byte(input)); err != nil {
			t.Fatalf("SendConn %d: %v", i, err)
		}
		if _, err := srv.Write([]byte("x")); err == nil {
			t.Errorf("SendConn %d left the old copy open", i)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tk.ConnsDone():
	case <-time.After(testTimeout):
		t.Fatal("ReadyWith's connections go on after Close")
	}
	if err := tk.ConnsErr(); err != nil {
		t.Fatalf("ConnsErr = %v", err)
	}
	for i, want := range []string{"GET /a", ""} {
		var hd handed
		select {
		case hd = <-got:
		default:
			t.Fatalf("connection %d not handed over", i)
		}
		defer hd.nc.Close()
		if hd.input != want {
			t.Errorf("connection %d: input %q, want %q", i, hd.input, want)
		}
		clients[i].Write([]byte(" HTTP/1.1"))
		hd.nc.SetDeadline(time.Now().Add(testTimeout))
		b := make([]byte, 9)
		if _, err := io.ReadFull(hd.nc, b); err != nil || string(b) != " HTTP/1.1" {
			t.Errorf("connection %d: read %q, %v after the hand-over", i, b, err)
		}
		hd.nc.Write([]byte("ok"))
		clients[i].SetDeadline(time.Now().Add(testTimeout))
		if _, err := io.ReadFull(clients[i], b[:2]); err != nil || string(b[:2]) != "ok" {
			t.Errorf("connection %d: the client read %q, %v", i, b[:2], err)
		}
	}
}

// TestSendConnBeforeTaken: SendConn fails before a taker is ready, and
// closes the connection.
func TestSendConnBeforeTaken(t *testing.T) {
	_, old, h := offer(t)
	client, err := net.Dial("tcp", old.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	srv, err := old.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SendConn(srv, nil); err == nil {
		t.Error("SendConn before Taken succeeded")
	}
	client.SetDeadline(time.Now().Add(testTimeout))
	if _, err := client.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the client read %v, want EOF: the connection closed", err)
	}
}

// TestTakenBeforeReadyReturns: once a taker's Ready has returned, the old
// process's Taken is closed and SendConn finds the taker. A new process
// that reports itself serving as soon as Ready returns may be told at
// once to drain the old one; before the fix, the old process said "ok"
// before it recorded the taker, and a drain begun in that window failed
// every hand-over with "no process took the listeners over"
// (TestRestartUnderLoad, once in CI).
func TestTakenBeforeReadyReturns(t *testing.T) {
	for i := range 1000 {
		path, old, h := offer(t)
		tk := take(t, path)
		if err := tk.ReadyWith(context.Background(), func(nc net.Conn, _ []byte) { nc.Close() }); err != nil {
			t.Fatalf("ReadyWith = %v", err)
		}
		select {
		case <-h.Taken():
		default:
			t.Fatalf("round %d: Ready returned before the old process's Taken was closed", i)
		}
		nc, err := net.Dial("tcp", old.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if err := h.SendConn(nc, nil); err != nil {
			t.Fatalf("round %d: SendConn right after Ready = %v", i, err)
		}
		h.Close()
		select {
		case <-tk.ConnsDone():
		case <-time.After(testTimeout):
			t.Fatalf("round %d: ReadyWith's connections did not end after Close", i)
		}
	}
}
