package engine_test

// Write, Writev, Wake, CloseWrite, Close and the engine's Stop, all at
// once from many goroutines on one connection. Run with -race.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestRaceWriteClose checks, over many rounds, a connection that
// writers (Write and Writev of self-describing messages), a waker, and
// CloseWrite, Close and, every other round, the engine's Stop, all hit at
// once. Every call returns (no panic, no deadlock); every failed write
// fails with an error matching net.ErrClosed, and so does every later one
// of its writer; the peer reads whole messages, each writer's in order
// with none missing and none from a write that failed ("no data after
// close"); and unless Stop cut the connection short, every write that
// succeeded was delivered.
func TestRaceWriteClose(t *testing.T) { backendtest.Run(t, testRaceWriteClose) }

func testRaceWriteClose(t *testing.T) {
	stresstest.RaceRounds(t, 24, 8, func(round int) { etRaceRound(t, round, round%2 == 1) })
}

// TestWriteWhileClosing checks the window the race above hits only now
// and then: once Close has taken effect but queued output still holds the
// connection open, Write fails with net.ErrClosed (as documented) instead
// of queueing bytes that the close may drop, and the peer reads exactly
// the output queued before Close.
func TestWriteWhileClosing(t *testing.T) { backendtest.Run(t, testWriteWhileClosing) }

func testWriteWhileClosing(t *testing.T) {
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{}, "unix")
	out := etPattern(4 << 20)
	if n, err := c.Write(out); n != len(out) || err != nil {
		t.Fatalf("Write(4 MiB) = %d, %v", n, err)
	}
	c.Close()
	etDo(t, c, func(*engine.Conn) {}) // the close has taken effect
	if c.OutboundBuffered() == 0 {
		t.Fatalf("OutboundBuffered() = 0 with a peer that does not read")
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write while closing = %v, want net.ErrClosed", err)
	}
	if _, err := c.Writev([][]byte{[]byte("la"), []byte("te")}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Writev while closing = %v, want net.ErrClosed", err)
	}
	if got := etReadAll(t, peer); !bytes.Equal(got, out) {
		t.Errorf("peer read %d bytes, want exactly the %d queued before Close", len(got), len(out))
	}
	if ev := etClosed(t, h); ev.err != nil {
		t.Errorf("OnClose(err = %v), want nil", ev.err)
	}
}

// etRaceWriters is the number of writing goroutines per round.
const etRaceWriters = 4

// etRaceRound runs one round; with stop, the engine is stopped during it.
func etRaceRound(t *testing.T, round int, stop bool) {
	h := etNewHandler()
	e := etStart(t, h, engine.Options{Loops: 1 + round%2, MaxWriteBuffer: 64 << 20, WriteHighWater: 64 << 20})
	a := etListen(t, e, "tcp")
	peer := etDial(t, a)
	c := etOpened(t, h)
	got := stresstest.ReadRace(peer, etWait)
	rng := rand.New(rand.NewPCG(uint64(round), 7))
	delays := [3]time.Duration{}
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(3000)) * time.Microsecond
	}

	var ok [etRaceWriters]int // successful writes per writer
	var wg sync.WaitGroup
	start := make(chan struct{})
	for id := range etRaceWriters {
		wg.Go(func() {
			<-start
			ok[id] = etRaceWrite(t, c, id, round)
		})
	}
	done := make(chan struct{})
	wg.Go(func() {
		<-start
		for range 2000 { // bounded: every Wake is a task for the loop
			select {
			case <-done:
				return
			default:
				c.Wake()
				runtime.Gosched()
			}
		}
	})
	var closers sync.WaitGroup
	after := func(d time.Duration, f func()) {
		closers.Go(func() {
			<-start
			time.Sleep(d)
			f()
		})
	}
	after(delays[0], func() { c.CloseWrite() })
	after(delays[1], func() { c.Close() })
	if stop {
		after(delays[2], func() { e.Stop() })
	}
	close(start)
	closers.Wait()
	time.Sleep(time.Millisecond)
	close(done)
	wg.Wait()

	stream, _ := got.End(t) // however the read ended, what arrived is checked
	s, err := stresstest.ParseRace(stream, etRaceWriters)
	if err == nil && s.CutLen > 0 && !stop {
		// Only Stop drops queued output, possibly in the middle of a message.
		err = fmt.Errorf("it ends %d bytes into a message (%v)", s.CutLen, s.Cut)
	}
	if err != nil {
		t.Fatalf("round %d: peer stream: %v", round, err)
	}
	delivered := s.Delivered
	for id := range etRaceWriters {
		switch {
		case delivered[id] > ok[id]:
			t.Errorf("round %d, writer %d: %d messages delivered, %d writes succeeded: data of a failed write arrived", round, id, delivered[id], ok[id])
		case !stop && delivered[id] != ok[id]:
			t.Errorf("round %d, writer %d: %d messages delivered, %d writes succeeded: a write that succeeded was lost", round, id, delivered[id], ok[id])
		}
	}
	if ev := etClosed(t, h); ev.c != c {
		t.Errorf("OnClose of %p, want %p", ev.c, c)
	}
	etStop(t, e)
	etNoEvent(t, h.closed, "a second OnClose")
}

// etRaceWrite writes messages of writer id with Write and Writev until a
// write fails, checks the error and that the next write fails too, and
// returns the number of writes that succeeded.
func etRaceWrite(t *testing.T, c *engine.Conn, id, round int) int {
	for seq := 0; seq < 100_000; seq++ {
		m := stresstest.RaceMsg(id, seq, (seq*131+id*17+round)%3000)
		var n int
		var err error
		if seq%2 == 0 {
			n, err = c.Write(m)
		} else {
			n, err = c.Writev(etPieces(m, 8))
		}
		if err == nil && n == len(m) {
			continue
		}
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("round %d, writer %d: write %d = %d, %v, want net.ErrClosed", round, id, seq, n, err)
		}
		if _, err := c.Write(m); !errors.Is(err, net.ErrClosed) {
			t.Errorf("round %d, writer %d: write after a failed one = %v, want net.ErrClosed", round, id, err)
		}
		return seq
	}
	t.Errorf("round %d, writer %d: 100,000 writes and the connection still open", round, id)
	return 0
}
