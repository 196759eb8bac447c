package websocket_test

// What a connection holds while messages stream to a StreamHandler: the
// heap (and stacks) in use while a 64 MiB message streams, plain and
// compressed, and per connection with a message under way.

import (
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// heapInuse returns HeapInuse after a collection.
func heapInuse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// TestStreamReadLarge streams a 64 MiB message, in four fragments with a
// ping between each two, to a StreamHandler under a 64 MiB ReadLimit: it
// arrives whole and in order, the pings are answered and seen between
// its pieces, and the heap in use while it streams stays far below its
// size (sampled every 4 MiB of it).
func TestStreamReadLarge(t *testing.T) { backendtest.Run(t, testStreamReadLarge) }

func testStreamReadLarge(t *testing.T) {
	const size, frags, chunk = 64 << 20, 4, 64 << 10
	plain := make([]byte, chunk)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	var want uint32
	for range size / chunk {
		want = crc32.Update(want, crc32.IEEETable, plain)
	}
	masked := rawFrame(0x2, true, plain)[len(frameHeader(0x2, chunk, true)):] // (the key's phase restarts at each chunk: chunk%4 == 0)

	h := newStreamer(false)
	var peak atomic.Int64
	var next int
	h.hook = func(c *websocket.Conn, m *streamed, _ []byte) {
		if m.n >= next {
			next += 4 << 20
			peak.Store(max(peak.Load(), heapInuse()))
		}
	}
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: h, ReadLimit: size}}, false)
	rc, _ := rawDial(t, url)
	recv(t, h.conns)
	rc.nc.SetDeadline(time.Now().Add(60 * time.Second)) // (-race on a busy machine)
	base := heapInuse()
	for f := range frags {
		op := byte(0x2)
		if f > 0 {
			op = 0
		}
		if f == frags-1 {
			op |= 0x80
		}
		rc.send(frameHeader(op, size/frags, true))
		for range size / frags / chunk {
			rc.send(masked)
		}
		if f < frags-1 {
			rc.frame(0x89, true, fmt.Appendf(nil, "ping %d", f))
		}
	}
	var m streamed
	select {
	case m = <-h.msgs:
	case <-time.After(60 * time.Second):
		t.Fatal("the message did not arrive within 60 s")
	}
	if m.n != size || m.crc != want || m.typ != websocket.BinaryMessage {
		t.Fatalf("message of type %v, %d bytes, CRC %#x; want binary, %d bytes, CRC %#x", m.typ, m.n, m.crc, size, want)
	}
	wantLog := []string{"start 2", "data", "ping ping 0", "data", "ping ping 1", "data", "ping ping 2", "data", "final"}
	if got := m.log; !equalStrings(got, wantLog) {
		t.Errorf("callbacks %q, want %q", got, wantLog)
	}
	for f := range frags - 1 {
		if fr, err := rc.read(); err != nil || fr.op() != 0xa || string(fr.payload) != fmt.Sprintf("ping %d", f) {
			t.Errorf("pong %d: %v %v", f, fr, err)
		}
	}
	grew := peak.Load() - base
	t.Logf("%d MiB in %d pieces (longest %d B); HeapInuse grew by at most %d KiB while it streamed", size>>20, m.pieces, m.maxPiece, grew>>10)
	if grew > 8<<20 {
		t.Errorf("HeapInuse grew by %d KiB while a %d MiB message streamed, want at most 8 MiB", grew>>10, size>>20)
	}
}

// TestStreamReadLargeCompressed streams a 64 MiB message that its
// compression makes a few hundred KiB on the wire (a sync-flushed
// fragment per MiB) under a 64 MiB ReadLimit: it arrives whole, in
// pieces of at most 16 KiB, and the heap in use while it streams stays
// far below its size.
func TestStreamReadLargeCompressed(t *testing.T) { backendtest.Run(t, testStreamReadLargeCompressed) }

