//go:build unix

package aio_test

import (
	"bytes"
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"os"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// Deadline tests run on a manual clock: nothing sleeps, the test moves the
// clock and pokes the loops so that they look at it.

// stCheckDeadline checks that r is a deadline completion of size want.
func stCheckDeadline(t *testing.T, r stResult, size int) {
	t.Helper()
	if r.Error != aio.ErrDeadline {
		t.Errorf("Error = %v, want ErrDeadline (==)", r.Error)
	}
	if !errors.Is(r.Error, os.ErrDeadlineExceeded) {
		t.Errorf("errors.Is(%v, os.ErrDeadlineExceeded) = false, want true", r.Error)
	}
	var ne net.Error
	if !errors.As(r.Error, &ne) || !ne.Timeout() {
		t.Errorf("%v: net.Error with Timeout() true: no, want yes", r.Error)
	}
	if r.Size != size {
		t.Errorf("Size = %d, want %d", r.Size, size)
	}
}

func TestDeadlineReadTimeoutNoData(t *testing.T) { backendtest.Run(t, testDeadlineReadTimeoutNoData) }

func testDeadlineReadTimeoutNoData(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)

	buf := make([]byte, 64)
	ctx := new(int)
	if err := w.ReadTimeout(ctx, c, buf, clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("ReadTimeout = %v, want nil", err)
	}
	w.Poke()
	if n := w.Stats().Total().PendingReads; n != 1 {
		t.Fatalf("PendingReads = %d, want 1", n)
	}
	if n := w.Timers(); n != 1 {
		t.Errorf("Timers() = %d, want 1", n)
	}
	col.none(t)

	clock.Advance(999 * time.Millisecond)
	w.Poke()
	if n := w.Stats().Total().PendingReads; n != 1 {
		t.Fatalf("PendingReads 1ms before the deadline = %d, want 1", n)
	}
	col.none(t)

	clock.Advance(2 * time.Millisecond)
	w.Poke()
	r := col.next(t)
	if r.Operation != aio.OpRead || r.Context != ctx || r.Conn != c {
		t.Errorf("result = op %v ctx %v conn %v, want read, %v, %v", r.Operation, r.Context, r.Conn, ctx, c)
	}
	stCheckDeadline(t, r, 0)
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() after expiry = %d, want 0", n)
	}
	if n := w.Stats().Total().PendingReads; n != 0 {
		t.Errorf("PendingReads after expiry = %d, want 0", n)
	}

	// The connection is still usable.
	stWrite(t, peer, []byte("after"))
	if err := w.Read(nil, c, buf); err != nil {
		t.Fatalf("Read = %v, want nil", err)
	}
	r = col.next(t)
	if r.Error != nil || string(r.Data) != "after" {
		t.Errorf("Read after a deadline = %q, %v, want %q, nil", r.Data, r.Error, "after")
	}
}

func TestDeadlineReadFullPartial(t *testing.T) { backendtest.Run(t, testDeadlineReadFullPartial) }

func testDeadlineReadFullPartial(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)

	buf := make([]byte, 100)
	data := stPattern(7, 100)
	if err := w.ReadFull(nil, c, buf, clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("ReadFull = %v, want nil", err)
	}
	stWrite(t, peer, data[:40])
	stWaitFor(t, w, "BytesRead == 40", func() bool { return w.Stats().Total().BytesRead == 40 })
	col.none(t)
	if n := w.Stats().Total().PendingReads; n != 1 {
		t.Fatalf("PendingReads = %d, want 1", n)
	}

	clock.Advance(2 * time.Second)
	w.Poke()
	r := col.next(t)
	stCheckDeadline(t, r, 40)
	if !bytes.Equal(r.Data, data[:40]) {
		t.Errorf("ReadFull data = %x, want %x", r.Data, data[:40])
	}
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() = %d, want 0", n)
	}

	// Nothing was lost: the rest of the stream follows.
	stWrite(t, peer, data[40:])
	rest := make([]byte, 60)
	if err := w.ReadFull(nil, c, rest, time.Time{}); err != nil {
		t.Fatalf("ReadFull = %v, want nil", err)
	}
	r = col.next(t)
	if r.Error != nil || !bytes.Equal(r.Data, data[40:]) {
		t.Errorf("ReadFull after a deadline = %x, %v, want %x, nil", r.Data, r.Error, data[40:])
	}
}

