package aio_test

import (
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/poller"
)

// BenchmarkWriteZeroCopy compares copying writes with zero-copy ones
// (Config.ZeroCopyWrites) on io_uring: one dialed TCP connection over
// 127.0.0.1, a write of Size bytes at a time, the peer discarding. Names
// have the form Size/Mode for benchstat:
//
//	go test -run '^$' -bench WriteZeroCopy -count 5 ./aio/ | tee zc.txt
//
// On loopback the receiving socket copies the pages anyway (the kernel
// reports every zero-copy send as copied), so this measures the cost of
// the second completion and the page pinning, not a gain.
func BenchmarkWriteZeroCopy(b *testing.B) {
	if err := poller.Available(poller.IOURing); err != nil {
		b.Skipf("io_uring unavailable: %v", err)
	}
	for _, size := range []int{64 << 10, 1 << 20} {
		for _, mode := range []struct {
			name string
			min  int
		}{{"copy", 0}, {"zerocopy", 1}} {
			b.Run(strconv.Itoa(size>>10)+"K/"+mode.name, func(b *testing.B) {
				bxWrites(b, aio.Config{Backend: backend.IOURing, ZeroCopyWrites: mode.min, Loops: 1}, size)
			})
		}
	}
}

// bxWrites writes b.N buffers of size bytes, one at a time, to a peer
// that discards them.
func bxWrites(b *testing.B, cfg aio.Config, size int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		peer, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, peer)
		peer.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	w, err := aio.NewWatcherConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		w.Close()
		c.Close()
		<-drained
	}()
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := w.Write(nil, c, buf); err != nil {
			b.Fatal(err)
		}
		rs, err := w.WaitIO()
		if err != nil || len(rs) != 1 || rs[0].Error != nil || rs[0].Size != size {
			b.Fatalf("WaitIO = %v, %v; want the write's completion", rs, err)
		}
	}
	b.StopTimer()
}
