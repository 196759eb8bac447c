package websocket

// window keeps the last n bytes a connection received (decompressed), for
// a peer that uses context takeover: its next message may refer back to
// them, so the decompressor is primed with them (RFC 7692 §7.2.2).
//
// The bytes are kept in one contiguous slice, oldest first, because
// flate.Resetter takes its dictionary as one slice; adding to a full
// window slides it (a copy of at most n bytes, the same order of work as
// the priming copy the decompressor does anyway). The slice grows on
// demand up to n, so a connection that receives only small messages keeps
// only a small window.
type window struct {
	n   int
	buf []byte // len ≤ n; cap ≤ n
}

// newWindow returns an empty window of 1<<bits bytes, bits clamped to
// RFC 7692's 8..15.
func newWindow(bits uint8) *window {
	bits = clampBits(bits)
	return &window{n: 1 << bits}
}

// clampBits returns bits within minWindowBits..maxWindowBits.
func clampBits(bits uint8) uint8 {
	return min(max(bits, minWindowBits), maxWindowBits)
}

// add appends p to the window, dropping the oldest bytes past n.
func (w *window) add(p []byte) {
	if len(p) >= w.n {
		w.reserve(w.n)
		w.buf = append(w.buf[:0], p[len(p)-w.n:]...)
		return
	}
	if drop := len(w.buf) + len(p) - w.n; drop > 0 {
		w.buf = w.buf[:copy(w.buf, w.buf[drop:])]
	}
	w.reserve(len(w.buf) + len(p))
	w.buf = append(w.buf, p...)
}

// reserve makes w.buf's capacity at least need (≤ n), growing it at least
// twofold to keep adds amortised, never past n.
func (w *window) reserve(need int) {
	if need <= cap(w.buf) {
		return
	}
	size := min(max(need, 2*cap(w.buf), 512), w.n)
	buf := make([]byte, len(w.buf), size)
	copy(buf, w.buf)
	w.buf = buf
}

// bytes returns the window's content, oldest first, at most n bytes. It
// is valid until the next add.
func (w *window) bytes() []byte { return w.buf }