func TestDeadlineWriteTimeoutPartial(t *testing.T) {
	backendtest.Run(t, testDeadlineWriteTimeoutPartial)
}

func testDeadlineWriteTimeoutPartial(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stTCPPair(t)
	col := stCollect(t, w)

	size := 64 << 20
	if stRace {
		size = 16 << 20 // the race detector makes filling it slow
	}
	big := stPattern(1, size)
	if err := w.WriteTimeout(nil, c, big, clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("WriteTimeout = %v, want nil", err)
	}
	w.Poke()
	if n := w.Stats().Total().PendingWrites; n != 1 {
		t.Fatalf("PendingWrites = %d, want 1 (the peer never reads)", n)
	}
	col.none(t)

	clock.Advance(2 * time.Second)
	w.Poke()
	r := col.next(t)
	if r.Operation != aio.OpWrite {
		t.Fatalf("Operation = %v, want write", r.Operation)
	}
	stCheckDeadline(t, r, r.Size)
	if r.Size <= 0 || r.Size >= len(big) {
		t.Fatalf("Size = %d, want in (0, %d)", r.Size, len(big))
	}
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() = %d, want 0", n)
	}
	partial := r.Size
	t.Logf("%d MiB write cut at %d bytes", size>>20, partial)

	// The connection still works: the next write follows the partial one.
	tail := stPattern(2, 100_000)
	if err := w.Write(nil, c, tail); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	got := stReadN(t, peer, partial+len(tail))
	if !bytes.Equal(got[:partial], big[:partial]) {
		t.Errorf("stream prefix differs from the first %d bytes of the cut write", partial)
	}
	if !bytes.Equal(got[partial:], tail) {
		t.Errorf("stream after the cut write differs from the next write")
	}
	r = col.next(t)
	if r.Operation != aio.OpWrite || r.Error != nil || r.Size != len(tail) {
		t.Errorf("Write after a deadline = op %v size %d err %v, want write, %d, nil", r.Operation, r.Size, r.Error, len(tail))
	}
	peer.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := peer.Read(make([]byte, 1)); n != 0 {
		t.Errorf("peer Read after the stream = %d, %v, want 0 bytes", n, err)
	}
	peer.SetReadDeadline(time.Time{})

	// And reads too.
	stWrite(t, peer, []byte("pong"))
	if err := w.Read(nil, c, make([]byte, 16)); err != nil {
		t.Fatalf("Read = %v, want nil", err)
	}
	if r = col.next(t); r.Error != nil || string(r.Data) != "pong" {
		t.Errorf("Read = %q, %v, want %q, nil", r.Data, r.Error, "pong")
	}
}

// A write queued behind a blocked one expires without touching the stream.
func TestDeadlineQueuedWrite(t *testing.T) { backendtest.Run(t, testDeadlineQueuedWrite) }

func testDeadlineQueuedWrite(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)

	big := stPattern(3, 4<<20)
	small := []byte("never sent")
	after := []byte("sent after")
	first, second, third := new(int), new(int), new(int)
	if err := w.Write(first, c, big); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	if err := w.WriteTimeout(second, c, small, clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("WriteTimeout = %v, want nil", err)
	}
	if err := w.Write(third, c, after); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	w.Poke()
	if n := w.Stats().Total().PendingWrites; n != 3 {
		t.Fatalf("PendingWrites = %d, want 3", n)
	}
	clock.Advance(2 * time.Second)
	w.Poke()
	r := col.next(t)
	if r.Context != second {
		t.Fatalf("first completion ctx = %v, want the expired write %v", r.Context, second)
	}
	stCheckDeadline(t, r, 0)

	got := stReadN(t, peer, len(big)+len(after))
	if !bytes.Equal(got[:len(big)], big) || !bytes.Equal(got[len(big):], after) {
		t.Errorf("stream = the 4 MiB write then %q: no, want yes", after)
	}
	for _, want := range []*int{first, third} {
		r := col.next(t)
		if r.Context != want || r.Error != nil || r.Size != len(r.Buffer) {
			t.Errorf("completion = ctx %v size %d err %v, want ctx %v, full size, nil", r.Context, r.Size, r.Error, want)
		}
	}
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() = %d, want 0", n)
	}
}