func testStreamReadLargeCompressed(t *testing.T) {
	const size, chunk = 64 << 20, 1 << 20
	plain := make([]byte, chunk)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	var want uint32
	for range size / chunk {
		want = crc32.Update(want, crc32.IEEETable, plain)
	}
	h := newStreamer(false)
	var peak atomic.Int64
	var next int
	h.hook = func(c *websocket.Conn, m *streamed, _ []byte) {
		if m.n >= next {
			next += 4 << 20
			peak.Store(max(peak.Load(), heapInuse()))
		}
	}
	o := websocket.Options{Handler: h, ReadLimit: size, Compression: websocket.CompressionEnabled}
	url := serveWS(t, &websocket.Upgrader{Options: o}, false)
	rc, _ := rawDial(t, url, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover")
	recv(t, h.conns)
	rc.nc.SetDeadline(time.Now().Add(60 * time.Second))
	// The frames are made first, so that the heap's growth is the
	// server's alone, not the compressor's.
	frames, wire := compressedFrames(plain, size/chunk)
	base := heapInuse()
	for _, f := range frames {
		rc.send(f)
	}
	var m streamed
	select {
	case m = <-h.msgs:
	case <-time.After(60 * time.Second):
		t.Fatal("the message did not arrive within 60 s")
	}
	if m.n != size || m.crc != want {
		t.Fatalf("message of %d bytes, CRC %#x; want %d bytes, CRC %#x", m.n, m.crc, size, want)
	}
	if m.maxPiece > 16<<10 {
		t.Errorf("a piece of %d bytes, want at most 16 KiB", m.maxPiece)
	}
	grew := peak.Load() - base
	t.Logf("%d MiB from %d KiB on the wire, in %d pieces; HeapInuse grew by at most %d KiB while it streamed", size>>20, wire>>10, m.pieces, grew>>10)
	if grew > 8<<20 {
		t.Errorf("HeapInuse grew by %d KiB while a %d MiB message streamed, want at most 8 MiB", grew>>10, size>>20)
	}
}

// compressedFrames returns a compressed binary message of n times
// plain, as masked frames, one sync-flushed fragment per plain, and its
// payload's bytes.
func compressedFrames(plain []byte, n int) (frames [][]byte, wire int) {
	var out bytes.Buffer
	fw, _ := flate.NewWriter(&out, flate.BestSpeed)
	for i := range n {
		out.Reset()
		fw.Write(plain)
		fw.Flush()
		p, op := out.Bytes(), byte(0)
		if i == 0 {
			op = 0x42
		}
		if i == n-1 {
			p, op = bytes.TrimSuffix(p, []byte{0, 0, 0xff, 0xff}), 0x80
		}
		wire += len(p)
		frames = append(frames, rawFrame(op, true, p))
	}
	return frames, wire
}

// TestStreamReadHeld measures what a connection holds while a message
// streams to its StreamHandler, its first fragment delivered and the
// rest to come: for 100 connections at once, the growth of the heap and
// of the goroutine stacks in use, per connection. An uncompressed
// message holds next to nothing; a compressed one its decompressor, a
// piece and its coroutine, well under the 64 KiB of the fragment
// (1 MiB decompressed) that the connection took.
func TestStreamReadHeld(t *testing.T) { backendtest.Run(t, testStreamReadHeld) }

func testStreamReadHeld(t *testing.T) {
	const conns, first = 100, 64 << 10
	fragment := make([]byte, first)
	for i := range fragment {
		fragment[i] = byte(i * 7)
	}
	var zipped bytes.Buffer
	fw, _ := flate.NewWriter(&zipped, flate.BestSpeed)
	for range 16 {
		fw.Write(fragment)
	}
	fw.Flush()
	for _, tc := range []struct {
		name  string
		frame []byte
		n     int   // its bytes, delivered
		most  int64 // per connection
	}{
		{"plain", rawFrame(0x02, true, fragment), first, 1 << 10},
		{"compressed", rawFrame(0x42, true, zipped.Bytes()), 16 * first, 128 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newStreamer(false)
			reached := make(chan bool, conns)
			h.hook = func(c *websocket.Conn, m *streamed, chunk []byte) {
				if m.n == tc.n {
					reached <- true
				}
			}
			o := websocket.Options{Handler: h, Compression: websocket.CompressionEnabled}
			url := serveWS(t, &websocket.Upgrader{Options: o}, false)
			rcs := make([]*rawConn, conns)
			for i := range rcs {
				rcs[i], _ = rawDial(t, url, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover")
				recv(t, h.conns)
			}
			base := heapAndStacks()
			for _, rc := range rcs {
				rc.send(tc.frame)
			}
			for range conns {
				recv(t, reached)
			}
			per := (heapAndStacks() - base) / conns
			t.Logf("%d connections, each with a message under way (%d bytes of it delivered): %d B each", conns, tc.n, per)
			if per > tc.most {
				t.Errorf("a connection with a message under way holds %d B, want at most %d", per, tc.most)
			}
		})
	}
}

// heapAndStacks returns HeapInuse and StackInuse after two collections
// (the second empties the sync.Pools' victim caches).
func heapAndStacks() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}
