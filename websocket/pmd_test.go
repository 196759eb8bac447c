package websocket

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

func TestWindow(t *testing.T) {
	// seq returns n bytes counting up from b.
	seq := func(b byte, n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = b + byte(i)
		}
		return p
	}
	tests := []struct {
		name string
		bits uint8
		adds [][]byte
		want []byte
	}{
		{"empty", 8, nil, nil},
		{"one add", 8, [][]byte{[]byte("abc")}, []byte("abc")},
		{"empty adds", 8, [][]byte{nil, []byte("ab"), {}, []byte("c")}, []byte("abc")},
		{"exactly full", 8, [][]byte{seq(0, 200), seq(200, 56)}, seq(0, 256)},
		{"slides", 8, [][]byte{seq(0, 200), seq(200, 100)}, seq(44, 256)},
		{"one add larger", 8, [][]byte{[]byte("x"), seq(0, 300)}, seq(44, 256)},
		{"many small", 8, [][]byte{seq(0, 100), seq(100, 100), seq(200, 100), seq(44, 1)}, append(seq(45, 255), 44)},
		{"bits clamped up", 3, [][]byte{seq(0, 300)}, seq(44, 256)},
		{"bits 9", 9, [][]byte{seq(0, 255), seq(255, 255), seq(254, 255)}, bytes.Join([][]byte{seq(253, 2), seq(255, 255), seq(254, 255)}, nil)},
	}
	for _, tt := range tests {
		w := newWindow(tt.bits)
		for _, p := range tt.adds {
			w.add(p)
			if len(w.bytes()) > w.n || cap(w.buf) > w.n {
				t.Errorf("%s: after add(%d bytes): len %d, cap %d, want both ≤ %d", tt.name, len(p), len(w.bytes()), cap(w.buf), w.n)
			}
		}
		if got := w.bytes(); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: bytes() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWindowSize(t *testing.T) {
	tests := []struct {
		bits uint8
		want int
	}{{0, 256}, {8, 256}, {9, 512}, {12, 4096}, {15, 32768}, {16, 32768}, {255, 32768}}
	for _, tt := range tests {
		if got := newWindow(tt.bits).n; got != tt.want {
			t.Errorf("newWindow(%d).n = %d, want %d", tt.bits, got, tt.want)
		}
	}
}

// Test messages, made once.
var (
	msgRandom1M = func() []byte {
		p := make([]byte, 1<<20)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < len(p); i += 8 {
			binary.LittleEndian.PutUint64(p[i:], rng.Uint64())
		}
		return p
	}()
	msgRepeat1M = bytes.Repeat([]byte(`{"op":"update","id":12345,"price":"101.25","qty":7},`), (1<<20)/52+1)[:1<<20]
	msgText     = []byte(strings.Repeat("The quick brown fox jumps over the lazy dog, then rests a while. ", 200))
)

// zeroState is a connection without context takeover.
var zeroState = pmdState{on: true, outBits: maxWindowBits}

func TestCompressRoundTrip(t *testing.T) {
	msgs := []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"nil", nil},
		{"one byte", []byte{'x'}},
		{"hello", []byte("Hello")},
		{"text", msgText},
		{"random 1MiB", msgRandom1M},
		{"repetitive 1MiB", msgRepeat1M},
	}
	levels := []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression, 42}
	for _, m := range msgs {
		for _, level := range levels {
			if len(m.data) == 1<<20 && level == flate.BestCompression {
				continue // slow under -race, and no different from the text
			}
			for _, bits := range []uint8{9, 15} {
				st := zeroState
				wire := compress([]byte("hdr"), m.data, level, bits)
				if !bytes.HasPrefix(wire, []byte("hdr")) {
					t.Fatalf("compress(%s, %d, %d) lost dst's bytes", m.name, level, bits)
				}
				got, err := st.inflate([]byte("x"), wire[3:], len(m.data))
				if err != nil || !bytes.Equal(got[1:], m.data) || got[0] != 'x' {
					t.Errorf("inflate(compress(%s, level %d, bits %d)) = %d bytes, %v, want the %d bytes", m.name, level, bits, len(got)-1, err, len(m.data))
				}
			}
		}
	}
}

