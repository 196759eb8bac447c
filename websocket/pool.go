package websocket

import "sync"

// buf is a pooled byte slice: messages being assembled, frames being
// built. Pooling the holder, not the slice, keeps Put allocation-free.
type buf struct{ b []byte }

var bufs = sync.Pool{New: func() any { return new(buf) }}

// maxPooled is the largest capacity kept in the pool: a 16 MiB message's
// buffer is dropped after it, not kept for the next small one.
const maxPooled = 256 << 10

// getBuf returns an empty buf with room for at least n bytes.
func getBuf(n int) *buf {
	b := bufs.Get().(*buf)
	if cap(b.b) < n {
		b.b = make([]byte, 0, n)
	}
	b.b = b.b[:0]
	return b
}

// putBuf returns b to the pool; b is not to be used after.
func putBuf(b *buf) {
	if b == nil {
		return
	}
	if cap(b.b) > maxPooled {
		b.b = nil
	}
	bufs.Put(b)
}