func TestDeadlinePastStillAttempts(t *testing.T) { backendtest.Run(t, testDeadlinePastStillAttempts) }

func testDeadlinePastStillAttempts(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)
	past := clock.Now().Add(-time.Second)

	// The socket pair queues the data before Write returns.
	stWrite(t, peer, []byte("hello"))
	if err := w.ReadTimeout(nil, c, make([]byte, 16), past); err != nil {
		t.Fatalf("ReadTimeout = %v, want nil", err)
	}
	r := col.next(t)
	if r.Error != nil || string(r.Data) != "hello" {
		t.Errorf("ReadTimeout(past) with data waiting = %q, %v, want %q, nil", r.Data, r.Error, "hello")
	}

	// The same for ReadFull with all its bytes waiting.
	stWrite(t, peer, []byte("world"))
	if err := w.ReadFull(nil, c, make([]byte, 5), past); err != nil {
		t.Fatalf("ReadFull = %v, want nil", err)
	}
	r = col.next(t)
	if r.Error != nil || string(r.Data) != "world" {
		t.Errorf("ReadFull(past) with data waiting = %q, %v, want %q, nil", r.Data, r.Error, "world")
	}

	// A write with room in the socket buffer goes through.
	if err := w.WriteTimeout(nil, c, []byte("ping"), past); err != nil {
		t.Fatalf("WriteTimeout = %v, want nil", err)
	}
	r = col.next(t)
	if r.Error != nil || r.Size != 4 {
		t.Errorf("WriteTimeout(past) = %d, %v, want 4, nil", r.Size, r.Error)
	}
	if got := stReadN(t, peer, 4); string(got) != "ping" {
		t.Errorf("peer read %q, want %q", got, "ping")
	}

	// With nothing to read, the past deadline ends the read without the
	// clock moving.
	if err := w.ReadTimeout(nil, c, make([]byte, 16), past); err != nil {
		t.Fatalf("ReadTimeout = %v, want nil", err)
	}
	stCheckDeadline(t, col.next(t), 0)
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() = %d, want 0", n)
	}
}

func TestDeadlineZeroMeansNone(t *testing.T) { backendtest.Run(t, testDeadlineZeroMeansNone) }

func testDeadlineZeroMeansNone(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c1, peer1 := stSocketPair(t)
	c2, peer2 := stSocketPair(t)
	col := stCollect(t, w)

	if err := w.ReadTimeout(nil, c1, make([]byte, 16), time.Time{}); err != nil {
		t.Fatalf("ReadTimeout = %v, want nil", err)
	}
	if err := w.ReadFull(nil, c2, make([]byte, 4), time.Time{}); err != nil {
		t.Fatalf("ReadFull = %v, want nil", err)
	}
	w.Poke()
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() = %d, want 0", n)
	}
	clock.Advance(365 * 24 * time.Hour)
	w.Poke()
	w.Poke()
	if n := w.Stats().Total().PendingReads; n != 2 {
		t.Fatalf("PendingReads a year later = %d, want 2", n)
	}
	col.none(t)

	stWrite(t, peer1, []byte("a"))
	stWrite(t, peer2, []byte("bcde"))
	for range 2 {
		r := col.next(t)
		if r.Error != nil || (string(r.Data) != "a" && string(r.Data) != "bcde") {
			t.Errorf("read = %q, %v, want data, nil", r.Data, r.Error)
		}
	}
}

// Reads queued on one conn keep their order around the ones that expire.
func TestDeadlineQueuedReads(t *testing.T) { backendtest.Run(t, testDeadlineQueuedReads) }

