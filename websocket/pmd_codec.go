package websocket

import (
	"compress/flate"
	"errors"
	"io"
	"math"
	"sync"
)

// A stdlib flate.Writer is about 1 MB and a flate reader about 44 KiB, so
// connections never own one: each message borrows one from these pools
// and gives it back at its end. The outgoing side therefore never refers
// back to earlier messages (valid whatever context takeover was agreed);
// the incoming side primes the borrowed reader with the connection's
// window when the peer takes its context over.

// appendWriter is an io.Writer that appends to b: a flate.Writer writes
// the compressed bytes straight into the caller's dst.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// compressor is a pooled flate.Writer and the appendWriter it writes to.
type compressor struct {
	fw    *flate.Writer
	out   appendWriter
	dirty bool // fw was used since its last Reset
}

// compressorPools holds one pool per flate level, flate.HuffmanOnly (-2)
// to flate.BestCompression (9), indexed by level+2.
var compressorPools [flate.BestCompression - flate.HuffmanOnly + 1]sync.Pool

// validLevel returns level if flate accepts it, else flate.BestSpeed
// (Options' default): a bad Options.CompressionLevel must not fail
// every message.
func validLevel(level int) int {
	if level < flate.HuffmanOnly || level > flate.BestCompression {
		return flate.BestSpeed
	}
	return level
}

// wireLevel returns the level to compress at under a window limit of
// 2^bits: stdlib flate cannot shrink its 32 KiB window, so below 15 bits
// only the levels that never refer back are valid: HuffmanOnly, or
// NoCompression if that was asked for.
func wireLevel(level int, bits uint8) int {
	level = validLevel(level)
	if bits < maxWindowBits && level != flate.NoCompression {
		return flate.HuffmanOnly
	}
	return level
}

// getCompressor returns a compressor at level (a valid one), fresh: it
// holds no earlier message's context.
func getCompressor(level int) *compressor {
	pool := &compressorPools[level-flate.HuffmanOnly]
	if c, _ := pool.Get().(*compressor); c != nil {
		if c.dirty {
			c.fw.Reset(&c.out)
			c.dirty = false
		}
		return c
	}
	c := new(compressor)
	// The level is valid, so NewWriter cannot fail.
	c.fw, _ = flate.NewWriter(&c.out, level)
	return c
}

// putCompressor gives c back to level's pool, holding no caller's buffer.
func putCompressor(c *compressor, level int) {
	c.out.b = nil
	c.dirty = true
	compressorPools[level-flate.HuffmanOnly].Put(c)
}

// compress appends to dst the compressed form of a whole message src for
// the wire (RFC 7692 §7.2.1: a sync flush, with its trailing 0x00 0x00
// 0xff 0xff removed), at flate level, never referring back more than
// 2^bits bytes (for bits < 15 it uses flate.HuffmanOnly, which never
// refers back: stdlib flate cannot shrink its window) and never referring
// to earlier messages (a fresh compressor per message: valid whatever
// context takeover was agreed).
func compress(dst, src []byte, level int, bits uint8) []byte {
	level = wireLevel(level, bits)
	c := getCompressor(level)
	c.out.b = dst
	// appendWriter never fails, so neither do Write and Flush.
	c.fw.Write(src)
	c.fw.Flush()
	dst = trimSyncTail(c.out.b)
	putCompressor(c, level)
	return dst
}

// trimSyncTail removes the sync flush's 0x00 0x00 0xff 0xff from the end
// of b, which a Flush always leaves there.
func trimSyncTail(b []byte) []byte {
	if n := len(b) - len(syncTail); n >= 0 && [4]byte(b[n:]) == syncTail {
		return b[:n]
	}
	return b
}

// deflateStream compresses one message given in pieces (a streamed
// message: each piece becomes a fragment frame).
//
// Each write ends with a sync flush, so the peer can decode each fragment
// as it comes; the message's last flush marker must not go on the wire
// (RFC 7692 §7.2.1), and write cannot know which flush is the last, so it
// holds back the last 4 bytes of its output (always a flush's 0x00 0x00
// 0xff 0xff) until the next write, and finish drops them.
type deflateStream struct {
	c     *compressor
	level int
	held  bool // write returned output whose flush marker it held back
}

// newDeflateStream returns a stream compressing at level under a window
// limit of 2^bits (see compress).
func newDeflateStream(level int, bits uint8) *deflateStream {
	level = wireLevel(level, bits)
	return &deflateStream{c: getCompressor(level), level: level}
}

// write appends to dst the compressed bytes for p, flushed (sync flush)
// so the peer can decode what was sent so far. An empty p adds nothing.
func (s *deflateStream) write(dst, p []byte) []byte {
	if len(p) == 0 {
		return dst
	}
	if s.held {
		dst = append(dst, syncTail[:]...)
	}
	s.c.out.b = dst
	s.c.fw.Write(p)
	s.c.fw.Flush()
	dst = s.c.out.b
	s.c.out.b = nil
	s.held = true
	return dst[:len(dst)-len(syncTail)]
}

// finish appends the message's final bytes (the held-back flush marker is
// dropped; a message with no bytes at all becomes the empty block 0x00,
// RFC 7692 §7.2.3.6), then gives the compressor back to its pool: s is
// unusable after.
func (s *deflateStream) finish(dst []byte) []byte {
	if !s.held {
		dst = append(dst, 0x00)
	}
	s.release()
	return dst
}

