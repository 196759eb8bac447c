package tlsrec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// records parses b into (type, body) pairs, which must be whole.
func records(t *testing.T, b []byte) (types []byte, bodies [][]byte) {
	t.Helper()
	for len(b) > 0 {
		if len(b) < HeaderLen || len(b) < recordLen(b) {
			t.Fatalf("a partial record at the end: % x", b)
		}
		n := recordLen(b)
		types, bodies = append(types, b[0]), append(bodies, b[HeaderLen:n])
		b = b[n:]
	}
	return types, bodies
}

func record(typ byte, body []byte) []byte {
	return append([]byte{typ, 3, 1, byte(len(body) >> 8), byte(len(body))}, body...)
}

// message returns a handshake message of type typ with a body of n
// bytes.
func message(typ byte, n int) []byte {
	return append([]byte{typ, byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte("h"), n)...)
}

// TestSplitter feeds a first flight of handshake records, the first
// message (a ClientHello) across two of them, then a ChangeCipherSpec and
// an encrypted record, in random pieces: the handshake bytes come out in
// records of at most 512 bytes, in order, everything from the
// ChangeCipherSpec on comes out as it went in, and the splitter is ready
// from the first message's last byte on, not before.
func TestSplitter(t *testing.T) {
	hello := message(1, 1474)
	kex := bytes.Repeat([]byte("k"), 37)
	tail := append(record(20, []byte{1}), record(23, bytes.Repeat([]byte("e"), 2000))...)
	in := append(append(append(record(22, hello[:1000]), record(22, hello[1000:])...), record(22, kex)...), tail...)
	helloEnd := 2*HeaderLen + len(hello) // in's bytes up to the ClientHello's last
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		var s splitter
		var out []byte
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(700))
			out = s.add(out, rest[:n])
			rest = rest[n:]
			if fed := len(in) - len(rest); s.ready() != (fed >= helloEnd) {
				t.Fatalf("seed %d: ready() = %v after %d bytes, want %v (the ClientHello ends at %d)",
					seed, s.ready(), fed, !s.ready(), helloEnd)
			}
		}
		i := bytes.Index(out, tail[:HeaderLen])
		if i < 0 || !bytes.Equal(out[i:], tail) {
			t.Fatalf("seed %d: what follows the handshake records changed", seed)
		}
		types, bodies := records(t, out[:i])
		var joined []byte
		for k, body := range bodies {
			if types[k] != 22 || len(body) > fragment || len(body) == 0 {
				t.Fatalf("seed %d: record %d of type %d and %d bytes", seed, k, types[k], len(body))
			}
			joined = append(joined, body...)
		}
		if !bytes.Equal(joined, append(append([]byte{}, hello...), kex...)) {
			t.Fatalf("seed %d: the handshake bytes changed", seed)
		}
	}
}

// TestSplitterPassesJudgedBytes: bytes crypto/tls must judge as they came
// (not a handshake record, an impossible length) pass through untouched.
func TestSplitterPassesJudgedBytes(t *testing.T) {
	for _, in := range [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		{22, 3, 1, 0xff, 0xff, 1, 2, 3},
		{22, 3, 1, 0, 0},
		{128, 43, 1, 0, 2},
		{22, 'H', 'T', 0, 4, 1, 0, 1, 0}, // a first record of no TLS version
	} {
		var s splitter
		if out := s.add(nil, in); !bytes.Equal(out, in) || !s.ready() {
			t.Errorf("% x came out as % x (ready %v)", in, out, s.ready())
		}
	}
}

// TestSplitterReady: what makes a handshake ready to run, and what does
// not (a whole record that holds part of its message).
func TestSplitterReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		ready bool
	}{
		{"nothing", nil, false},
		{"part of a header", []byte{22, 3, 1}, false},
		{"a whole record promising a longer message", record(22, []byte{1, 0, 1, 0}), false},
		{"half a message header", record(22, []byte{1, 0}), false},
		{"a message header across records", append(record(22, []byte{1, 0}), record(22, []byte{0, 0})...), true},
		{"an empty message", record(22, []byte{1, 0, 0, 0}), true},
		{"a whole message", record(22, message(1, 300)), true},
		{"a message of the largest length read", record(22, []byte{1, 1, 0, 0}), false},
		{"a message longer than read", record(22, []byte{1, 1, 0, 1}), true},
		{"an alert first", record(21, []byte{2, 40}), true},
	} {
		var s splitter
		s.add(nil, tc.in)
		if s.ready() != tc.ready {
			t.Errorf("%s: ready() after % x = %v, want %v", tc.name, tc.in, s.ready(), tc.ready)
		}
	}
}

// FuzzSplitter checks that the splitter's output and readiness do not
// depend on how its input is cut (as the socket might deliver it), that
// readiness never goes back, and that only handshake records are cut.
func FuzzSplitter(f *testing.F) {
	f.Add(record(22, message(1, 300)), []byte{3, 9})
	f.Add(append(record(22, []byte{1, 0, 1, 0}), record(22, bytes.Repeat([]byte("h"), 256))...), []byte{1})
	f.Add(append(record(22, []byte{1, 0}), record(20, []byte{1})...), []byte{0})
	f.Add([]byte{22, 3, 1, 0xff, 0xff}, []byte{})
	f.Add(record(22, []byte{1, 1, 0, 1}), []byte{2, 2})
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		var whole splitter
		want := whole.add(nil, in)
		var s splitter
		var out []byte
		ready := false
		for rest := in; len(rest) > 0; {
			n := len(rest)
			if len(cuts) > 0 {
				n, cuts = min(n, 1+int(cuts[0])), cuts[1:]
			}
			out = s.add(out, rest[:n])
			rest = rest[n:]
			if ready && !s.ready() {
				t.Fatalf("ready went back")
			}
			ready = s.ready()
		}
		if !bytes.Equal(out, want) || s.ready() != whole.ready() {
			t.Fatalf("cut: % x (ready %v), whole: % x (ready %v)", out, s.ready(), want, whole.ready())
		}
	})
}

// TestFragmentSizeBuffer checks what fragmentSize is for: a bytes.Buffer
// (a tls.Conn's handshake buffer) written a record body of n bytes in
// fragmentSize(n) pieces ends with no more capacity than when written
// pieces of fragment bytes, and for a 1,482-byte ClientHello (TLS 1.3
// with X25519MLKEM768) with 1,536 bytes, not 2,048. The fragments are at
// most fragment bytes, so the tls.Conn's input buffer does not grow.
func TestFragmentSizeBuffer(t *testing.T) {
	grown := func(n, k int) int {
		var b bytes.Buffer
		for left := n; left > 0; left -= min(k, left) {
			b.Write(make([]byte, min(k, left)))
		}
		return b.Cap()
	}
	for n := 1; n <= MaxCiphertext; n += 1 + n/64 {
		k := fragmentSize(n)
		if k > fragment || k < 1 {
			t.Fatalf("fragmentSize(%d) = %d, want 1 to %d", n, k, fragment)
		}
		if got, old := grown(n, k), grown(n, fragment); got > old {
			t.Errorf("a body of %d bytes in fragments of %d grows the buffer to %d, in fragments of %d to %d", n, k, got, fragment, old)
		}
	}
	if got := grown(1482, fragmentSize(1482)); got != 1536 {
		t.Errorf("a 1,482-byte ClientHello grows the handshake buffer to %d bytes, want 1536", got)
	}
}