func testDeadlineQueuedReads(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)
	now := clock.Now()

	deadlines := []time.Duration{10 * time.Second, time.Second, 20 * time.Second, time.Second, 0}
	ctxs := make([]*int, len(deadlines))
	for i, d := range deadlines {
		ctxs[i] = new(int)
		*ctxs[i] = i
		var dl time.Time
		if d > 0 {
			dl = now.Add(d)
		}
		if err := w.ReadTimeout(ctxs[i], c, make([]byte, 16), dl); err != nil {
			t.Fatalf("ReadTimeout #%d = %v, want nil", i, err)
		}
	}
	w.Poke()
	if n := w.Timers(); n != 4 {
		t.Errorf("Timers() = %d, want 4", n)
	}

	// #1 and #3 expire; they are not at the head, so they end at once.
	clock.Advance(2 * time.Second)
	w.Poke()
	for _, want := range []int{1, 3} {
		r := col.next(t)
		if *r.Context.(*int) != want {
			t.Fatalf("completion #%d, want #%d", *r.Context.(*int), want)
		}
		stCheckDeadline(t, r, 0)
	}
	if n := w.Timers(); n != 2 {
		t.Errorf("Timers() = %d, want 2", n)
	}
	col.none(t)

	// The head (#0) gets the data.
	stWrite(t, peer, []byte("zero"))
	r := col.next(t)
	if *r.Context.(*int) != 0 || r.Error != nil || string(r.Data) != "zero" {
		t.Fatalf("completion #%d = %q, %v, want #0 = %q, nil", *r.Context.(*int), r.Data, r.Error, "zero")
	}

	// #2 is now the head with a receive in flight; it expires by cancel.
	clock.Advance(20 * time.Second)
	w.Poke()
	r = col.next(t)
	if *r.Context.(*int) != 2 {
		t.Fatalf("completion #%d, want #2", *r.Context.(*int))
	}
	stCheckDeadline(t, r, 0)

	// #4 has no deadline and gets the next data.
	stWrite(t, peer, []byte("four"))
	r = col.next(t)
	if *r.Context.(*int) != 4 || r.Error != nil || string(r.Data) != "four" {
		t.Fatalf("completion #%d = %q, %v, want #4 = %q, nil", *r.Context.(*int), r.Data, r.Error, "four")
	}
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() after every request completed = %d, want 0", n)
	}
}

// A request that completes normally takes its timer with it.
func TestDeadlineCompletionCancelsTimer(t *testing.T) {
	backendtest.Run(t, testDeadlineCompletionCancelsTimer)
}

func testDeadlineCompletionCancelsTimer(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{})
	c, peer := stSocketPair(t)
	col := stCollect(t, w)
	dl := clock.Now().Add(time.Hour)

	if err := w.ReadTimeout(nil, c, make([]byte, 16), dl); err != nil {
		t.Fatalf("ReadTimeout = %v, want nil", err)
	}
	if err := w.ReadFull(nil, c, make([]byte, 3), dl); err != nil {
		t.Fatalf("ReadFull = %v, want nil", err)
	}
	if err := w.WriteTimeout(nil, c, []byte("out"), dl); err != nil {
		t.Fatalf("WriteTimeout = %v, want nil", err)
	}
	w.Poke()
	stWrite(t, peer, []byte("in"))
	var got []string
	for range 2 {
		r := col.next(t)
		if r.Error != nil {
			t.Errorf("completion = %v, want nil", r.Error)
		}
		got = append(got, r.Operation.String())
	}
	// Only the ReadFull remains, with its timer.
	w.Poke()
	if n := w.Timers(); n != 1 {
		t.Errorf("Timers() with one request pending = %d, want 1 (completed: %v)", n, got)
	}
	stWrite(t, peer, []byte("abc"))
	r := col.next(t)
	if r.Error != nil || string(r.Data) != "abc" {
		t.Errorf("ReadFull = %q, %v, want %q, nil", r.Data, r.Error, "abc")
	}
	if n := w.Timers(); n != 0 {
		t.Errorf("Timers() after completion = %d, want 0", n)
	}
	if got := stReadN(t, peer, 3); string(got) != "out" {
		t.Errorf("peer read %q, want %q", got, "out")
	}

	// No stale timer fires later.
	clock.Advance(2 * time.Hour)
	w.Poke()
	col.none(t)
}