// release gives the compressor back to its pool without finishing (an
// abandoned stream). It may be called more than once.
func (s *deflateStream) release() {
	if s.c != nil {
		putCompressor(s.c, s.level)
		s.c = nil
	}
}

// inflateTail is appended to every message's payload before it is
// decompressed: the sync marker the sender removed (RFC 7692 §7.2.2),
// then an empty final stored block, so that the flate reader ends with
// io.EOF at the message's end instead of io.ErrUnexpectedEOF.
var inflateTail = [...]byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// msgReader reads a message's payload then inflateTail. It is an
// io.ByteReader so that flate reads no more than it needs and does not
// wrap it in a bufio.Reader (an allocation per message).
type msgReader struct {
	src  []byte
	tail int // bytes of inflateTail already read
}

func (r *msgReader) Read(p []byte) (int, error) {
	if len(r.src) > 0 {
		n := copy(p, r.src)
		r.src = r.src[n:]
		return n, nil
	}
	if r.tail == len(inflateTail) {
		return 0, io.EOF
	}
	n := copy(p, inflateTail[r.tail:])
	r.tail += n
	return n, nil
}

func (r *msgReader) ReadByte() (byte, error) {
	if len(r.src) > 0 {
		b := r.src[0]
		r.src = r.src[1:]
		return b, nil
	}
	if r.tail == len(inflateTail) {
		return 0, io.EOF
	}
	b := inflateTail[r.tail]
	r.tail++
	return b, nil
}

// decompressor is a pooled flate reader and the msgReader it reads.
type decompressor struct {
	fr    io.ReadCloser // also a flate.Resetter
	in    msgReader
	probe [1]byte // readLimited's scratch
}

var decompressorPool sync.Pool

// getDecompressor returns a decompressor reading src, primed with dict
// (nil for none).
func getDecompressor(src, dict []byte) *decompressor {
	d, _ := decompressorPool.Get().(*decompressor)
	if d == nil {
		d = new(decompressor)
		d.fr = flate.NewReader(&d.in)
	}
	d.in = msgReader{src: src}
	// flate's Resetter never fails.
	d.fr.(flate.Resetter).Reset(&d.in, dict)
	return d
}

// putDecompressor gives d back to the pool, holding no caller's buffer.
func putDecompressor(d *decompressor) {
	d.in = msgReader{}
	decompressorPool.Put(d)
}

// inflate appends to dst the decompressed message whose wire payload (all
// fragments joined) is src. The message (the bytes appended) may be at
// most limit bytes: past that it fails with ErrReadLimit, having
// allocated no more than limit plus a small constant (a decompression
// bomb must cost no more than an honest message). Corrupt data fails
// with a *ProtocolError (StatusInvalidFramePayload). With st.inTakeover
// the decompressor is primed with st.win's bytes, and st.win then gets
// the message. On failure dst is returned cut back to its length on
// entry (its capacity may have grown).
func (st *pmdState) inflate(dst, src []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		// Not even a block header: no DEFLATE data, so an empty message
		// (some peers send an empty message so, rather than as 0x00).
		return dst, nil
	}
	var dict []byte
	if st.inTakeover && st.win != nil {
		dict = st.win.bytes()
	}
	d := getDecompressor(src, dict)
	start := len(dst)
	dst, err := readLimited(d.fr, dst, limit, &d.probe)
	putDecompressor(d)
	if err != nil {
		return dst[:start], err
	}
	if st.inTakeover && st.win != nil {
		st.win.add(dst[start:])
	}
	return dst, nil
}

// readLimited appends to dst what r yields until io.EOF, failing with
// ErrReadLimit if that passes limit bytes. It reads into dst's spare
// capacity, growing it as needed but never past limit bytes from its
// length on entry; whether more follows the limit's last byte is probed
// with the one byte of scratch.
func readLimited(r io.Reader, dst []byte, limit int, scratch *[1]byte) ([]byte, error) {
	limit = min(max(limit, 0), math.MaxInt-len(dst))
	end := len(dst) + limit
	for {
		if len(dst) == end {
			return dst, probeEnd(r, scratch)
		}
		if len(dst) == cap(dst) {
			dst = grow(dst, end)
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), end)])
		dst = dst[:len(dst)+n]
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, corruptError(err)
		}
	}
}

// probeEnd returns nil if r is at its end, ErrReadLimit if it yields more.
func probeEnd(r io.Reader, scratch *[1]byte) error {
	for {
		n, err := r.Read(scratch[:])
		switch {
		case n > 0:
			return ErrReadLimit
		case err == io.EOF:
			return nil
		case err != nil:
			return corruptError(err)
		}
	}
}

// grow returns dst with more capacity, at least doubling it (from 512)
// but not past most. It is called only with len(dst) < most.
func grow(dst []byte, most int) []byte {
	size := min(max(2*cap(dst), 512), most)
	buf := make([]byte, len(dst), size)
	copy(buf, dst)
	return buf
}

// corruptError reports a flate reader's failure as the peer's fault: a
// message that does not decompress fails the connection, with RFC 6455's
// code for a payload that does not match its type (1007).
func corruptError(err error) error {
	reason := "permessage-deflate: invalid compressed data"
	if errors.Is(err, io.ErrUnexpectedEOF) {
		reason = "permessage-deflate: truncated compressed data"
	}
	return &ProtocolError{Code: StatusInvalidFramePayload, Reason: reason}
}
