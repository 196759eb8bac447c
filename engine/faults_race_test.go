package engine_test

// Write, Writev, Wake, CloseWrite, Close and the engine's Stop, all at
// once from many goroutines on one connection. Run with -race.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
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
	rounds := 24
	if testing.Short() {
		rounds = 8
	}
	for round := range rounds {
		etRaceRound(t, round, round%2 == 1)
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
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
	got := etDrain(peer)
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

	stream := etRecv(t, got, "the peer's read to the end")
	delivered, err := etParseRace(stream, !stop)
	if err != nil {
		t.Fatalf("round %d: peer stream: %v", round, err)
	}
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
		m := etMsg(id, seq, (seq*131+id*17+round)%3000)
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

// etParseRace parses a stream of etMsg messages and returns how many of
// each writer's arrived, checking that each writer's come in order from
// 0, whole; a truncated last message is an error only if whole is set.
func etParseRace(stream []byte, whole bool) ([etRaceWriters]int, error) {
	var next [etRaceWriters]int
	br := bufio.NewReader(bytes.NewReader(stream))
	for i := 0; ; i++ {
		var hdr [9]byte
		if k, err := io.ReadFull(br, hdr[:]); err == io.EOF {
			return next, nil
		} else if err != nil {
			return next, etTruncated(whole, fmt.Errorf("message %d: a header cut after %d bytes", i, k))
		}
		id, seq, n := int(hdr[0]), int(binary.BigEndian.Uint32(hdr[1:])), int(binary.BigEndian.Uint32(hdr[5:]))
		if id >= etRaceWriters || n > 1<<20 {
			return next, fmt.Errorf("message %d: header %x is not one", i, hdr)
		}
		if seq != next[id] {
			return next, fmt.Errorf("message %d: writer %d sequence %d, want %d", i, id, seq, next[id])
		}
		body := make([]byte, n)
		if k, err := io.ReadFull(br, body); err != nil {
			return next, etTruncated(whole, fmt.Errorf("message %d (writer %d, %d): body cut after %d of %d bytes", i, id, seq, k, n))
		}
		for j, b := range body {
			if int(b) != id {
				return next, fmt.Errorf("message %d of writer %d: byte %d is %d: another write interleaved", i, id, j, b)
			}
		}
		next[id]++
	}
}

// etTruncated returns err if the stream had to be whole, nil otherwise:
// Stop drops queued output, possibly in the middle of a message.
func etTruncated(whole bool, err error) error {
	if whole {
		return err
	}
	return nil
}
