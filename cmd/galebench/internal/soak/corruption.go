package soak

import "bytes"

// Corruption describes the first corrupted bytes of a connection: where,
// how many in that read, and where in the stream the bytes that came
// instead belong, which tells a reordering or a replay (a shift) from an
// overwrite (none found).
type Corruption struct {
	Key    uint64 `json:"key"`    // the connection's stream
	Offset int64  `json:"offset"` // of the first bad byte in the stream
	Bad    int    `json:"bad"`    // bad bytes in that read
	Read   int    `json:"read"`   // bytes in that read
	// Shift is where the bytes that came belong, relative to Offset, if
	// found within ±shiftSearch; Found says whether they were.
	Shift int64 `json:"shift"`
	Found bool  `json:"found"`
}

// Corruption records are kept for the first few connections per server.
const (
	maxCorruptions = 5
	shiftSearch    = 4 << 20
	probeLen       = 16
)

// describeCorruption locates the first bad byte of p, which came at
// offset off of stream s, and looks for its bytes elsewhere in s.
func describeCorruption(s stream, off int64, p, want []byte) Corruption {
	i := 0
	for i < len(p) && p[i] == want[i] {
		i++
	}
	c := Corruption{Key: uint64(s), Offset: off + int64(i), Read: len(p)}
	for j := i; j < len(p); j++ {
		if p[j] != want[j] {
			c.Bad++
		}
	}
	probe := p[i:min(len(p), i+probeLen)]
	c.Shift, c.Found = findShift(s, c.Offset, probe)
	return c
}

// findShift looks for probe in s at offsets near at, nearest first.
func findShift(s stream, at int64, probe []byte) (int64, bool) {
	if len(probe) < 8 {
		return 0, false // too short to tell
	}
	buf := make([]byte, len(probe))
	for d := int64(1); d <= shiftSearch; d++ {
		for _, shift := range []int64{-d, d} {
			if at+shift < 0 {
				continue
			}
			s.fill(at+shift, buf)
			if bytes.Equal(buf, probe) {
				return shift, true
			}
		}
	}
	return 0, false
}
