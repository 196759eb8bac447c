//go:build unix

package aio_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// onURing tells whether the running backendtest sub-test is io_uring's,
// where Config.ZeroCopyWrites takes effect.
func onURing() bool { return os.Getenv(poller.EnvBackend) == poller.IOURing.String() }

// TestZeroCopyWrites: writes at or above ZeroCopyWrites deliver every
// byte in order and complete with their full size; on the other
// backends the option changes nothing.
func TestZeroCopyWrites(t *testing.T) { backendtest.Run(t, testZeroCopyWrites) }

func testZeroCopyWrites(t *testing.T) {
	w := stWatcher(t, aio.Config{ZeroCopyWrites: 64 << 10})
	peer, c := stTCPPair(t) // zero-copy needs the dialed side (see poller)
	col := stCollect(t, w)
	for i, size := range []int{4 << 20, 64 << 10, 1000} {
		data := stPattern(uint64(i+1), size)
		read := make(chan []byte, 1)
		go func() { read <- stReadNoFail(peer, size) }()
		if err := w.Write(i, c, data); err != nil {
			t.Fatalf("Write(%d bytes) = %v, want nil", size, err)
		}
		if r := col.next(t); r.Error != nil || r.Size != size || r.Operation != aio.OpWrite {
			t.Fatalf("Write(%d bytes) completed with %v, want the whole write", size, r)
		}
		if got := <-read; !bytes.Equal(got, data) {
			t.Fatalf("peer read %d bytes that differ from the %d written", len(got), size)
		}
	}
}

// TestZeroCopyWriteDeadline: a zero-copy write to a peer that never reads
// still times out at its deadline, with its progress. The kernel holds
// the queued bytes' pages, so on io_uring the connection is reset to get
// the buffer back; the peer reads a prefix of the data, then the reset.
func TestZeroCopyWriteDeadline(t *testing.T) { backendtest.Run(t, testZeroCopyWriteDeadline) }

func testZeroCopyWriteDeadline(t *testing.T) {
	w, clock := stClockWatcher(t, aio.Config{ZeroCopyWrites: 1})
	peer, c := stTCPPair(t) // zero-copy needs the dialed side (see poller)
	col := stCollect(t, w)
	big := stPattern(1, 16<<20)
	if err := w.WriteTimeout(nil, c, big, clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("WriteTimeout = %v, want nil", err)
	}
	w.Poke()
	col.none(t)
	clock.Advance(2 * time.Second)
	w.Poke()
	r := col.next(t)
	stCheckDeadline(t, r, r.Size)
	if r.Size <= 0 || r.Size >= len(big) {
		t.Fatalf("Size = %d, want in (0, %d)", r.Size, len(big))
	}
	checkZeroCopyCut(t, peer, big, r.Size)
}

// TestZeroCopyFreeStalled: Free of a connection whose zero-copy write is
// stuck behind a peer that does not read completes the write, at once,
// with its progress, and the descriptor is closed.
func TestZeroCopyFreeStalled(t *testing.T) { backendtest.Run(t, testZeroCopyFreeStalled) }

func testZeroCopyFreeStalled(t *testing.T) {
	w := stWatcher(t, aio.Config{ZeroCopyWrites: 1})
	peer, c := stTCPPair(t) // zero-copy needs the dialed side (see poller)
	col := stCollect(t, w)
	big := stPattern(2, 16<<20)
	if err := w.Write(nil, c, big); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	w.Poke()
	col.none(t)
	if err := w.Free(c); err != nil {
		t.Fatalf("Free = %v, want nil", err)
	}
	r := col.next(t)
	if r.Error == nil || r.Size >= len(big) {
		t.Fatalf("write of a freed conn completed with %v, want an error and its progress", r)
	}
	checkZeroCopyCut(t, peer, big, r.Size)
}

// checkZeroCopyCut reads what peer gets of a write of data cut after n
// bytes. On io_uring (zero-copy) that is a prefix of data[:n], then a
// reset; elsewhere, data[:n] in full.
func checkZeroCopyCut(t *testing.T, peer net.Conn, data []byte, n int) {
	t.Helper()
	if !onURing() {
		if got := stReadN(t, peer, n); !bytes.Equal(got, data[:n]) {
			t.Fatalf("peer read %d bytes that differ from the first %d written", len(got), n)
		}
		return
	}
	peer.SetReadDeadline(time.Now().Add(stTimeout))
	var got []byte
	buf := make([]byte, 64<<10)
	var err error
	for err == nil {
		var k int
		k, err = peer.Read(buf)
		got = append(got, buf[:k]...)
	}
	if len(got) > n || !bytes.Equal(got, data[:len(got)]) {
		t.Fatalf("peer read %d bytes, want a prefix of the first %d written", len(got), n)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("peer read %d bytes, then %v; want a reset (zero-copy on io_uring)", len(got), err)
	}
}