// TestCompressSmallWindow checks that compress under a window limit uses
// only what never refers back: flate.HuffmanOnly (or NoCompression when
// asked for).
func TestCompressSmallWindow(t *testing.T) {
	for _, bits := range []uint8{8, 9, 14} {
		for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.BestCompression, flate.HuffmanOnly} {
			got := compress(nil, msgText, level, bits)
			want := compress(nil, msgText, flate.HuffmanOnly, 15)
			if !bytes.Equal(got, want) {
				t.Errorf("compress(text, %d, %d) = %d bytes, want HuffmanOnly's %d", level, bits, len(got), len(want))
			}
		}
		got := compress(nil, msgText, flate.NoCompression, bits)
		if want := compress(nil, msgText, flate.NoCompression, 15); !bytes.Equal(got, want) {
			t.Errorf("compress(text, NoCompression, %d) = %d bytes, want NoCompression's %d", bits, len(got), len(want))
		}
	}
	if a, b := compress(nil, msgText, flate.BestSpeed, 15), compress(nil, msgText, flate.HuffmanOnly, 15); len(a) >= len(b) {
		t.Errorf("compress(text, BestSpeed, 15) = %d bytes, want fewer than HuffmanOnly's %d (did the window limit leak?)", len(a), len(b))
	}
}

// TestCompressFresh checks that no message refers back to an earlier
// one: the pooled compressors are reset, so the same message compresses
// the same every time, and each decodes on its own.
func TestCompressFresh(t *testing.T) {
	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
		first := compress(nil, msgText, level, 15)
		for i := range 3 {
			if got := compress(nil, msgText, level, 15); !bytes.Equal(got, first) {
				t.Errorf("compress(text, %d) #%d = %x..., want %x... as the first", level, i+2, got[:8], first[:8])
			}
		}
	}
}

// TestCompressZlib has Python's zlib (an independent inflater) decode our
// output with a window of exactly 2^bits, as the peer that limited our
// window may.
func TestCompressZlib(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	type tcase struct {
		bits  uint8
		level int
		data  []byte
	}
	cases := []tcase{
		{8, flate.BestSpeed, msgText},
		{9, flate.BestSpeed, msgText},
		{9, flate.BestCompression, msgRepeat1M[:100000]},
		{9, flate.NoCompression, msgText},
		{10, flate.DefaultCompression, []byte("Hello")},
		{15, flate.BestSpeed, msgRepeat1M[:100000]},
		{15, flate.BestCompression, msgText},
		{15, flate.BestSpeed, nil},
	}
	dir := backendtest.TempDir(t)
	for i, c := range cases {
		name := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(name, compress(nil, c.data, c.level, c.bits), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const script = `
import sys, zlib
for arg in sys.argv[1:]:
    name, bits = arg.split(":")
    d = zlib.decompressobj(-int(bits))
    out = d.decompress(open(name, "rb").read() + b"\x00\x00\xff\xff")
    open(name + ".out", "wb").write(out)
`
	args := []string{"-c", script}
	for i, c := range cases {
		args = append(args, fmt.Sprintf("%s:%d", filepath.Join(dir, strconv.Itoa(i)), c.bits))
	}
	if out, err := exec.Command(python, args...).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	for i, c := range cases {
		got, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".out"))
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("zlib(wbits=-%d).decompress(compress(%d bytes, level %d, bits %d)) = %d bytes, %v, want the %d bytes", c.bits, len(c.data), c.level, c.bits, len(got), err, len(c.data))
		}
	}
}

// TestInflateRFCExamples decodes RFC 7692 §7.2.3's examples.
func TestInflateRFCExamples(t *testing.T) {
	tests := []struct {
		name string
		wire []byte
		want string
	}{
		{"7.2.3.1 one message", []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, "Hello"},
		{"7.2.3.3 stored block", []byte{0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00}, "Hello"},
		{"7.2.3.4 BFINAL block", []byte{0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00}, "Hello"},
		{"7.2.3.5 two blocks", []byte{0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00}, "Hello"},
		{"7.2.3.6 empty", []byte{0x00}, ""},
		{"empty payload", nil, ""},
	}
	for _, tt := range tests {
		st := zeroState
		got, err := st.inflate(nil, tt.wire, 100)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: inflate(%x) = %q, %v, want %q", tt.name, tt.wire, got, err, tt.want)
		}
	}
}

