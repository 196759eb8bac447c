package httpd

import (
	"math/bits"
	"sync"
)

// Body buffers grow with what a body's client sent, from minBodyBuf, and
// go back to their pool whenever the handler has read them empty: a
// request whose client trickles its body, or pauses, holds none.
// Capacities are powers of two, pooled per size.
const (
	minBodyBuf    = 512
	bodyBufShift0 = 9  // log2(minBodyBuf)
	bodyBufShifts = 16 // pooled sizes: 512 B to 16 MiB
)

var bodyBufs [bodyBufShifts]sync.Pool

// bodyBufClass returns the index of the pooled size that holds n bytes,
// or -1 when n is larger than any.
func bodyBufClass(n int) int {
	if n <= minBodyBuf {
		return 0
	}
	i := bits.Len(uint(n-1)) - bodyBufShift0
	if i >= bodyBufShifts {
		return -1
	}
	return i
}

// getBodyBuf returns a buffer of length n, from the pool of its size.
func getBodyBuf(n int) []byte {
	i := bodyBufClass(n)
	if i < 0 {
		return make([]byte, n)
	}
	if v, ok := bodyBufs[i].Get().(*[]byte); ok {
		return (*v)[:n]
	}
	return make([]byte, n, minBodyBuf<<i)
}

// putBodyBuf gives p back to the pool of its size; p must not be used
// afterwards.
func putBodyBuf(p []byte) {
	c := cap(p)
	i := bodyBufClass(c)
	if i < 0 || minBodyBuf<<i != c {
		return // not one of ours
	}
	p = p[:c]
	bodyBufs[i].Put(&p)
}
