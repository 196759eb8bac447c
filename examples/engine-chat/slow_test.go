//go:build unix

package main

// A client that joins and never reads, while the others chat heavily. It
// must not hold them back, nor make the server's memory grow: it is cut,
// by -backlog or -write-timeout, and the others' lines keep flowing.

import (
	"bufio"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

const (
	// slowTalkers chat beside the slow client, slowLine bytes a line
	// (with the number and the nickname), slowRound lines each per round.
	slowTalkers, slowLine, slowRound = 3, 1 << 10, 50
	// slowMaxBytes bounds what the talkers send the slow client before
	// it must have been cut: far above what the kernel's socket buffers
	// hold (tcp_wmem and tcp_rmem grow to a few MiB) and the server's
	// limits.
	slowMaxBytes = 64 << 20
	// slowSlack is how far the output queued may pass the budget: what
	// the talkers' callbacks broadcast before the engine holds them back
	// (it does so after the callback), at most a read buffer of lines.
	slowSlack = 64 << 10
)

// TestSlowClient checks that a client that never reads is cut, with a
// word in the server's log, while the others chat: by -backlog when it
// falls that far behind first, by -write-timeout when its backlog stays
// unsent that long first (here because -budget, far below -backlog,
// holds the talkers back meanwhile). The talkers read every line of the
// others, in order, before and after; the output queued never passes the
// budget by more than slowSlack.
func TestSlowClient(t *testing.T) { backendtest.Run(t, testSlowClient) }

func testSlowClient(t *testing.T) {
	for _, tc := range []struct {
		name         string
		backlog      int
		writeTimeout time.Duration
		budget       int64
		cut          string // in the server's log
	}{
		{"backlog", 64 << 10, time.Minute, 1 << 20, "slow cut: more than 65536 bytes behind (-backlog)"},
		{"write-timeout", 16 << 20, shortTimeout, 256 << 10, "slow cut: output stalled for 1s (-write-timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			cfg := testConfig(t)
			logged := newTestLog(t)
			cfg.log = logged.logger()
			cfg.backlog, cfg.writeTimeout, cfg.budget = tc.backlog, tc.writeTimeout, tc.budget
			e, addr := startServer(t, cfg)
			room := newChatters(t, addr, slowTalkers)
			room.pad = " " + strings.Repeat("x", slowLine-len("c0: 00000 \n"))

			slow := dialSmall(t, addr)
			slow.expect(msgWelcome)
			slow.send("slow\n")
			slow.expect("* hello slow" + msgHelp)
			for _, c := range room.clients {
				c.expect("* slow joined\n")
			}

			var peak atomic.Int64
			stop := sample(t, func() { peak.Store(max(peak.Load(), e.Stats().Queued)) })
			rounds, sent := 0, 0
			for !room.allSaw("slow") {
				if sent > slowMaxBytes {
					t.Fatalf("slow not cut after the talkers sent it %d bytes", sent)
				}
				room.chat(t, slowRound)
				if t.Failed() {
					t.FailNow()
				}
				rounds++
				sent += slowTalkers * slowRound * slowLine
			}
			room.chat(t, slowRound) // and on, after
			stop()
			t.Logf("slow cut after %d rounds, %d KiB sent to it; output queued peaked at %d KiB (budget %d KiB)",
				rounds, sent>>10, peak.Load()>>10, tc.budget>>10)

			if line, ok := logged.find("slow cut"); !ok || line != tc.cut {
				t.Errorf("the server logged %q, want %q", line, tc.cut)
			}
			if p := peak.Load(); p > tc.budget+slowSlack {
				t.Errorf("output queued peaked at %d bytes, want at most the budget %d and %d", p, tc.budget, slowSlack)
			}
			// The slow client reads what the kernel still holds for it,
			// then a reset: the server cut it, dropping the output it had
			// queued, and says so (an end of file would pass the stream
			// cut short for a whole one).
			if n, err := io.Copy(io.Discard, slow.r); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("slow client: %v after %d bytes, want a connection reset", err, n)
			}
			room.clients[0].who("c0, c1, c2")
		})
	}
}

// allSaw reports whether every chatter read that nick left.
func (ch *chatters) allSaw(nick string) bool {
	for _, left := range ch.left {
		if !slices.Contains(left, nick) {
			return false
		}
	}
	return true
}

// dialSmall dials addr with a small receive buffer, so that a client that
// does not read fills the buffers between it and the server sooner.
func dialSmall(t *testing.T, addr net.Addr) *client {
	t.Helper()
	d := net.Dialer{Timeout: testTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		return err
	}}
	c, err := d.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

// sample calls f every millisecond until the function it returns is
// called, or the test ends, and once more then.
func sample(t *testing.T, f func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-exited; f() }) }
	t.Cleanup(stop)
	go func() {
		defer close(exited)
		for {
			f()
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return stop
}