// TestInflateTakeover decodes the messages of a peer that keeps its
// compressor's state across them (context takeover): a stdlib
// flate.Writer flushed after each message, and RFC 7692 §7.2.3.2's
// example.
func TestInflateTakeover(t *testing.T) {
	st := pmdState{on: true, outBits: 15, inTakeover: true, win: newWindow(15)}
	hello := []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}
	again := []byte{0xf2, 0x00, 0x11, 0x00, 0x00} // "Hello", referring back
	for i, wire := range [][]byte{hello, again, again} {
		got, err := st.inflate(nil, wire, 100)
		if err != nil || string(got) != "Hello" {
			t.Errorf("RFC 7692 §7.2.3.2: inflate #%d(%x) = %q, %v, want \"Hello\"", i+1, wire, got, err)
		}
	}

	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		var out appendWriter
		peer, _ := flate.NewWriter(&out, level)
		st := pmdState{on: true, outBits: 15, inTakeover: true, win: newWindow(15)}
		rng := rand.New(rand.NewPCG(3, 4))
		var dst []byte
		for i := range 300 {
			msg := takeoverMessage(rng, i)
			out.b = out.b[:0]
			peer.Write(msg)
			peer.Flush()
			wire := trimSyncTail(out.b)
			var err error
			dst, err = st.inflate(dst[:0], wire, 1<<20)
			if err != nil || !bytes.Equal(dst, msg) {
				t.Fatalf("level %d: message %d (%d bytes): inflate = %d bytes, %v, want the message", level, i, len(msg), len(dst), err)
			}
		}
	}
}

// takeoverMessage returns the i-th of a stream of messages that refer
// back to each other: small repetitive ones, empty ones, and some past
// the 32 KiB window.
func takeoverMessage(rng *rand.Rand, i int) []byte {
	switch {
	case i%50 == 49:
		return bytes.Repeat(msgText[:rng.IntN(len(msgText))], 1+rng.IntN(20))
	case i%17 == 0:
		return nil
	case i%23 == 0:
		return msgRandom1M[rng.IntN(1000) : 40000+rng.IntN(1000)]
	}
	return fmt.Appendf(nil, `{"seq":%d,"op":"update","price":"%d.%02d","qty":%d}`, i, rng.IntN(200), rng.IntN(100), rng.IntN(10))
}

// TestInflateTakeoverZlib decodes a zlib peer that keeps its context under
// a small window (9 and 10 bits): our window must keep enough.
func TestInflateTakeoverZlib(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	const script = `
import sys, zlib
bits, n = int(sys.argv[1]), int(sys.argv[2])
c = zlib.compressobj(9, zlib.DEFLATED, -bits, 9)
out = sys.stdout.buffer
for i in range(n):
    msg = b'{"seq":%d,"op":"update","name":"item-%d","price":"%d.25"}' % (i, i % 7, i % 13) * (1 + i % 5)
    data = c.compress(msg) + c.flush(zlib.Z_SYNC_FLUSH)
    assert data.endswith(b"\x00\x00\xff\xff")
    data = data[:-4]
    out.write(len(msg).to_bytes(4, "big") + msg + len(data).to_bytes(4, "big") + data)
`
	for _, bits := range []uint8{9, 10, 15} {
		out, err := exec.Command(python, "-c", script, strconv.Itoa(int(bits)), "200").Output()
		if err != nil {
			t.Fatalf("python3: %v", err)
		}
		st := pmdState{on: true, outBits: 15, inTakeover: true, win: newWindow(bits)}
		for i := 0; len(out) > 0; i++ {
			var msg, wire []byte
			msg, out = splitRecord(out)
			wire, out = splitRecord(out)
			got, err := st.inflate(nil, wire, 1<<20)
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("bits %d: message %d: inflate = %q, %v, want %q", bits, i, got, err, msg)
			}
		}
	}
}

// splitRecord splits a 4-byte length-prefixed record off b.
func splitRecord(b []byte) (record, rest []byte) {
	n := int(binary.BigEndian.Uint32(b))
	return b[4 : 4+n], b[4+n:]
}

