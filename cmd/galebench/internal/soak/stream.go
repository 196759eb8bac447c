package soak

import (
	"bytes"
	"encoding/binary"
)

// stream is a connection's byte stream, named by its key: byte i of the
// stream is a pure function of the key and i, so the writer and the
// verifier share nothing but the key and their offsets, and a byte that
// comes back out of place, altered, duplicated or from another
// connection shows as a mismatch.
type stream uint64

// word returns the 8 bytes of the stream from offset 8×block: splitmix64's
// output function on the key and the block number, which spreads each
// input bit over the whole word (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014).
func (s stream) word(block uint64) uint64 {
	z := uint64(s) + (block+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// fill writes the stream's bytes from offset off into p.
func (s stream) fill(off int64, p []byte) {
	var w [8]byte
	for len(p) > 0 {
		block, skip := uint64(off)/8, int(off%8)
		if skip == 0 && len(p) >= 8 {
			binary.LittleEndian.PutUint64(p, s.word(block))
			p, off = p[8:], off+8
			continue
		}
		binary.LittleEndian.PutUint64(w[:], s.word(block))
		n := copy(p, w[skip:])
		p, off = p[n:], off+int64(n)
	}
}

// mismatches returns how many bytes of p differ from the stream's bytes
// from offset off. scratch must be at least as long as p.
func (s stream) mismatches(off int64, p, scratch []byte) int {
	want := scratch[:len(p)]
	s.fill(off, want)
	if bytes.Equal(p, want) {
		return 0
	}
	bad := 0
	for i := range p {
		if p[i] != want[i] {
			bad++
		}
	}
	return bad
}
