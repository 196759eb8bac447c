//go:build unix

package aio_test

// Writes from many goroutines on one conn, racing with Free and the
// watcher's Close, checked against what the peer receives. Run with
// -race. (race_test.go checks the completions' errors of such races;
// this checks the stream.)

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// frWriters is the number of writing goroutines per round.
const frWriters = 4

// frCount is the most writes per writer and round.
const frCount = 60

// frMsg identifies a write: writer id, sequence number, length of the
// whole message (stresstest.RaceMsg).
type frMsg struct{ id, seq, n int }

// TestRaceWritesFreeClose checks, over many rounds, writers submitting
// self-describing messages on one conn while Free and, every other round,
// the watcher's Close hit it. No call panics or blocks; submissions fail
// only with ErrWatcherClosed; a write that completes successfully was
// delivered whole; a failed one failed with an error matching
// net.ErrClosed and left at most its reported Size in the stream, last;
// the peer reads each writer's messages in order, whole and not
// interleaved, and none whose write failed ("no data after Free"); and
// unless Close dropped them, every submitted write completes once.
func TestRaceWritesFreeClose(t *testing.T) { backendtest.Run(t, testRaceWritesFreeClose) }

func testRaceWritesFreeClose(t *testing.T) {
	stresstest.RaceRounds(t, 16, 6, func(round int) { frRound(t, round, round%2 == 1) })
}

func frRound(t *testing.T, round int, closeWatcher bool) {
	w := stWatcher(t, aio.Config{Loops: 1 + round%2})
	col := stCollect(t, w)
	pair := stSocketPair
	if round%4 >= 2 {
		pair = stTCPPair
	}
	c, peer := pair(t)
	got := stresstest.ReadRace(peer, stTimeout)
	rng := rand.New(rand.NewPCG(uint64(round), 11))
	freeAt, closeAt := time.Duration(rng.IntN(2000))*time.Microsecond, time.Duration(rng.IntN(2000))*time.Microsecond

	var submitted [frWriters]int
	var wg sync.WaitGroup
	start := make(chan struct{})
	for id := range frWriters {
		wg.Go(func() {
			<-start
			submitted[id] = frWrite(t, w, c, id, round)
		})
	}
	wg.Go(func() {
		<-start
		time.Sleep(freeAt)
		if err := w.Free(c); err != nil && err != aio.ErrWatcherClosed {
			t.Errorf("round %d: Free = %v, want nil or ErrWatcherClosed", round, err)
		}
	})
	if closeWatcher {
		wg.Go(func() {
			<-start
			time.Sleep(closeAt)
			w.Close()
		})
	}
	close(start)
	wg.Wait()

	total := 0
	for _, n := range submitted {
		total += n
	}
	done := frCompletions(t, col, total, closeWatcher)
	if !closeWatcher {
		w.Close() // the peer reads to the end even if Free lost the race
	}
	// A conn no request delegated is still the caller's to close (Free
	// after Close does not); one delegated was closed by the watcher.
	if err := c.Close(); err == nil && total > 0 {
		t.Errorf("round %d: %d writes submitted, but the caller's conn was still open", round, total)
	}
	stream, err := got.End(t)
	if err != nil {
		t.Errorf("round %d: the peer's read to the end: %v after %d bytes", round, err, len(stream))
	}
	if err := frCheck(stream, done, submitted, closeWatcher); err != nil {
		t.Errorf("round %d (Free after %v, Close %v after %v): %v", round, freeAt, closeWatcher, closeAt, err)
	}
}

// frWrite submits writer id's messages until a submission fails, and
// returns how many were accepted.
func frWrite(t *testing.T, w *aio.Watcher, c net.Conn, id, round int) int {
	for seq := 0; seq < frCount; seq++ {
		// Up to 64 KiB: more than a Unix socket's buffer, so that Free
		// often cuts a write in flight.
		m := stresstest.RaceMsg(id, seq, (seq*7919+id*17+round)%(64<<10))
		if err := w.Write(&frMsg{id, seq, len(m)}, c, m); err != nil {
			if err != aio.ErrWatcherClosed {
				t.Errorf("round %d, writer %d: Write = %v, want nil or ErrWatcherClosed", round, id, err)
			}
			return seq
		}
	}
	return frCount
}

// frDone is a write's completion.
type frDone struct {
	size int
	err  error
}

// frCompletions collects the completions of total writes, or, when the
// watcher was closed, those delivered before WaitIO ended.
func frCompletions(t *testing.T, col *stCollector, total int, closed bool) map[frMsg]frDone {
	t.Helper()
	done := make(map[frMsg]frDone)
	add := func(r stResult) {
		m := *r.Context.(*frMsg)
		if _, dup := done[m]; dup {
			t.Errorf("write %+v completed twice", m)
		}
		done[m] = frDone{r.Size, r.Error}
	}
	if !closed {
		for range total {
			add(col.next(t))
		}
		return done
	}
	for {
		select {
		case r := <-col.ch:
			add(r)
		case <-col.done:
			for {
				select {
				case r := <-col.ch:
					add(r)
				default:
					return done
				}
			}
		case <-time.After(stTimeout):
			t.Fatalf("WaitIO still running %v after Close", stTimeout)
		}
	}
}

// frCheck checks the peer's stream against the completions.
func frCheck(stream []byte, done map[frMsg]frDone, submitted [frWriters]int, closed bool) error {
	s, err := stresstest.ParseRace(stream, frWriters)
	if err != nil {
		return err
	}
	for _, h := range s.Whole {
		m := frMsg{h.ID, h.Seq, h.Size()}
		d, ok := done[m]
		switch {
		case !ok && !closed:
			return fmt.Errorf("message %+v delivered, but its write never completed", m)
		case ok && (d.err != nil || d.size != m.n):
			return fmt.Errorf("message %+v delivered whole, but its write completed with %d bytes, %v", m, d.size, d.err)
		}
	}
	if s.CutLen > 0 {
		if err := frPartialEnd(s, done, closed); err != nil {
			return err
		}
	}
	for m, d := range done {
		if d.err == nil && (d.size != m.n || m.seq >= s.Delivered[m.id]) {
			return fmt.Errorf("write %+v succeeded (%d bytes) but was not delivered", m, d.size)
		}
		if d.err != nil && !stIsClosed(d.err) {
			return fmt.Errorf("write %+v failed with %v, want an error matching net.ErrClosed", m, d.err)
		}
	}
	for id, n := range submitted {
		if s.Delivered[id] > n {
			return fmt.Errorf("writer %d: %d messages delivered, %d submitted", id, s.Delivered[id], n)
		}
	}
	return nil
}

// frPartialEnd checks the cut message at the end of the stream: its
// write (unknown when not even the header arrived) failed having written
// exactly the bytes that arrived, or its completion was dropped by Close.
func frPartialEnd(s stresstest.RaceStream, done map[frMsg]frDone, closed bool) error {
	if s.Cut == nil {
		for _, d := range done {
			if d.err != nil && d.size == s.CutLen {
				return nil
			}
		}
		if closed {
			return nil
		}
	} else {
		m := frMsg{s.Cut.ID, s.Cut.Seq, s.Cut.Size()}
		if d, ok := done[m]; ok && d.err != nil && d.size == s.CutLen {
			return nil
		} else if !ok && closed {
			return nil
		}
	}
	return fmt.Errorf("the stream ends with %d bytes of a message (%v) no failed write reports", s.CutLen, s.Cut)
}