func TestInflateLimit(t *testing.T) {
	msg := msgText[:1000]
	wire := compress(nil, msg, flate.BestSpeed, 15)
	tests := []struct {
		limit int
		err   error
	}{{1000, nil}, {1 << 30, nil}, {math.MaxInt, nil}, {999, ErrReadLimit}, {1, ErrReadLimit}, {0, ErrReadLimit}, {-5, ErrReadLimit}}
	for _, tt := range tests {
		st := zeroState
		got, err := st.inflate([]byte("x"), wire, tt.limit)
		switch {
		case err != tt.err:
			t.Errorf("inflate(1000 bytes, limit %d) = %v, want %v", tt.limit, err, tt.err)
		case err == nil && !bytes.Equal(got[1:], msg):
			t.Errorf("inflate(1000 bytes, limit %d) = %d bytes, want the message", tt.limit, len(got)-1)
		case err != nil && string(got) != "x":
			t.Errorf("inflate(1000 bytes, limit %d) = %q, %v, want dst as given", tt.limit, got, err)
		}
	}
	st := zeroState
	if got, err := st.inflate(nil, compress(nil, nil, flate.BestSpeed, 15), 0); err != nil || len(got) != 0 {
		t.Errorf("inflate(empty, limit 0) = %q, %v, want \"\", nil", got, err)
	}
}

// bomb100M is 100 MiB of zeros, compressed (about 100 KB).
var bomb100M = sync.OnceValue(func() []byte {
	s := newDeflateStream(flate.BestSpeed, 15)
	zeros := make([]byte, 1<<20)
	var wire []byte
	for range 100 {
		wire = s.write(wire, zeros)
	}
	return s.finish(wire)
})

// TestInflateBomb checks that a decompression bomb fails with
// ErrReadLimit having cost no more than an honest message of the limit's
// size: its buffer never grows past the limit (and what growing it to
// there allocated is the same as for the honest message).
func TestInflateBomb(t *testing.T) {
	const limit = 1 << 20
	wire := bomb100M()
	honest := compress(nil, make([]byte, limit), flate.BestSpeed, 15)
	st := zeroState
	st.inflate(nil, honest, limit) // a pooled decompressor
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	honestAlloc := allocated(func() { st.inflate(nil, honest, limit) })
	var got []byte
	var err error
	bombAlloc := allocated(func() { got, err = st.inflate(nil, wire, limit) })
	if err != ErrReadLimit || len(got) != 0 || cap(got) > limit+1 {
		t.Errorf("inflate(100 MiB bomb, limit %d) = %d bytes (capacity %d), %v, want 0 bytes (capacity ≤ %d), ErrReadLimit", limit, len(got), cap(got), err, limit+1)
	}
	if bombAlloc > honestAlloc+64<<10 || bombAlloc > 3*limit {
		t.Errorf("inflate(100 MiB bomb, limit %d) allocated %d bytes, want at most %d (an honest %d-byte message's + 64 KiB) and %d", limit, bombAlloc, honestAlloc+64<<10, limit, 3*limit)
	}
	takeover := pmdState{on: true, outBits: 15, inTakeover: true, win: newWindow(15)}
	if _, err := takeover.inflate(nil, wire, limit); err != ErrReadLimit || len(takeover.win.bytes()) != 0 {
		t.Errorf("takeover inflate(bomb) = %v with %d bytes in the window, want ErrReadLimit with none", err, len(takeover.win.bytes()))
	}
	buf := make([]byte, 0, 2*limit)
	got, err = st.inflate(buf, wire, limit)
	if err != ErrReadLimit || len(got) != 0 || &got[:1][0] != &buf[:1][0] {
		t.Errorf("inflate(bomb) into a large enough buffer = %d bytes, %v, want ErrReadLimit in the same buffer", len(got), err)
	}
}

