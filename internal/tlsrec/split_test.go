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

// TestSplitter feeds a first flight of handshake records, then a
// ChangeCipherSpec and an encrypted record, in random pieces: the
// handshake bytes come out in records of at most 512 bytes, in order, and
// everything from the ChangeCipherSpec on comes out as it went in.
func TestSplitter(t *testing.T) {
	hello := bytes.Repeat([]byte("h"), 1478)
	kex := bytes.Repeat([]byte("k"), 37)
	tail := append(record(20, []byte{1}), record(23, bytes.Repeat([]byte("e"), 2000))...)
	in := append(append(record(22, hello), record(22, kex)...), tail...)
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		var s splitter
		var out []byte
		ready := false
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(700))
			out = s.add(out, rest[:n])
			rest = rest[n:]
			if !ready && s.ready() && len(in)-len(rest) < HeaderLen+len(hello) {
				t.Fatalf("seed %d: ready before the first record was whole", seed)
			}
			ready = s.ready()
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
		if !bytes.Equal(joined, append(hello, kex...)) {
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
	} {
		var s splitter
		if out := s.add(nil, in); !bytes.Equal(out, in) || !s.ready() {
			t.Errorf("% x came out as % x (ready %v)", in, out, s.ready())
		}
	}
}
