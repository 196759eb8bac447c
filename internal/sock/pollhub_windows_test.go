package sock

import (
	"io"
	"net"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestPollHub parks a Read on each of hubConns winConns at once, then
// wakes them one by one with a byte from their peers: every Read returns
// its byte, and the process made far fewer threads than there were
// parked Reads (a WSAPoll per parked call held a thread each).
func TestPollHub(t *testing.T) {
	const hubConns = 300
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	threads0 := pprof.Lookup("threadcreate").Count()
	conns, peers := make([]*winConn, hubConns), make([]net.Conn, hubConns)
	for i := range conns {
		conns[i], peers[i] = hubPair(t, ln)
	}
	var wg sync.WaitGroup
	got := make(chan error, hubConns)
	for _, c := range conns {
		wg.Go(func() {
			buf := make([]byte, 1)
			if _, err := io.ReadFull(c, buf); err != nil {
				got <- err
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // every Read parks
	for _, p := range peers {
		p.Write([]byte{1})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked Reads did not all return within 30 s")
	}
	close(got)
	for err := range got {
		t.Errorf("Read = %v", err)
	}
	if n := pprof.Lookup("threadcreate").Count() - threads0; n > hubConns/4 {
		t.Errorf("%d threads made for %d parked Reads, want far fewer", n, hubConns)
	}
	for i := range conns {
		conns[i].Close()
		peers[i].Close()
	}
}

// hubPair returns a winConn over a duplicate of a connection to ln, and
// its peer.
func hubPair(t *testing.T, ln net.Listener) (*winConn, net.Conn) {
	t.Helper()
	peerc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		peerc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-peerc
	if peer == nil {
		t.Fatal("accept failed")
	}
	s, err := dupSocket(c.(syscall.Conn))
	if err != nil {
		t.Fatal(err)
	}
	return newWinConn(s, true), peer
}

// TestPollHubClosedSocket: a registration whose socket was closed
// without a kick (a call that registered again after its conn's Close)
// does not stop the hub: another socket's readiness is still signalled.
func TestPollHubClosedSocket(t *testing.T) {
	stale, _ := connPair(t)
	w := newPollWaiter(stale.s, true)
	if ready, err := hub.wait(&w, time.Millisecond); ready || err != nil {
		t.Fatalf("wait on an idle socket = %v, %v; want a timeout", ready, err)
	}
	windows.Closesocket(stale.s) // registered still, and now no socket
	stale.own = false            // connPair's cleanup must not close it again

	c, peer := connPair(t)
	got := make(chan bool, 1)
	go func() {
		wc := newPollWaiter(c.s, true)
		ready, _ := hub.wait(&wc, 10*time.Second)
		hub.kick(&wc)
		got <- ready
	}()
	time.Sleep(50 * time.Millisecond)
	peer.Write([]byte{1})
	if !<-got {
		t.Fatal("a readable socket was not signalled beside a closed one's registration")
	}
	hub.kick(&w)
}

// TestPollHubPokeStorm registers and kicks waiters from many goroutines
// at once, each registration writing a wake byte when none is on its
// way; then a socket made readable must still be signalled. Under Wine
// concurrent sends on the wake socket failed with WSAEWOULDBLOCK, a lost
// byte left the hub polling without the new registrations, and aio's
// slowloris test stalled one run in three.
func TestPollHubPokeStorm(t *testing.T) {
	const storms = 32
	var wg sync.WaitGroup
	end := time.Now().Add(time.Second)
	for range storms {
		c, _ := connPair(t)
		wg.Go(func() {
			w := newPollWaiter(c.s, true)
			for time.Now().Before(end) {
				hub.wait(&w, 50*time.Microsecond)
				hub.kick(&w)
			}
		})
	}
	wg.Wait()
	c, peer := connPair(t)
	w := newPollWaiter(c.s, true)
	defer hub.kick(&w)
	go func() {
		time.Sleep(20 * time.Millisecond)
		peer.Write([]byte{1})
	}()
	if ready, err := hub.wait(&w, 10*time.Second); !ready || err != nil {
		t.Fatalf("a readable socket after the storm: signalled %v, %v; want true", ready, err)
	}
}
