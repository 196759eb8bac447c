package websocket

import "encoding/binary"

// maskBytes XORs b with key, starting at key's byte pos (RFC 6455 §5.3),
// and returns the position after b. Masking is its own inverse.
func maskBytes(key [4]byte, pos int, b []byte) int {
	pos &= 3
	// Bytes up to a word boundary of the key, then eight at a time.
	for len(b) > 0 && pos != 0 {
		b[0] ^= key[pos]
		b = b[1:]
		pos = (pos + 1) & 3
	}
	k32 := binary.LittleEndian.Uint32(key[:])
	k64 := uint64(k32) | uint64(k32)<<32
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k64)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return (pos + len(b)) & 3
}
