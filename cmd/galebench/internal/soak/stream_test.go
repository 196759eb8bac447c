package soak

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The stream's bytes must depend only on the key and the offset, so that
// any split of the writes and reads sees the same bytes, and mismatches
// must count exactly the bytes that differ.

func TestStreamSplits(t *testing.T) {
	const n = 4096
	s := stream(0x1234)
	whole := make([]byte, n)
	s.fill(0, whole)
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		off := r.IntN(n)
		l := r.IntN(n - off + 1)
		part := make([]byte, l)
		s.fill(int64(off), part)
		if !bytes.Equal(part, whole[off:off+l]) {
			t.Fatalf("fill(%d, %d bytes) differs from the whole stream's bytes there", off, l)
		}
	}
	other := make([]byte, n)
	stream(0x1235).fill(0, other)
	if same := n - stream(0x1234).mismatches(0, other, make([]byte, n)); same > n/64 {
		t.Errorf("keys 0x1234 and 0x1235 share %d of %d bytes, want about 1/256", same, n)
	}
	counts := [256]int{}
	for _, b := range whole {
		counts[b]++
	}
	for b, c := range counts {
		if c > n/256*4 {
			t.Errorf("byte %#x occurs %d times in %d, want about %d", b, c, n, n/256)
		}
	}
}

func TestStreamMismatches(t *testing.T) {
	s := stream(7)
	p := make([]byte, 1000)
	scratch := make([]byte, 1000)
	s.fill(12345, p)
	if got := s.mismatches(12345, p, scratch); got != 0 {
		t.Fatalf("mismatches of the stream's own bytes = %d, want 0", got)
	}
	p[0] ^= 1
	p[500] ^= 0x80
	p[999]++
	if got := s.mismatches(12345, p, scratch); got != 3 {
		t.Errorf("mismatches with 3 bytes altered = %d, want 3", got)
	}
	s.fill(12345, p)
	if got := s.mismatches(12346, p, scratch); got < 990 {
		t.Errorf("mismatches of bytes shifted by one = %d, want nearly all 1000", got)
	}
}

// TestDescribeCorruption: bytes from elsewhere in the stream are located
// by their shift; bytes from another stream are not found.
func TestDescribeCorruption(t *testing.T) {
	s := stream(99)
	want := make([]byte, 4096)
	s.fill(100000, want)
	got := make([]byte, 4096)
	copy(got, want[:1000])
	s.fill(100000+1000-300, got[1000:]) // from 1,000 on: a replay of 300 bytes
	c := describeCorruption(s, 100000, got, want)
	if c.Offset != 101000 || !c.Found || c.Shift != -300 || c.Read != 4096 {
		t.Errorf("describeCorruption(replay) = %+v, want first bad byte at 101000, shift -300", c)
	}
	stream(7).fill(0, got)
	if c := describeCorruption(s, 100000, got, want); c.Found || c.Offset > 100010 || c.Bad < 4000 {
		t.Errorf("describeCorruption(another stream) = %+v, want not found, nearly all bad", c)
	}
}
