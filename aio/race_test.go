//go:build unix

package aio_test

import (
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// Races between Free, Detach, Close and I/O. Run them with -race.

// stIter tags the requests of one iteration.
type stIter struct{ i int }

// stPeerDrain reads from c until an error, on a new goroutine, and closes
// the returned channel then.
func stPeerDrain(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, c)
	}()
	return done
}

// stPeerFlood writes to c until an error, on a new goroutine.
func stPeerFlood(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 256)
		for {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	return done
}

// stJoin waits for done, failing the test after stTimeout.
func stJoin(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(stTimeout):
		t.Fatalf("%s: not done within %v", what, stTimeout)
	}
}

// Free while reads and writes are being submitted and are pending: every
// request completes, with success or a closed-connection error, and the
// socket is closed.
func TestStressFreeRacesPendingIO(t *testing.T) { backendtest.Run(t, testStressFreeRacesPendingIO) }

func testStressFreeRacesPendingIO(t *testing.T) {
	const iters, perSide = 40, 100
	w := stWatcher(t, aio.Config{})
	col := stCollect(t, w)
	stWarmNet(t)
	before := stFDs(t)

	var outcomes [2]int // completions with data, with a closed error
	for it := range iters {
		c, peer := stSocketPair(t)
		drained, flooded := stPeerDrain(peer), stPeerFlood(peer)
		ctx := &stIter{it}
		var submitted atomic.Int64
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			<-start
			for range perSide {
				if err := w.Read(ctx, c, make([]byte, 64)); err != nil {
					t.Errorf("Read = %v, want nil", err)
					return
				}
				submitted.Add(1)
			}
		})
		wg.Go(func() {
			<-start
			buf := make([]byte, 128)
			for range perSide {
				if err := w.Write(ctx, c, buf); err != nil {
					t.Errorf("Write = %v, want nil", err)
					return
				}
				submitted.Add(1)
			}
		})
		wg.Go(func() {
			<-start
			for range it % 16 {
				runtime.Gosched()
			}
			if err := w.Free(c); err != nil {
				t.Errorf("Free = %v, want nil", err)
			}
		})
		close(start)
		wg.Wait()

		for range submitted.Load() {
			r := col.next(t)
			if r.Context != ctx {
				t.Fatalf("iteration %d: completion of iteration %d", it, r.Context.(*stIter).i)
			}
			switch {
			case r.Error == nil:
				outcomes[0]++
				if r.Operation == aio.OpWrite && r.Size != 128 {
					t.Errorf("write = %d bytes, nil, want 128", r.Size)
				}
			case stIsClosed(r.Error):
				outcomes[1]++
			default:
				t.Errorf("iteration %d: %v = %v, want nil or a closed-connection error", it, r.Operation, r.Error)
			}
		}
		// Free closed the watcher's descriptor: the peer sees the end.
		stJoin(t, "peer reading until the socket closes", drained)
		stJoin(t, "peer writing until the socket closes", flooded)
		peer.Close()
	}
	stCheckFDs(t, before)
	if s := w.Stats().Total(); s.Conns != 0 || s.PendingReads != 0 || s.PendingWrites != 0 {
		t.Errorf("Stats = %d conns, %d reads, %d writes pending, want 0, 0, 0", s.Conns, s.PendingReads, s.PendingWrites)
	}
	t.Logf("completions: %d done, %d closed", outcomes[0], outcomes[1])
}

// Close while many goroutines submit and WaitIO blocks: no panic, no hang,
// submitters get nil or ErrWatcherClosed, WaitIO ErrWatcherClosed, and no
// descriptor stays open.
func TestStressCloseRacesSubmit(t *testing.T) { backendtest.Run(t, testStressCloseRacesSubmit) }