func TestInflateCorrupt(t *testing.T) {
	valid := compress(nil, msgRandom1M[:5000], flate.BestSpeed, 15)
	tests := []struct {
		name string
		wire []byte
	}{
		{"reserved block type", []byte{0x06}},
		{"all ones", bytes.Repeat([]byte{0xff}, 20)},
		{"stored length mismatch", []byte{0x00, 0x05, 0x00, 0xfb, 0xff, 'H', 'e', 'l', 'l', 'o'}},
		{"truncated stored block", []byte{0x00, 0x05, 0x00, 0xfa, 0xff, 'H', 'e'}},
		{"truncated", valid[:len(valid)/2]},
		{"distance too far back", []byte{0x03, 0x02, 0x00}}, // a match at distance 1 first
		{"too many length symbols", []byte{0x04, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		st := zeroState
		got, err := st.inflate(nil, tt.wire, 1<<20)
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != StatusInvalidFramePayload || len(got) != 0 {
			t.Errorf("%s: inflate(%x...) = %d bytes, %v, want a ProtocolError with code 1007", tt.name, tt.wire[:min(len(tt.wire), 8)], len(got), err)
		}
	}
	// The pool's decompressors still work after failures.
	st := zeroState
	if got, err := st.inflate(nil, compress(nil, msgText, flate.BestSpeed, 15), 1<<20); err != nil || !bytes.Equal(got, msgText) {
		t.Errorf("inflate after corrupt input = %d bytes, %v, want the text", len(got), err)
	}
}

// TestStream checks deflateStream: a message written in pieces (empty,
// tiny, large) decodes to the pieces joined, and a stream of one piece
// equals compress.
func TestStream(t *testing.T) {
	tests := []struct {
		name   string
		pieces []int // piece sizes, cut from msgRepeat1M
	}{
		{"no writes", nil},
		{"one empty write", []int{0}},
		{"one byte", []int{1}},
		{"tiny pieces", []int{0, 1, 3, 0, 1, 1, 3, 0}},
		{"mixed", []int{3, 1000, 0, 70000, 1, 5, 40000, 3}},
		{"large", []int{300000, 300000, 1}},
		{"ends with empty", []int{10, 0, 0}},
	}
	for _, tt := range tests {
		for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
			for _, bits := range []uint8{9, 15} {
				s := newDeflateStream(level, bits)
				var wire, want []byte
				off := 0
				for _, n := range tt.pieces {
					p := msgRepeat1M[off : off+n]
					off += n
					want = append(want, p...)
					before := len(wire)
					wire = s.write(wire, p)
					if n > 0 && len(wire) == before {
						t.Errorf("%s: write(%d bytes) added nothing: the peer could not decode it yet", tt.name, n)
					}
				}
				wire = s.finish(wire)
				st := zeroState
				got, err := st.inflate(nil, wire, 1<<20)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s (level %d, bits %d): inflate(stream) = %d bytes, %v, want the %d bytes", tt.name, level, bits, len(got), err, len(want))
				}
			}
		}
	}
	for _, n := range []int{0, 1, 1000} {
		s := newDeflateStream(flate.BestSpeed, 15)
		got := s.finish(s.write(nil, msgText[:n]))
		if want := compress(nil, msgText[:n], flate.BestSpeed, 15); !bytes.Equal(got, want) {
			t.Errorf("stream of one %d-byte write = %x, want compress's %x", n, got, want)
		}
	}
}

// TestStreamRelease checks that an abandoned stream's compressor goes back
// reset: the next message does not refer to the abandoned one.
func TestStreamRelease(t *testing.T) {
	want := compress(nil, msgText, flate.BestSpeed, 15)
	s := newDeflateStream(flate.BestSpeed, 15)
	s.write(nil, msgText)
	s.release()
	s.release() // twice is harmless
	if got := compress(nil, msgText, flate.BestSpeed, 15); !bytes.Equal(got, want) {
		t.Errorf("compress after release = %d bytes, want %d as before", len(got), len(want))
	}
}

// BenchmarkPmdCompress1K measures compress of a 1 KiB text message: the
// pooled compressor's Reset dominates at levels 2-9 (stdlib flate clears
// its 640 KiB hash tables), not at BestSpeed or HuffmanOnly.
func BenchmarkPmdCompress1K(b *testing.B) {
	msg := msgText[:1024]
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.DefaultCompression} {
		b.Run(fmt.Sprintf("level%d", level), func(b *testing.B) {
			dst := make([]byte, 0, 4096)
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				compress(dst[:0], msg, level, 15)
			}
		})
	}
}

// BenchmarkPmdInflate1K measures inflate of a 1 KiB text message, with and
// without a full 32 KiB takeover window to prime the decompressor with.
func BenchmarkPmdInflate1K(b *testing.B) {
	msg := msgText[:1024]
	wire := compress(nil, msg, flate.BestSpeed, 15)
	for _, takeover := range []bool{false, true} {
		b.Run(fmt.Sprintf("takeover=%v", takeover), func(b *testing.B) {
			st := zeroState
			if takeover {
				st.inTakeover, st.win = true, newWindow(15)
				st.win.add(msgRandom1M[:1<<15])
			}
			dst := make([]byte, 0, 4096)
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				st.inflate(dst[:0], wire, 1<<20)
			}
		})
	}
}