func testStressCloseRacesSubmit(t *testing.T) {
	const rounds, conns, submitters, maxOps = 30, 16, 16, 400
	stWarmNet(t)
	before := stFDs(t)
	for round := range rounds {
		w, err := aio.NewWatcherConfig(aio.Config{Loops: 2})
		if err != nil {
			t.Fatalf("NewWatcherConfig = %v, want nil", err)
		}
		t.Cleanup(func() { w.Close() })
		var cs, peers []net.Conn
		for range conns {
			c, p := stSocketPair(t)
			cs, peers = append(cs, c), append(peers, p)
		}

		waited := make(chan error, 1)
		go func() {
			for {
				if _, err := w.WaitIO(); err != nil {
					waited <- err
					return
				}
			}
		}()

		var ops atomic.Int64
		var wg sync.WaitGroup
		for g := range submitters {
			wg.Go(func() {
				buf := make([]byte, 64)
				closed := 0
				for k := 0; k < maxOps && closed < 10; k++ {
					c := cs[(g+k)%conns]
					var err error
					switch k % 5 {
					case 0:
						err = w.Read(nil, c, buf)
					case 1:
						err = w.Write(nil, c, buf[:16])
					case 2:
						err = w.ReadTimeout(nil, c, nil, time.Now().Add(time.Hour))
					case 3:
						err = w.ReadFull(nil, c, buf, time.Time{})
					case 4:
						if k%25 == 24 {
							err = w.Free(c)
						} else {
							err = w.WriteTimeout(nil, c, buf[:8], time.Now().Add(time.Hour))
						}
					}
					switch err {
					case nil:
						ops.Add(1)
					case aio.ErrWatcherClosed:
						closed++
					default:
						t.Errorf("round %d: submission = %v, want nil or ErrWatcherClosed", round, err)
						return
					}
				}
			})
		}
		// Close once the submitters are well under way.
		deadline := time.Now().Add(stTimeout)
		for ops.Load() < int64(round%10*50) && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		atClose := ops.Load()
		if err := w.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		stJoin(t, "submitters", done)
		t.Logf("round %d: %d submissions before Close, %d in all", round, atClose, ops.Load())
		select {
		case err := <-waited:
			if err != aio.ErrWatcherClosed {
				t.Errorf("WaitIO() = %v, want ErrWatcherClosed", err)
			}
		case <-time.After(stTimeout):
			t.Fatalf("WaitIO still blocked %v after Close", stTimeout)
		}

		if err := w.Read(nil, cs[0], nil); err != aio.ErrWatcherClosed {
			t.Errorf("Read after Close = %v, want ErrWatcherClosed", err)
		}
		if err := w.Free(cs[0]); err != aio.ErrWatcherClosed {
			t.Errorf("Free after Close = %v, want ErrWatcherClosed", err)
		}
		if _, err := w.Detach(cs[0]); err != aio.ErrWatcherClosed {
			t.Errorf("Detach after Close = %v, want ErrWatcherClosed", err)
		}
		if res, err := w.WaitIO(); err != aio.ErrWatcherClosed || res != nil {
			t.Errorf("WaitIO() after Close = %v, %v, want nil, ErrWatcherClosed", res, err)
		}
		// The watcher's descriptors are closed: once the conns it never
		// delegated are closed too, every peer sees the end.
		for _, c := range cs {
			c.Close()
		}
		for i, p := range peers {
			p.SetReadDeadline(time.Now().Add(stTimeout))
			if _, err := io.Copy(io.Discard, p); err != nil && !stIsReset(err) {
				t.Errorf("round %d peer %d: read after Close = %v, want EOF", round, i, err)
			}
			p.Close()
		}
	}
	stCheckFDs(t, before)
}

// stIsReset reports a connection reset, what a peer reads when its socket
// was closed with unread data.
func stIsReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// Detach and Free race on one conn: exactly one takes it. If Detach wins,
// its conn works and Free is a no-op; if Free wins, the socket is closed
// and Detach hands back the closed conn it was given. A pending read
// completes with ErrConnClosed either way.
func TestStressDetachRacesFree(t *testing.T) { backendtest.Run(t, testStressDetachRacesFree) }

func testStressDetachRacesFree(t *testing.T) {
	const iters = 100
	w := stWatcher(t, aio.Config{})
	col := stCollect(t, w)
	stWarmNet(t)
	before := stFDs(t)

	wins := map[string]int{}
	for it := range iters {
		c, peer := stSocketPair(t)
		ctx := &stIter{it}
		if err := w.Read(ctx, c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
		if it%2 == 0 {
			stWaitFor(t, w, "read pending", func() bool { return w.Stats().Total().PendingReads == 1 })
		}
		var (
			dc         net.Conn
			derr, ferr error
			wg         sync.WaitGroup
		)
		start := make(chan struct{})
		wg.Go(func() { <-start; dc, derr = w.Detach(c) })
		wg.Go(func() {
			<-start
			for range it % 8 {
				runtime.Gosched()
			}
			ferr = w.Free(c)
		})
		close(start)
		wg.Wait()

		if ferr != nil {
			t.Fatalf("iteration %d: Free = %v, want nil", it, ferr)
		}
		r := col.next(t)
		if r.Context != ctx || r.Error != aio.ErrConnClosed {
			t.Errorf("iteration %d: pending read = %v, want ErrConnClosed", it, r.Error)
		}
		switch {
		case derr == nil && dc != c:
			wins["detach"]++
			stWrite(t, peer, []byte("x"))
			if got := stReadN(t, dc, 1); string(got) != "x" {
				t.Errorf("detached conn read %q, want %q", got, "x")
			}
			stWrite(t, dc, []byte("y"))
			if got := stReadN(t, peer, 1); string(got) != "y" {
				t.Errorf("peer read %q, want %q", got, "y")
			}
			dc.Close()
		case derr == nil || derr == aio.ErrConnClosed:
			wins["free"]++
			if derr == nil {
				if _, err := dc.Write([]byte("z")); !stIsClosed(err) {
					t.Errorf("Write on the conn Detach returned after Free = %v, want net.ErrClosed", err)
				}
			}
		default:
			t.Fatalf("iteration %d: Detach = %v, want nil or ErrConnClosed", it, derr)
		}
		// Either way the peer now sees the end of the stream.
		peer.SetReadDeadline(time.Now().Add(stTimeout))
		if n, err := peer.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("iteration %d: peer Read = %d, %v, want EOF", it, n, err)
		}
		peer.Close()
	}
	stCheckFDs(t, before)
	if s := w.Stats().Total(); s.Conns != 0 {
		t.Errorf("Stats().Total().Conns = %d, want 0", s.Conns)
	}
	t.Logf("winners: %v", wins)
}
